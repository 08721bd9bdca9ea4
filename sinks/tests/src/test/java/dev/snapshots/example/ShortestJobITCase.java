package dev.snapshots.example;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.snapshots.example.ShortestJob.Order;
import dev.snapshots.format.PartEncoding;
import dev.snapshots.format.PojoRowFormat;
import dev.snapshots.key.ObjectKeys;
import dev.snapshots.key.ObjectKeys.PartKey;
import dev.snapshots.key.PartMetadata;
import dev.snapshots.sink.CanonicalSnapshotSink;
import dev.snapshots.store.ObjectStore;
import dev.snapshots.store.StoreSpec;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.stream.Collectors;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericRecord;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.runtime.state.KeyGroupRangeAssignment;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.windowing.assigners.TumblingEventTimeWindows;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The README's shortest job ({@link ShortestJob}), run as written on a MiniCluster into a local
 * store, judged on what its user cares about: one object per (hour, bucket), the rows a plain-Java
 * reference computes from the orders, and a second run that changes nothing.
 */
class ShortestJobITCase {
    @RegisterExtension
    static final MiniClusterExtension CLUSTER =
            new MiniClusterExtension(
                    new MiniClusterResourceConfiguration.Builder()
                            .setNumberTaskManagers(1)
                            .setNumberSlotsPerTaskManager(2)
                            .build());

    private static final long HOUR = 3_600_000L;
    private static final long START = 1_796_083_200_000L; // 2026-12-01T00:00Z
    private static final int BUCKETS = 4; // as the README's job sets it
    private static final List<Order> ORDERS = orders(new Random(23), 3_000, 6);

    @TempDir Path tmp;

    /** A row as a reader sees it, with where it was found (or, in the reference, belongs). */
    record Row(long hour, int bucket, String customer, long orders, BigDecimal revenue) {}

    @Test
    void theReadmesJobPublishesTheReferenceRowsOnceAndASecondRunChangesNothing() throws Exception {
        StoreSpec store = StoreSpec.local(tmp);
        run(store);
        try (ObjectStore objects = store.open()) {
            Map<String, String> parts = fingerprints(objects);
            List<Row> rows = rows(objects, parts.keySet());

            assertThat(parts.keySet().stream().map(ShortestJobITCase::partOf))
                    .as("one object per (hour, bucket) with rows")
                    .doesNotHaveDuplicates()
                    .containsExactlyInAnyOrderElementsOf(
                            reference().stream()
                                    .map(r -> r.hour() + "/" + r.bucket())
                                    .distinct()
                                    .toList());
            assertThat(rows).containsExactlyInAnyOrderElementsOf(reference());

            run(store);
            assertThat(fingerprints(objects))
                    .as("the second run's parts collapsed into the first's")
                    .isEqualTo(parts);
            List<String> divergences = new ArrayList<>();
            objects.list(ObjectKeys.DIVERGENCE_PREFIX, o -> divergences.add(o.key()));
            assertThat(divergences).isEmpty();
        }
    }

    @Test
    void theReadmeShowsExactlyTheJobThisTestRuns() throws Exception {
        Path root = Path.of(System.getProperty("snapshots.root"));
        String source =
                Files.readString(
                        root.resolve(
                                "sinks/tests/src/test/java/dev/snapshots/example/ShortestJob.java"));
        String job =
                source.substring(
                        source.indexOf('\n', source.indexOf("// README:start")) + 1,
                        source.lastIndexOf('\n', source.indexOf("// README:end")) + 1);

        String readme = Files.readString(root.resolve("README.md"));
        int block = readme.indexOf("```java\n", readme.indexOf("### The shortest job")) + 8;

        assertThat(readme.substring(block, readme.indexOf("```", block)))
                .isEqualTo(job.replaceAll("(?m)^    ", ""));
    }

    @Test
    void aWindowKeyedByAnythingButTheFormatsKeyIsRefusedBeforeTheJobStarts() {
        PojoRowFormat<ShortestJob.CustomerHour> format =
                PojoRowFormat.of(ShortestJob.CustomerHour.class, "customer");
        CanonicalSnapshotSink<ShortestJob.CustomerHour> sink =
                CanonicalSnapshotSink.<ShortestJob.CustomerHour>builder()
                        .pipeline("orders")
                        .jobVersion(1)
                        .bucketCount(BUCKETS)
                        .windowLength(Duration.ofHours(1))
                        .store(StoreSpec.local(tmp))
                        .rowFormat(format)
                        .build();
        DataStream<ShortestJob.CustomerHour> keyedByHand =
                orders(StreamExecutionEnvironment.getExecutionEnvironment())
                        .keyBy(o -> o.customer)
                        .window(TumblingEventTimeWindows.of(Duration.ofHours(1)))
                        .aggregate(new ShortestJob.Revenue());

        assertThatThrownBy(() -> sink.writeWindows(keyedByHand))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("not by the format's key fields [customer]")
                .hasMessageContaining("format.keySelector(");
    }

    private static void run(StoreSpec store) throws Exception {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setParallelism(2);
        env.enableCheckpointing(100);
        ShortestJob.snapshots(orders(env), store);
        env.execute("shortest job");
    }

    private static DataStream<Order> orders(StreamExecutionEnvironment env) {
        return env.fromData(ORDERS)
                .assignTimestampsAndWatermarks(
                        WatermarkStrategy.<Order>forMonotonousTimestamps()
                                .withTimestampAssigner((o, t) -> o.timeMillis))
                .setParallelism(1);
    }

    /** Orders in time order over {@code hours}, from customers with ASCII and other names. */
    private static List<Order> orders(Random random, int count, int hours) {
        List<String> customers = new ArrayList<>(List.of("Zoë", "ärla", "Ωmega", "c 1"));
        for (int c = 0; c < 36; c++) {
            customers.add("c-" + c);
        }
        List<Order> orders = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            Order order = new Order();
            order.customer = customers.get(random.nextInt(customers.size()));
            order.timeMillis = START + (long) i * hours * HOUR / count;
            order.amount = BigDecimal.valueOf(random.nextInt(1_000_000), 2);
            orders.add(order);
        }
        return orders;
    }

    /**
     * Per hour and customer: the orders and their sum, in the bucket of the customer's key group
     * (B's share of Flink's 128 key groups).
     */
    private static List<Row> reference() {
        Map<List<Object>, List<Order>> byHourAndCustomer =
                new TreeMap<>(
                        Comparator.comparing((List<Object> k) -> (Long) k.get(0))
                                .thenComparing(k -> (String) k.get(1)));
        for (Order o : ORDERS) {
            byHourAndCustomer
                    .computeIfAbsent(
                            List.of(o.timeMillis - o.timeMillis % HOUR, o.customer),
                            k -> new ArrayList<>())
                    .add(o);
        }
        return byHourAndCustomer.entrySet().stream()
                .map(
                        e -> {
                            String customer = (String) e.getKey().get(1);
                            return new Row(
                                    (Long) e.getKey().get(0),
                                    KeyGroupRangeAssignment.assignToKeyGroup(customer, 128)
                                            * BUCKETS
                                            / 128,
                                    customer,
                                    e.getValue().size(),
                                    e.getValue().stream()
                                            .map(o -> o.amount)
                                            .reduce(BigDecimal.ZERO, BigDecimal::add));
                        })
                .toList();
    }

    /** Every Parquet part of the job's version, with the fingerprint it was published with. */
    private static Map<String, String> fingerprints(ObjectStore objects) throws Exception {
        Map<String, String> parts = new TreeMap<>();
        List<String> keys = new ArrayList<>();
        objects.list(ObjectKeys.versionPrefix("orders", 1), o -> keys.add(o.key()));
        for (String key : keys) {
            if (key.endsWith(".parquet")) {
                parts.put(
                        key,
                        objects.head(key).orElseThrow().metadata().get(PartMetadata.FINGERPRINT));
            }
        }
        return parts;
    }

    private static String partOf(String key) {
        PartKey part = ObjectKeys.parse(key).orElseThrow();
        return part.windowStartMillis() + "/" + part.bucket();
    }

    /** The parts' rows, each checked to come in customer order within its part. */
    private static List<Row> rows(ObjectStore objects, Iterable<String> keys) throws Exception {
        List<Row> rows = new ArrayList<>();
        for (String key : keys) {
            PartKey part = ObjectKeys.parse(key).orElseThrow();
            List<Row> partRows = new ArrayList<>();
            for (GenericRecord r : PartEncoding.decode(objects.get(key).orElseThrow().content())) {
                GenericData.Fixed revenue = (GenericData.Fixed) r.get("revenue");
                partRows.add(
                        new Row(
                                part.windowStartMillis(),
                                part.bucket(),
                                r.get("customer").toString(),
                                (Long) r.get("orders"),
                                new BigDecimal(new BigInteger(revenue.bytes()), 2)));
            }
            assertThat(partRows.stream().map(Row::customer).collect(Collectors.toList()))
                    .as("rows of %s", key)
                    .isSorted();
            rows.addAll(partRows);
        }
        return rows;
    }
}
