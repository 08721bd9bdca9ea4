package dev.snapshots.example;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.example.orders.ShortestJob;
import com.example.orders.ShortestJob.Order;
import dev.snapshots.format.PojoRowFormat;
import dev.snapshots.sink.CanonicalSnapshotSink;
import dev.snapshots.store.ObjectStore;
import dev.snapshots.store.StoreSpec;
import dev.snapshots.testkit.CustomerHours;
import dev.snapshots.testkit.CustomerHours.Row;
import java.math.BigDecimal;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
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

    private static final Comparator<Row> CUSTOMER_ORDER = Comparator.comparing(Row::customer);

    @TempDir Path tmp;

    @Test
    void theReadmesJobPublishesTheReferenceRowsOnceAndASecondRunChangesNothing() throws Exception {
        StoreSpec store = StoreSpec.local(tmp);
        run(store);
        try (ObjectStore objects = store.open()) {
            Map<String, String> parts = CustomerHours.fingerprints(objects, "orders", 1);
            List<Row> rows = new ArrayList<>();
            for (String part : parts.keySet()) {
                List<Row> partRows = CustomerHours.rows(objects, List.of(part));
                assertThat(partRows).as("rows of %s", part).isSortedAccordingTo(CUSTOMER_ORDER);
                rows.addAll(partRows);
            }

            assertThat(parts.keySet().stream().map(CustomerHours::partOf))
                    .as("one object per (hour, bucket) with rows")
                    .doesNotHaveDuplicates()
                    .containsExactlyInAnyOrderElementsOf(CustomerHours.parts(reference()));
            assertThat(rows).containsExactlyInAnyOrderElementsOf(reference());

            run(store);
            assertThat(CustomerHours.fingerprints(objects, "orders", 1))
                    .as("the second run's parts collapsed into the first's")
                    .isEqualTo(parts);
            assertThat(CustomerHours.divergences(objects)).isEmpty();
        }
    }

    @Test
    void theReadmeShowsExactlyTheJobThisTestRuns() throws Exception {
        Path root = Path.of(System.getProperty("snapshots.root"));
        String job =
                Files.readString(
                        root.resolve(
                                "sinks/tests/src/test/java/com/example/orders/ShortestJob.java"));
        String readme = Files.readString(root.resolve("README.md"));
        int block = readme.indexOf("```java\n", readme.indexOf("### The shortest job")) + 8;

        assertThat(readme.substring(block, readme.indexOf("```", block))).isEqualTo(job);
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

    private static List<Row> reference() {
        return CustomerHours.reference(
                ORDERS.stream()
                        .map(o -> new CustomerHours.Order(o.customer, o.timeMillis, o.amount))
                        .toList(),
                BUCKETS);
    }
}
