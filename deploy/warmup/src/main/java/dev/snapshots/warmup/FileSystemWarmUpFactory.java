package dev.snapshots.warmup;

import java.net.URI;
import java.util.Properties;
import org.apache.flink.metrics.reporter.MetricReporter;
import org.apache.flink.metrics.reporter.MetricReporterFactory;

/**
 * Turned on by {@code metrics.reporter.warmup.factory.class:
 * dev.snapshots.warmup.FileSystemWarmUpFactory} and {@code metrics.reporter.warmup.uri:
 * s3://bucket/} (the checkpoint directory will do: a file system serves its scheme and authority).
 *
 * <p>A metric reporter because it is the one extension Flink creates in every JobManager and
 * TaskManager as the process starts, after its file systems are configured and before any task
 * runs; it reports nothing.
 */
public final class FileSystemWarmUpFactory implements MetricReporterFactory {
    /** The reporter's own option: the file system to make. */
    static final String URI_OPTION = "uri";

    @Override
    public MetricReporter createMetricReporter(Properties properties) {
        String uri = properties.getProperty(URI_OPTION, "").trim();
        if (uri.isEmpty()) {
            throw new IllegalArgumentException(
                    "metrics.reporter.<name>."
                            + URI_OPTION
                            + " must name the file system to make as the process starts, e.g."
                            + " the checkpoint directory s3://bucket/checkpoints");
        }
        return new FileSystemWarmUp(URI.create(uri));
    }
}
