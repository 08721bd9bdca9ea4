package dev.snapshots.testutils;

import java.io.Serializable;
import java.time.Instant;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.ToIntFunction;
import org.apache.flink.connector.datagen.source.GeneratorFunction;
import org.apache.flink.runtime.state.KeyGroupRangeAssignment;

/**
 * A deterministic, bounded stream of readings spanning a number of windows, and the reference
 * result computed from it in plain Java, independently of Flink and of the sink. Event i lands at
 * {@code base + i * spacing + jitter(i)}: slightly out of order, never late.
 */
public final class Readings implements GeneratorFunction<Long, Reading>, Serializable {
    private static final long serialVersionUID = 1L;

    public static final long BASE_MILLIS = Instant.parse("2026-11-30T10:00:00Z").toEpochMilli();

    /** Below the pipelines' out-of-orderness bound, so no event is late. */
    public static final long MAX_JITTER_MILLIS = 1_000;

    private final int windows;
    private final long windowMillis;
    private final int eventsPerWindow;
    private final int keys;
    private final Set<Integer> alteredWindows;

    private Readings(
            int windows,
            long windowMillis,
            int eventsPerWindow,
            int keys,
            Set<Integer> alteredWindows) {
        this.windows = windows;
        this.windowMillis = windowMillis;
        this.eventsPerWindow = eventsPerWindow;
        this.keys = keys;
        this.alteredWindows = alteredWindows;
    }

    public static Readings of(int windows, long windowMillis, int eventsPerWindow, int keys) {
        return new Readings(windows, windowMillis, eventsPerWindow, keys, Set.of());
    }

    /** The same stream, but every value in these windows (by index) is one higher. */
    public Readings alteringWindows(Integer... windowIndexes) {
        return new Readings(windows, windowMillis, eventsPerWindow, keys, Set.of(windowIndexes));
    }

    public long count() {
        return (long) windows * eventsPerWindow;
    }

    public int windows() {
        return windows;
    }

    public long windowMillis() {
        return windowMillis;
    }

    @Override
    public Reading map(Long index) {
        long i = index;
        long h = mix(i);
        String key =
                String.format(
                        Locale.ROOT,
                        "dev-%03d",
                        Math.floorMod(h, keys)); // the same keys in every JVM, as real input is
        long ts =
                BASE_MILLIS
                        + i * (windowMillis / eventsPerWindow)
                        + Math.floorMod(h >>> 17, MAX_JITTER_MILLIS);
        int window = (int) ((ts - BASE_MILLIS) / windowMillis);
        long value = Math.floorMod(h >>> 33, 1000) + (alteredWindows.contains(window) ? 1 : 0);
        return new Reading(key, ts, value);
    }

    /**
     * Per (window, bucket): the rows a correct pipeline publishes, computed without Flink, with
     * key-group bucketing over the test job's max parallelism (128): a bucket is B's share of the
     * key groups, each key in the group its hash code falls in.
     */
    public Map<PartRef, Set<KeyTotal>> reference(int bucketCount) {
        return reference(keyGroupBuckets(bucketCount, 128));
    }

    /** Bucket b holds key groups [b x maxParallelism / B, (b + 1) x maxParallelism / B). */
    public static ToIntFunction<String> keyGroupBuckets(int bucketCount, int maxParallelism) {
        return key ->
                KeyGroupRangeAssignment.assignToKeyGroup(key, maxParallelism)
                        / (maxParallelism / bucketCount);
    }

    /** As {@link #reference(int)}, with the given bucket of each key. */
    public Map<PartRef, Set<KeyTotal>> reference(ToIntFunction<String> bucketOf) {
        Map<PartRef, Map<String, KeyTotal>> totals = new TreeMap<>();
        for (long i = 0; i < count(); i++) {
            Reading r = map(i);
            long windowStart = r.timestampMillis - Math.floorMod(r.timestampMillis, windowMillis);
            KeyTotal t =
                    totals.computeIfAbsent(
                                    new PartRef(windowStart, bucketOf.applyAsInt(r.key)),
                                    p -> new HashMap<>())
                            .computeIfAbsent(r.key, k -> new KeyTotal(k, windowStart, 0, 0));
            t.count++;
            t.sum += r.value;
        }
        Map<PartRef, Set<KeyTotal>> out = new TreeMap<>();
        totals.forEach((part, byKey) -> out.put(part, new HashSet<>(byKey.values())));
        return out;
    }

    private static long mix(long x) {
        x = (x ^ (x >>> 30)) * 0xbf58476d1ce4e5b9L;
        x = (x ^ (x >>> 27)) * 0x94d049bb133111ebL;
        return x ^ (x >>> 31);
    }
}
