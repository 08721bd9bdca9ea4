package dev.snapshots.job;

import dev.snapshots.format.PartEncoding;
import dev.snapshots.key.ObjectKeys;
import dev.snapshots.key.PartKind;
import dev.snapshots.sink.Buckets;
import dev.snapshots.store.ObjectStore;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import org.apache.avro.generic.GenericRecord;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * What the job must publish for a generated stream, computed in plain Java from the generator's
 * truth (what each record is meant to be), without the parser, Flink or the sink.
 */
final class Reference {
    /** Snapshot rows per "windowStart/bucket", each row rendered by {@link #row}. */
    final Map<String, Set<String>> parts = new TreeMap<>();

    final Map<String, Long> deadLetterReasons = new TreeMap<>();
    long goodEvents;

    static Reference of(TelemetryGenerator generator, long records, long windowMillis, int buckets) {
        Reference ref = new Reference();
        Map<String, long[]> totals = new TreeMap<>(); // window|device -> count, sum, min, max, lastTs, last, bytes, maxLat
        for (long i = 0; i < records; i++) {
            TelemetryGenerator.Truth t = generator.truth(i);
            if (t.bad() != null) {
                ref.deadLetterReasons.merge(t.bad().expected.code(), 1L, Long::sum);
                continue;
            }
            if (t.late()) {
                ref.deadLetterReasons.merge(Rejection.LATE.code(), 1L, Long::sum);
                continue;
            }
            Event e = t.event();
            ref.goodEvents++;
            long window = e.timestampMillis - Math.floorMod(e.timestampMillis, windowMillis);
            long[] a = totals.computeIfAbsent(window + "|" + e.device,
                    k -> new long[] {0, 0, Long.MAX_VALUE, Long.MIN_VALUE, Long.MIN_VALUE, 0, 0, 0});
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
        totals.forEach((k, a) -> {
            long window = Long.parseLong(k.substring(0, k.indexOf('|')));
            String device = k.substring(k.indexOf('|') + 1);
            ref.parts.computeIfAbsent(window + "/" + Buckets.of(device, buckets), p -> new TreeSet<>())
                    .add(row(device, window, a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7]));
        });
        return ref;
    }

    /** What a store holds for one job version, in the reference's terms, for windows before {@code beforeWindow}. */
    static Reference published(ObjectStore store, int jobVersion, long beforeWindow) throws IOException {
        Reference out = new Reference();
        List<String> keys = new ArrayList<>();
        store.list("", o -> keys.add(o.key()));
        for (String key : keys) {
            ObjectKeys.PartKey p = ObjectKeys.parse(key).orElse(null);
            if (p == null || p.jobVersion() != jobVersion) {
                continue;
            }
            byte[] content = store.get(key).orElseThrow().content();
            if (p.kind() == PartKind.DEAD_LETTER) {
                PartEncoding.decode(p.kind(), content, DeadLetter.SCHEMA)
                        .forEach(r -> out.deadLetterReasons.merge(r.get("reason").toString(), 1L, Long::sum));
            } else if (p.windowStartMillis() < beforeWindow) {
                Set<String> rows = new TreeSet<>();
                for (GenericRecord r : PartEncoding.decode(content)) {
                    rows.add(row(r.get("device").toString(), (Long) r.get("window_start"), (Long) r.get("count"),
                            micros(r, "value_sum"), micros(r, "value_min"), micros(r, "value_max"),
                            (Long) r.get("last_event_time"), micros(r, "value_last"), (Long) r.get("bytes_total"),
                            micros(r, "latency_max_ms")));
                    out.goodEvents += (Long) r.get("count");
                }
                String part = p.windowStartMillis() + "/" + p.bucket();
                if (out.parts.put(part, rows) != null) {
                    throw new AssertionError("a second object for part " + part + ": " + key);
                }
            }
        }
        return out;
    }

    private static long micros(GenericRecord r, String field) {
        return Math.round((Double) r.get(field) * 1_000_000d);
    }

    static String row(String device, long window, long count, long sum, long min, long max, long lastTs, long last,
            long bytes, long maxLatency) {
        return String.join(",", device, Long.toString(window), Long.toString(count), Long.toString(sum), Long.toString(min),
                Long.toString(max), Long.toString(lastTs), Long.toString(last), Long.toString(bytes), Long.toString(maxLatency));
    }
}
