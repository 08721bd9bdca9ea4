package dev.snapshots.job.sql;

import static org.assertj.core.api.Assertions.assertThat;

import dev.snapshots.format.PartEncoding;
import dev.snapshots.harness.testutils.ObjectHashes;
import dev.snapshots.key.ObjectKeys;
import dev.snapshots.key.PartKind;
import dev.snapshots.progress.CompletionPointer;
import dev.snapshots.sink.Buckets;
import dev.snapshots.store.ObjectStore;
import dev.snapshots.store.StoreSpec;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.apache.avro.generic.GenericRecord;

/**
 * The orders example as the tests run it: the script with its events and store replaced, and its
 * store read back against {@link OrdersReference}.
 */
final class OrdersFixture {
    static final Path EXAMPLE = Path.of(System.getProperty("snapshots.root"), "examples", "orders");
    static final int BUCKETS = 4;

    /**
     * Parallelism 2, checkpoints every 0.5 s, and a defect fails the test after six restarts
     * instead of restarting it forever. The restarts' delays add up to 6.2 s, past the local
     * cluster's heartbeat timeout (4 s): a SIGKILLed TaskManager's slots are offered until it is
     * noticed dead, and each restart deployed to them fails (three fixed 200 ms attempts were used
     * up that way, and the job FAILED).
     */
    static final String SETTINGS =
            String.join(
                    "\n",
                    "SET 'parallelism.default' = '2';",
                    "SET 'execution.checkpointing.interval' = '500 ms';",
                    "SET 'restart-strategy.type' = 'exponential-delay';",
                    "SET 'restart-strategy.exponential-delay.initial-backoff' = '200 ms';",
                    "SET 'restart-strategy.exponential-delay.attempts-before-reset-backoff' = '6';\n");

    private OrdersFixture() {}

    /**
     * The example with its events and store replaced, at parallelism 2, checkpoints every 0.5 s.
     */
    static String script(StoreSpec store, Path events, int jobVersion) throws Exception {
        String sql = Files.readString(EXAMPLE.resolve("orders.sql"));
        sql = option(sql, "path", events.toString());
        sql = option(sql, "store", store.uri().toString());
        sql = option(sql, "job-version", Integer.toString(jobVersion));
        if (store.endpoint().isPresent()) {
            sql =
                    sql.replace(
                            "'pipeline' =",
                            "'store.endpoint' = '" + store.endpoint().get() + "',\n  'pipeline' =");
        }
        return SETTINGS + sql;
    }

    /**
     * The events' directory watched for new files: the source never ends. At parallelism 1: a
     * reader given no file would hold the watermark back for good (Flink marks no reader idle
     * unless told to with 'table.exec.source.idle-timeout').
     */
    static String watching(String sql) {
        return sql.replace(
                        "'format' = 'json'",
                        "'format' = 'json',\n  'source.monitor-interval' = '200 ms'")
                + "\nSET 'parallelism.default' = '1';\n";
    }

    static String option(String sql, String key, String value) {
        String quoted = "'" + key + "' = '";
        int at = sql.indexOf(quoted);
        assertThat(at).as("the example sets %s", key).isNotNegative();
        int end = sql.indexOf('\'', at + quoted.length());
        return sql.substring(0, at + quoted.length()) + value + sql.substring(end);
    }

    /** Until the version's completion pointer covers {@code hours} hours. */
    static void awaitPointer(StoreSpec spec, int jobVersion, int hours) throws Exception {
        long target = OrderEvents.START.toEpochMilli() + hours * OrdersReference.HOUR;
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(2);
        try (ObjectStore store = spec.open()) {
            while (CompletionPointer.read(store, PartKind.SNAPSHOT, "orders", jobVersion).orElse(0L)
                    < target) {
                assertThat(System.nanoTime())
                        .as("v%s's pointer reached %s hours", jobVersion, hours)
                        .isLessThan(deadline);
                Thread.sleep(100);
            }
        }
    }

    static Map<Long, List<String>> reference(int fromHour, int toHour) throws Exception {
        return OrdersReference.of(OrderEvents.lines(fromHour, toHour));
    }

    /** The windows of hours [from, to). */
    static Map<Long, List<String>> windows(Map<Long, List<String>> all, int from, int to) {
        long start = OrderEvents.START.toEpochMilli();
        return new TreeMap<>(
                ((TreeMap<Long, List<String>>) all)
                        .subMap(
                                start + from * OrdersReference.HOUR,
                                start + to * OrdersReference.HOUR));
    }

    /**
     * Every part of the version read back: one object per (window, bucket), each row in the bucket
     * of its customer, in customer order, and the rows of each window equal to the reference's.
     *
     * @return the parts
     */
    static int assertOnePartPerWindowAndBucket(
            StoreSpec spec, int jobVersion, Map<Long, List<String>> expected) throws Exception {
        return assertOnePartPerWindowAndBucket(
                spec, "orders", jobVersion, "customer", OrdersReference::row, expected);
    }

    /**
     * As {@link #assertOnePartPerWindowAndBucket(StoreSpec, int, Map)}, for any pipeline: its rows
     * bucketed and sorted by the column {@code key}, each compared as {@code row} spells it.
     */
    static int assertOnePartPerWindowAndBucket(
            StoreSpec spec,
            String pipeline,
            int jobVersion,
            String key,
            Function<GenericRecord, String> row,
            Map<Long, List<String>> expected)
            throws Exception {
        Map<String, Integer> objects = new TreeMap<>();
        Map<Long, List<String>> published = new TreeMap<>();
        try (ObjectStore store = spec.open()) {
            List<String> keys = new ArrayList<>();
            store.list(ObjectKeys.versionPrefix(pipeline, jobVersion), o -> keys.add(o.key()));
            for (String object : keys) {
                ObjectKeys.PartKey part = ObjectKeys.parse(object).orElse(null);
                if (part == null || part.kind() != PartKind.SNAPSHOT) {
                    continue;
                }
                objects.merge(part.windowStartMillis() + "/" + part.bucket(), 1, Integer::sum);
                List<String> rowKeys = new ArrayList<>();
                for (GenericRecord r :
                        PartEncoding.decode(store.get(object).orElseThrow().content())) {
                    String rowKey = r.get(key).toString();
                    assertThat(Buckets.of(rowKey, BUCKETS)).as(object).isEqualTo(part.bucket());
                    rowKeys.add(rowKey);
                    published
                            .computeIfAbsent(part.windowStartMillis(), w -> new ArrayList<>())
                            .add(row.apply(r));
                }
                assertThat(rowKeys).as("%s in primary-key order", object).isSorted();
            }
        }
        published.values().forEach(rows -> rows.sort(null));
        assertThat(objects).as("objects per part").allSatisfy((p, n) -> assertThat(n).isOne());
        assertThat(published).isEqualTo(expected);
        return objects.size();
    }

    static Map<String, String> partHashes(StoreSpec spec, int jobVersion) throws Exception {
        return partHashes(spec, "orders", jobVersion);
    }

    /** A version's parts and manifests, by key: its progress entries left out. */
    static Map<String, String> partHashes(StoreSpec spec, String pipeline, int jobVersion)
            throws Exception {
        Map<String, String> parts =
                new TreeMap<>(hashes(spec, ObjectKeys.versionPrefix(pipeline, jobVersion)));
        parts.keySet().removeIf(k -> k.contains("/_progress"));
        return parts;
    }

    static Map<String, String> hashes(StoreSpec spec, String prefix) throws Exception {
        try (ObjectStore store = spec.open()) {
            return ObjectHashes.of(store, prefix);
        }
    }
}
