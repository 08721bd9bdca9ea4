package dev.snapshots.testutils;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.flink.metrics.Counter;
import org.apache.flink.metrics.SimpleCounter;
import org.apache.flink.metrics.groups.UnregisteredMetricsGroup;

/** A metric group that keeps its counters, for tests that drive a committer directly. */
public final class CountingMetricGroup extends UnregisteredMetricsGroup {
    private final Map<String, Counter> counters = new ConcurrentHashMap<>();

    @Override
    public Counter counter(String name) {
        return counters.computeIfAbsent(name, n -> new SimpleCounter());
    }

    /** Counters the code brings itself (thread-safe ones, say) are kept too. */
    @Override
    public <C extends Counter> C counter(String name, C counter) {
        counters.putIfAbsent(name, counter);
        return counter;
    }

    public long count(String name) {
        return counters.containsKey(name) ? counters.get(name).getCount() : 0;
    }
}
