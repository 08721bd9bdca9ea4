package dev.snapshots.warmup;

import java.net.URI;
import java.time.Duration;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.metrics.Metric;
import org.apache.flink.metrics.MetricConfig;
import org.apache.flink.metrics.MetricGroup;
import org.apache.flink.metrics.reporter.MetricReporter;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Makes one file system on a thread of its own as the process starts. Flink keeps a file system per
 * scheme and authority for the process's life, so the checkpoint storage of every task later finds
 * it made (or waits on Flink's lock for this making to end, never for a second one). Made on a
 * task's thread instead, an S3 file system held every task of a TaskManager new to the job for
 * 3.5-4.2 s (docs/BENCHMARKS.md, recovery part by part). A failure here costs nothing but the head
 * start: the first task makes the file system as it always did, and reports what fails.
 */
final class FileSystemWarmUp implements MetricReporter {
    private static final Logger LOG = LoggerFactory.getLogger(FileSystemWarmUp.class);

    private final URI uri;

    FileSystemWarmUp(URI uri) {
        this.uri = uri;
    }

    @Override
    public void open(MetricConfig config) {
        Thread making = new Thread(this::make, "snapshots-filesystem-warmup");
        making.setDaemon(true);
        making.start();
    }

    void make() {
        long start = System.nanoTime();
        try {
            FileSystem fs = FileSystem.get(uri);
            LOG.info(
                    "Made the file system of {} ({}) in {} ms, before a task needs it",
                    uri,
                    fs.getClass().getName(),
                    Duration.ofNanos(System.nanoTime() - start).toMillis());
        } catch (Exception e) {
            LOG.warn(
                    "Could not make the file system of {} ahead of the tasks; the first task that"
                            + " needs it makes it: {}",
                    uri,
                    e.toString());
        }
    }

    @Override
    public void close() {}

    @Override
    public void notifyOfAddedMetric(Metric metric, String metricName, MetricGroup group) {}

    @Override
    public void notifyOfRemovedMetric(Metric metric, String metricName, MetricGroup group) {}
}
