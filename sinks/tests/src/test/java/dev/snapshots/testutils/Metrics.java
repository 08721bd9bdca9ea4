package dev.snapshots.testutils;

import org.apache.flink.api.common.JobID;
import org.apache.flink.metrics.Counter;
import org.apache.flink.metrics.Gauge;
import org.apache.flink.runtime.testutils.InMemoryReporter;

/**
 * Sums a counter over every subtask and every attempt of a job, as the in-memory reporter retained
 * it.
 */
public final class Metrics {
    private Metrics() {}

    public static long sum(InMemoryReporter reporter, JobID job, String counter) {
        // By group, not by identifier: a restarted task registers the same identifiers again.
        return reporter.getMetricsByGroup().entrySet().stream()
                .filter(g -> job.toString().equals(g.getKey().getAllVariables().get("<job_id>")))
                .map(g -> g.getValue().get(counter))
                .filter(m -> m instanceof Counter)
                .mapToLong(m -> ((Counter) m).getCount())
                .sum();
    }

    /** The highest value a numeric gauge of the job reported, e.g. {@code numRestarts}. */
    public static long gaugeMax(InMemoryReporter reporter, JobID job, String gauge) {
        return reporter.getMetricsByGroup().entrySet().stream()
                .filter(g -> job.toString().equals(g.getKey().getAllVariables().get("<job_id>")))
                .map(g -> g.getValue().get(gauge))
                .filter(m -> m instanceof Gauge && ((Gauge<?>) m).getValue() instanceof Number)
                .mapToLong(m -> ((Number) ((Gauge<?>) m).getValue()).longValue())
                .max()
                .orElse(0);
    }
}
