package dev.snapshots.harness.bench;

import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ConcurrentHashMap;
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
 * histogram, the records each subtask of the part-assembling operator received and the job's last
 * checkpoint size. Metrics are unregistered when the job ends, so their last values are taken then.
 */
@Internal
public final class BenchMetrics implements MetricReporter {
    /** Every commit duration (ms) of the snapshot committers, per subtask, taken at the end. */
    static final Map<String, long[]> COMMITS = new ConcurrentHashMap<>();

    /** Records into the part-assembling operator, per subtask index. */
    static final Map<String, Long> ASSEMBLED = new ConcurrentHashMap<>();

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
        if (name.equals("commitMillis")
                && metric instanceof Histogram
                && v.getOrDefault("<operator_name>", "").startsWith("snapshots")) {
            live.put(metric, "commit/" + subtask);
        } else if (name.equals("lastCheckpointSize") && metric instanceof Gauge<?> g) {
            lastCheckpointSize = g;
        } else if (name.equals("numRecordsIn")
                && metric instanceof Counter
                && v.getOrDefault("<operator_name>", "").startsWith("snapshot-parts")) {
            live.put(metric, "assembled/" + subtask);
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
        } else {
            ASSEMBLED.merge(
                    key.substring("assembled/".length()), ((Counter) metric).getCount(), Long::sum);
        }
    }
}
