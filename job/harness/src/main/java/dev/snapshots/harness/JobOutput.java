package dev.snapshots.harness;

import dev.snapshots.cli.StoreScan;
import dev.snapshots.format.DeadLetterRows;
import dev.snapshots.format.PartEncoding;
import dev.snapshots.job.Sources;
import dev.snapshots.job.config.JobConfig;
import dev.snapshots.job.ingest.Event;
import dev.snapshots.job.ingest.Rejection;
import dev.snapshots.job.source.TelemetryGenerator;
import dev.snapshots.key.ObjectKeys;
import dev.snapshots.key.PartKind;
import dev.snapshots.store.ObjectStore;
import java.io.IOException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.ToIntFunction;
import org.apache.avro.generic.GenericRecord;
import org.apache.flink.annotation.Internal;

/**
 * What the job must publish for a generated stream, computed in plain Java from the generator's
 * truth (what each record is meant to be), without the parser, Flink or the sink; and the same
 * figures read back from a store, so the two can be compared ({@link #differences}).
 */
@Internal
public final class JobOutput {
    /** Snapshot rows per "windowStart/bucket", each row rendered by {@link #row}. */
    public final Map<String, Set<String>> parts = new TreeMap<>();

    /** Published only: how many objects hold each part (one, or the promise is broken). */
    public final Map<String, Integer> objects = new TreeMap<>();

    public final Map<String, Long> deadLetterReasons = new TreeMap<>();
    public long goodEvents;

    /** One generated stream and which of its records, [from, to), were produced. */
    public record Lane(TelemetryGenerator generator, long from, long to) {}

    /** The reference of the job's own generated source, as {@code config} sets it up. */
    public static JobOutput expected(JobConfig config) {
        return expected(
                Sources.generatorFunction(config),
                Sources.generatorCount(config),
                config.windowLength().toMillis(),
                config::bucketOf);
    }

    /**
     * @param bucketOf the bucket of a device's rows ({@link JobConfig#bucketOf}): which rows share
     *     a part is the job's choice, not the reference's
     */
    public static JobOutput expected(
            TelemetryGenerator generator,
            long records,
            long windowMillis,
            ToIntFunction<String> bucketOf) {
        return expected(List.of(new Lane(generator, 0, records)), windowMillis, bucketOf);
    }

    /**
     * The reference of several streams read together, e.g. one per Kinesis shard: each record's
     * truth is its own stream's.
     */
    public static JobOutput expected(
            List<Lane> lanes, long windowMillis, ToIntFunction<String> bucketOf) {
        JobOutput ref = new JobOutput();
        List<Event> good = new ArrayList<>();
        for (Lane lane : lanes) {
            for (long i = lane.from(); i < lane.to(); i++) {
                TelemetryGenerator.Truth t = lane.generator().truth(i);
                if (t.bad() != null) {
                    ref.deadLetterReasons.merge(t.bad().expected.code(), 1L, Long::sum);
                } else if (t.late()) {
                    ref.deadLetterReasons.merge(Rejection.LATE.code(), 1L, Long::sum);
                } else {
                    good.add(t.event());
                }
            }
        }
        ref.aggregate(good, windowMillis, bucketOf);
        return ref;
    }

    /**
     * The reference of events read back from where a producer put them, none of them late or
     * malformed (a live producer's, e.g. docker-compose's): their windows' rows, per bucket.
     */
    public static JobOutput expected(
            Iterable<Event> events, long windowMillis, ToIntFunction<String> bucketOf) {
        JobOutput ref = new JobOutput();
        ref.aggregate(events, windowMillis, bucketOf);
        return ref;
    }

    private void aggregate(
            Iterable<Event> events, long windowMillis, ToIntFunction<String> bucketOf) {
        // window|device -> count, sum, min, max, lastTs, last, bytes, maxLat
        Map<String, long[]> totals = new TreeMap<>();
        for (Event e : events) {
            goodEvents++;
            long window = e.timestampMillis - Math.floorMod(e.timestampMillis, windowMillis);
            long[] a =
                    totals.computeIfAbsent(
                            window + "|" + e.device,
                            k ->
                                    new long[] {
                                        0,
                                        0,
                                        Long.MAX_VALUE,
                                        Long.MIN_VALUE,
                                        Long.MIN_VALUE,
                                        0,
                                        0,
                                        0
                                    });
            a[0]++;
            a[1] += e.valueMicros;
            a[2] = Math.min(a[2], e.valueMicros);
            a[3] = Math.max(a[3], e.valueMicros);
            if (e.timestampMillis > a[4] || (e.timestampMillis == a[4] && e.valueMicros > a[5])) {
                a[4] = e.timestampMillis;
                a[5] = e.valueMicros;
            }
            a[6] += e.bytes;
            a[7] = Math.max(a[7], e.latencyMicros);
        }
        totals.forEach(
                (k, a) -> {
                    long window = Long.parseLong(k.substring(0, k.indexOf('|')));
                    String device = k.substring(k.indexOf('|') + 1);
                    parts.computeIfAbsent(
                                    window + "/" + bucketOf.applyAsInt(device),
                                    p -> new TreeSet<>())
                            .add(
                                    row(
                                            device, window, a[0], a[1], a[2], a[3], a[4], a[5],
                                            a[6], a[7]));
                });
    }

    /**
     * What a store holds for one job version, in the reference's terms, for windows before {@code
     * beforeWindow}.
     */
    public static JobOutput published(ObjectStore store, int jobVersion, long beforeWindow)
            throws IOException {
        JobOutput out = new JobOutput();
        StoreScan scan = StoreScan.all(store, Optional.of(jobVersion));
        for (Map.Entry<StoreScan.Version, Map<Integer, Map<Long, StoreScan.Window>>> v :
                scan.versions.entrySet()) {
            for (Map<Long, StoreScan.Window> windows : v.getValue().values()) {
                for (StoreScan.Window w : windows.values()) {
                    for (ObjectKeys.PartKey p : w.allParts()) {
                        if (p.kind() == PartKind.DEAD_LETTER
                                || p.windowStartMillis() < beforeWindow) {
                            out.add(p, store.get(p.key()).orElseThrow().content());
                        }
                    }
                }
            }
        }
        return out;
    }

    private void add(ObjectKeys.PartKey p, byte[] content) throws IOException {
        if (p.kind() == PartKind.DEAD_LETTER) {
            PartEncoding.decode(p.kind(), content, DeadLetterRows.SCHEMA)
                    .forEach(
                            r ->
                                    deadLetterReasons.merge(
                                            r.get("reason").toString(), 1L, Long::sum));
            return;
        }
        Set<String> rows = new TreeSet<>();
        for (GenericRecord r : PartEncoding.decode(content)) {
            rows.add(
                    row(
                            r.get("device").toString(),
                            (Long) r.get("window_start"),
                            (Long) r.get("count"),
                            micros(r, "value_sum"),
                            micros(r, "value_min"),
                            micros(r, "value_max"),
                            (Long) r.get("last_event_time"),
                            micros(r, "value_last"),
                            (Long) r.get("bytes_total"),
                            micros(r, "latency_max_ms")));
            goodEvents += (Long) r.get("count");
        }
        String part = p.windowStartMillis() + "/" + p.bucket();
        parts.merge(
                part,
                rows,
                (a, b) -> {
                    a.addAll(b);
                    return a;
                });
        objects.merge(part, 1, Integer::sum);
    }

    /** The rows of each window before {@code beforeWindow}, sorted: a window as readers see it. */
    public Map<Long, List<String>> rowsByWindow(long beforeWindow) {
        Map<Long, List<String>> windows = new TreeMap<>();
        parts.forEach(
                (part, rows) -> {
                    long window = Long.parseLong(part.substring(0, part.indexOf('/')));
                    if (window < beforeWindow) {
                        windows.computeIfAbsent(window, w -> new ArrayList<>()).addAll(rows);
                    }
                });
        windows.values().forEach(Collections::sort);
        return windows;
    }

    /** Every way this (published) output differs from {@code expected}, one readable line each. */
    public List<String> differences(JobOutput expected) {
        List<String> out = new ArrayList<>();
        objects.forEach(
                (part, n) -> {
                    if (n > 1) {
                        out.add("part " + name(part) + " is held by " + n + " objects, not one");
                    }
                });
        expected.parts.forEach(
                (part, rows) -> {
                    Set<String> actual = parts.get(part);
                    if (actual == null) {
                        out.add(
                                "part "
                                        + name(part)
                                        + " is missing ("
                                        + rows.size()
                                        + " rows expected)");
                    } else if (!actual.equals(rows)) {
                        Set<String> extra = new TreeSet<>(actual);
                        extra.removeAll(rows);
                        Set<String> lacking = new TreeSet<>(rows);
                        lacking.removeAll(actual);
                        out.add(
                                "part "
                                        + name(part)
                                        + " rows differ from the reference: "
                                        + lacking.size()
                                        + " expected rows absent, "
                                        + extra.size()
                                        + " rows not expected"
                                        + (lacking.isEmpty()
                                                ? ""
                                                : ", e.g. expected " + lacking.iterator().next()));
                    }
                });
        parts.keySet().stream()
                .filter(p -> !expected.parts.containsKey(p))
                .forEach(
                        p ->
                                out.add(
                                        "part "
                                                + name(p)
                                                + " was published but the reference has no such part"));
        if (!deadLetterReasons.equals(expected.deadLetterReasons)) {
            out.add(
                    "dead letters by reason "
                            + deadLetterReasons
                            + ", injected "
                            + expected.deadLetterReasons);
        }
        return out;
    }

    private static String name(String part) {
        int slash = part.indexOf('/');
        return Instant.ofEpochMilli(Long.parseLong(part.substring(0, slash)))
                + " bucket "
                + part.substring(slash + 1);
    }

    private static long micros(GenericRecord r, String field) {
        return Math.round((Double) r.get(field) * 1_000_000d);
    }

    /** A row as the reference renders it; also for readers of other copies (the Iceberg table). */
    public static String row(
            String device,
            long window,
            long count,
            long sum,
            long min,
            long max,
            long lastTs,
            long last,
            long bytes,
            long maxLatency) {
        return String.join(
                ",",
                device,
                Long.toString(window),
                Long.toString(count),
                Long.toString(sum),
                Long.toString(min),
                Long.toString(max),
                Long.toString(lastTs),
                Long.toString(last),
                Long.toString(bytes),
                Long.toString(maxLatency));
    }
}
