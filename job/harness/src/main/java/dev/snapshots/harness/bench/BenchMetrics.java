package dev.snapshots.harness.bench;

import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.flink.annotation.Internal;
import org.apache.flink.metrics.Counter;
import org.apache.flink.metrics.Gauge;
import org.apache.flink.metrics.Histogram;
import org.apache.flink.metrics.Metric;
import org.apache.flink.metrics.MetricConfig;
import org.apache.flink.metrics.MetricGroup;
import org.apache.flink.metrics.reporter.MetricReporter;
import org.apache.flink.metrics.reporter.MetricReporterFactory;

/**
 * Keeps what the benchmark reads of a run's metrics in this JVM: the committer's commit-time
 * histogram, the rows each subtask of the sink's writer received and the job's last checkpoint
 * size. Metrics are unregistered when the job ends, so their last values are taken then.
 */
@Internal
public final class BenchMetrics implements MetricReporter {
    /**
     * Every commit duration (ms) of the snapshot committers, and of the pointer updates within
     * them, by "commitMillis/" or "pointerMillis/" and subtask, taken at the end.
     */
    static final Map<String, long[]> COMMITS = new ConcurrentHashMap<>();

    /** Rows into the sink's writer, per subtask index: every sink gets the same rows. */
    static final Map<String, Long> WRITTEN = new ConcurrentHashMap<>();

    /**
     * Events the window operator found late although their source did not: a benchmark that drops
     * its input measures nothing, so the report shows it.
     */
    static final AtomicLong LATE_AT_WINDOW = new AtomicLong();

    /** The job's size of its last checkpoint (bytes), read while the run goes. */
    static volatile Gauge<?> lastCheckpointSize;

    private final Map<Metric, String> live = new ConcurrentHashMap<>();

    /** Registered through {@code metrics.reporter.bench.factory.class}. */
    public static final class Factory implements MetricReporterFactory {
        @Override
        public MetricReporter createMetricReporter(Properties properties) {
            return new BenchMetrics();
        }
    }

    @Override
    public void open(MetricConfig config) {}

    @Override
    public void close() {}

    @Override
    public void notifyOfAddedMetric(Metric metric, String name, MetricGroup group) {
        Map<String, String> v = group.getAllVariables();
        String subtask = v.getOrDefault("<subtask_index>", "?");
        if ((name.equals("commitMillis") || name.equals("pointerMillis"))
                && metric instanceof Histogram
                && v.getOrDefault("<operator_name>", "").startsWith("snapshots")) {
            live.put(metric, name + "/" + subtask);
        } else if (name.equals("lastCheckpointSize") && metric instanceof Gauge<?> g) {
            lastCheckpointSize = g;
        } else if (name.equals("numRecordsIn")
                && metric instanceof Counter
                && List.of("snapshots: Writer", "filesink: Writer", "discarding: Writer")
                        .contains(v.getOrDefault("<operator_name>", ""))) {
            live.put(metric, "written/" + subtask);
        } else if (name.equals("lateAtWindow") && metric instanceof Counter) {
            live.put(metric, "late/" + subtask);
        }
    }

    @Override
    public void notifyOfRemovedMetric(Metric metric, String name, MetricGroup group) {
        String key = live.remove(metric);
        if (key == null) {
            return;
        }
        if (metric instanceof Histogram h) {
            COMMITS.put(key, h.getStatistics().getValues());
        } else if (key.startsWith("late/")) {
            LATE_AT_WINDOW.addAndGet(((Counter) metric).getCount());
        } else {
            WRITTEN.merge(
                    key.substring("written/".length()), ((Counter) metric).getCount(), Long::sum);
        }
    }
}
