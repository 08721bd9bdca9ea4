package dev.snapshots.testutils;

import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.flink.metrics.Counter;
import org.apache.flink.metrics.Gauge;
import org.apache.flink.metrics.Histogram;
import org.apache.flink.metrics.SimpleCounter;
import org.apache.flink.metrics.groups.UnregisteredMetricsGroup;

/**
 * A metric group that keeps its counters, and the names of its gauges and histograms, for tests
 * that drive a committer directly.
 */
public final class CountingMetricGroup extends UnregisteredMetricsGroup {
    private final Map<String, Counter> counters = new ConcurrentHashMap<>();
    private final Set<String> others = ConcurrentHashMap.newKeySet();

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

    @Override
    public <T, G extends Gauge<T>> G gauge(String name, G gauge) {
        others.add(name);
        return gauge;
    }

    @Override
    public <H extends Histogram> H histogram(String name, H histogram) {
        others.add(name);
        return histogram;
    }

    /** Every metric registered so far, by name. */
    public Set<String> names() {
        Set<String> names = new TreeSet<>(counters.keySet());
        names.addAll(others);
        return names;
    }

    public long count(String name) {
        return counters.containsKey(name) ? counters.get(name).getCount() : 0;
    }
}
