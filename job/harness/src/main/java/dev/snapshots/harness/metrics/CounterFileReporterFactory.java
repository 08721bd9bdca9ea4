package dev.snapshots.harness.metrics;

import java.nio.file.Path;
import java.util.Properties;
import org.apache.flink.annotation.Internal;
import org.apache.flink.metrics.reporter.MetricReporter;
import org.apache.flink.metrics.reporter.MetricReporterFactory;

/** Creates the {@link CounterFileReporter} named by {@code metrics.reporter.NAME.factory.class}. */
@Internal
public final class CounterFileReporterFactory implements MetricReporterFactory {
    /** The reporter's own option, {@code metrics.reporter.NAME.directory}: where the files go. */
    static final String DIRECTORY = "directory";

    @Override
    public MetricReporter createMetricReporter(Properties properties) {
        String directory = properties.getProperty(DIRECTORY, "");
        if (directory.isBlank()) {
            throw new IllegalArgumentException(
                    "metrics.reporter.<name>."
                            + DIRECTORY
                            + " must name the directory the counter files are written to");
        }
        return new CounterFileReporter(Path.of(directory));
    }
}
