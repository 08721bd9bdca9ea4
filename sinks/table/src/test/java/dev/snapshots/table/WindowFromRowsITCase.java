package dev.snapshots.table;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.snapshots.format.PartEncoding;
import dev.snapshots.key.ObjectKeys;
import dev.snapshots.key.PartKind;
import dev.snapshots.key.PartMetadata;
import dev.snapshots.progress.VersionIdentity;
import dev.snapshots.sink.Bucketing;
import dev.snapshots.sink.WindowedSource;
import dev.snapshots.store.ObjectStore;
import dev.snapshots.store.StoreSpec;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.TreeSet;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericRecord;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.connector.source.lib.NumberSequenceSource;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.api.DataTypes;
import org.apache.flink.table.api.EnvironmentSettings;
import org.apache.flink.table.api.Schema;
import org.apache.flink.table.api.TableEnvironment;
import org.apache.flink.table.api.bridge.java.StreamTableEnvironment;
import org.apache.flink.types.Row;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A standard window query into a table that names no {@code 'window'}: the rows give the length,
 * the job version's identity records it at the first write, and a row or a run of another length is
 * refused before it publishes. The jobs run on Flink's local MiniCluster without checkpointing: a
 * bounded input publishes at its end, an unbounded one is refused as it is planned.
 */
class WindowFromRowsITCase {
    private static final long START = Instant.parse("2026-12-01T00:00:00Z").toEpochMilli();
    private static final long HOUR = 3_600_000L;
    private static final int BUCKETS = 3;

    @TempDir Path tmp;

    /** Orders over five hours, in time order, with a fixed seed. */
    private record Order(String customer, String product, BigDecimal amount, long millis) {}

    private static List<Order> orders() {
        Random random = new Random(20261201);
        List<Order> orders = new ArrayList<>();
        for (int i = 0; i < 400; i++) {
            orders.add(
                    new Order(
                            "c" + random.nextInt(11),
                            "p" + random.nextInt(5),
                            BigDecimal.valueOf(random.nextInt(1_000_000), 2),
                            START + i * (5 * HOUR / 400)));
        }
        return orders;
    }

    @Test
    void aTumbleQueryWithoutWindowPublishesOneObjectPerWindowAndBucketEqualToTheReference()
            throws Exception {
        String store = tmp.resolve("store").toUri().toString();

        run(2, script(store, "INTERVAL '1' HOUR"));

        Map<String, String> parts = parts(store);
        Map<Long, Map<String, String>> read = new TreeMap<>();
        TreeSet<String> windowBuckets = new TreeSet<>();
        try (ObjectStore objects = StoreSpec.parse(store).open()) {
            for (String key : parts.keySet()) {
                ObjectKeys.PartKey part = ObjectKeys.parse(key).orElseThrow();
                assertThat(windowBuckets.add(part.windowStartMillis() + "/" + part.bucket()))
                        .as("one object for %s", key)
                        .isTrue();
                for (GenericRecord r :
                        PartEncoding.decode(objects.get(key).orElseThrow().content())) {
                    String customer = r.get("customer").toString();
                    assertThat(Bucketing.HASH.bucketOf(customer, BUCKETS, 128))
                            .isEqualTo(part.bucket());
                    read.computeIfAbsent(part.windowStartMillis(), w -> new TreeMap<>())
                            .put(
                                    customer,
                                    r.get("orders")
                                            + " "
                                            + r.get("products")
                                            + " "
                                            + new BigDecimal(
                                                    new BigInteger(
                                                            ((GenericData.Fixed) r.get("revenue"))
                                                                    .bytes()),
                                                    2));
                }
            }
            assertThat(
                            VersionIdentity.read(objects, PartKind.SNAPSHOT, "orders", 1)
                                    .orElseThrow()
                                    .windowLengthMillis())
                    .isEqualTo(HOUR);
        }
        assertThat(read).isEqualTo(reference(orders()));

        run(2, script(store, "INTERVAL '1' HOUR"));

        assertThat(parts(store)).as("a second run adds no data object").isEqualTo(parts);
    }

    /** Count, distinct products and revenue per hour and customer, in plain Java. */
    private static Map<Long, Map<String, String>> reference(List<Order> orders) {
        Map<Long, Map<String, List<Order>>> byWindow = new TreeMap<>();
        for (Order o : orders) {
            byWindow.computeIfAbsent(o.millis() - o.millis() % HOUR, w -> new TreeMap<>())
                    .computeIfAbsent(o.customer(), c -> new ArrayList<>())
                    .add(o);
        }
        Map<Long, Map<String, String>> rows = new TreeMap<>();
        byWindow.forEach(
                (window, customers) ->
                        customers.forEach(
                                (customer, own) ->
                                        rows.computeIfAbsent(window, w -> new TreeMap<>())
                                                .put(
                                                        customer,
                                                        own.size()
                                                                + " "
                                                                + own.stream()
                                                                        .map(Order::product)
                                                                        .distinct()
                                                                        .count()
                                                                + " "
                                                                + own.stream()
                                                                        .map(Order::amount)
                                                                        .reduce(
                                                                                BigDecimal.ZERO,
                                                                                BigDecimal::add))));
        return rows;
    }

    @Test
    void rowsOfTwoWindowLengthsFailTheJobAndPublishNothing() throws Exception {
        String store = tmp.resolve("store").toUri().toString();
        String hourly = script(store, "INTERVAL '1' HOUR");
        String insert = hourly.substring(hourly.indexOf("INSERT"));
        String mixed =
                hourly
                        + " UNION ALL "
                        + insert.substring(insert.indexOf("SELECT"))
                                .replace("INTERVAL '1' HOUR", "INTERVAL '30' MINUTES");

        assertThatThrownBy(() -> run(1, mixed))
                .hasStackTraceContaining("table hourly was given a row of the window")
                // Which fires first when a watermark passes both windows' ends is not fixed.
                .satisfiesAnyOf(
                        e ->
                                assertThat(e)
                                        .hasStackTraceContaining(
                                                "PT1H long, while its first rows' windows are"
                                                        + " PT30M: write one TUMBLE"),
                        e ->
                                assertThat(e)
                                        .hasStackTraceContaining(
                                                "PT30M long, while its first rows' windows are"
                                                        + " PT1H: write one TUMBLE"));
        assertThat(parts(store)).isEmpty();
    }

    @Test
    void aLaterRunWithAnotherWindowLengthIsRefusedByTheRecordedIdentity() throws Exception {
        String store = tmp.resolve("store").toUri().toString();
        run(2, script(store, "INTERVAL '1' HOUR"));
        Map<String, String> hourly = parts(store);

        assertThatThrownBy(() -> run(2, script(store, "INTERVAL '30' MINUTES")))
                .hasStackTraceContaining("orders v=1 was given rows of the window")
                .hasStackTraceContaining("PT30M long, while its windows are PT1H long");
        assertThat(parts(store)).isEqualTo(hourly);
    }

    /**
     * A source that closes windows of its own length (a snapshots-kinesis table's 'window') holds
     * the table to that length: at planning when the table names one, else on the first row.
     */
    @Test
    void aWindowedSourceHoldsTheTableToItsWindow() throws Exception {
        String store = tmp.resolve("store").toUri().toString();
        String query =
                "INSERT INTO hourly SELECT window_start, window_end, customer, COUNT(*) FROM"
                        + " TABLE(TUMBLE(TABLE events, DESCRIPTOR(rowtime), INTERVAL '30'"
                        + " MINUTES)) GROUP BY window_start, window_end, customer";

        assertThatThrownBy(() -> windowedSource(store, "").executeSql(query).await())
                .hasStackTraceContaining("'kinesis-like' is PT1H: write one TUMBLE");
        // Thrown by executeSql itself: before a job exists.
        assertThatThrownBy(() -> windowedSource(store, ", 'window' = '30 min'").executeSql(query))
                .hasStackTraceContaining(
                        "the table's 'window' is PT30M but its input 'kinesis-like' judges"
                                + " lateness by windows of PT1H");
        assertThat(parts(store)).isEmpty();
    }

    private StreamTableEnvironment windowedSource(String store, String window) {
        StreamExecutionEnvironment env =
                StreamExecutionEnvironment.getExecutionEnvironment(settings(1));
        var events =
                env.fromSource(
                                new HourlySource(),
                                WatermarkStrategy.<Long>forMonotonousTimestamps()
                                        .withTimestampAssigner((n, t) -> START + n * 60_000),
                                "kinesis-like")
                        .map(
                                n -> Row.of("c" + n % 3),
                                Types.ROW_NAMED(new String[] {"customer"}, Types.STRING));
        StreamTableEnvironment tables = StreamTableEnvironment.create(env);
        tables.createTemporaryView(
                "events",
                tables.fromDataStream(
                        events,
                        Schema.newBuilder()
                                .column("customer", DataTypes.STRING())
                                .columnByMetadata("rowtime", "TIMESTAMP_LTZ(3)")
                                .watermark("rowtime", "SOURCE_WATERMARK()")
                                .build()));
        tables.executeSql(
                "CREATE TABLE hourly (window_start TIMESTAMP(3) NOT NULL, window_end TIMESTAMP(3)"
                        + " NOT NULL, customer STRING NOT NULL, orders BIGINT NOT NULL,"
                        + " PRIMARY KEY (window_start, window_end, customer) NOT ENFORCED) WITH ("
                        + "'connector' = 'canonical-snapshots', 'store' = '"
                        + store
                        + "', 'pipeline' = 'orders', 'job-version' = '1', 'buckets' = '2'"
                        + window
                        + ")");
        return tables;
    }

    /** Three hours of minutes, closing windows of an hour as a Kinesis table's rule would. */
    private static final class HourlySource extends NumberSequenceSource implements WindowedSource {
        HourlySource() {
            super(0, 179);
        }

        @Override
        public Duration windowLength() {
            return Duration.ofHours(1);
        }
    }

    /**
     * Parts are published when a checkpoint completes: without checkpointing an unbounded job would
     * publish nothing, so it is refused as it is planned, naming the setting.
     */
    @Test
    void anUnboundedQueryWithoutCheckpointingIsRefusedAsItIsPlanned() throws Exception {
        String store = tmp.resolve("store").toUri().toString();
        String script =
                script(store, "INTERVAL '1' HOUR")
                        .replace(
                                "'connector' = 'filesystem', 'path' = '"
                                        + tmp.resolve("orders.jsonl")
                                        + "', 'format' = 'json'",
                                "'connector' = 'datagen'");

        TableEnvironment tables = tables(1);
        List<String> statements = statements(script);
        statements.subList(0, 2).forEach(tables::executeSql);
        String insert = statements.get(2);

        // Thrown by executeSql itself: no job was started.
        assertThatThrownBy(() -> tables.executeSql(insert))
                .hasStackTraceContaining("checkpointing is off and the input is unbounded")
                .hasStackTraceContaining("Set execution.checkpointing.interval");

        // As a script's SET: the table's configuration, which the planner applies.
        tables.getConfig().set("execution.checkpointing.interval", "1 s");
        tables.executeSql(insert).getJobClient().orElseThrow().cancel().get();
    }

    /** The orders as JSON lines, their table, the sink's table and the INSERT. */
    private String script(String store, String tumble) throws Exception {
        Path events = tmp.resolve("orders.jsonl");
        if (!Files.exists(events)) {
            DateTimeFormatter sql = DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss.SSS");
            List<String> lines = new ArrayList<>();
            for (Order o : orders()) {
                lines.add(
                        String.format(
                                "{\"customer\": \"%s\", \"product\": \"%s\", \"amount\": %s,"
                                        + " \"order_time\": \"%s\"}",
                                o.customer(),
                                o.product(),
                                o.amount().toPlainString(),
                                LocalDateTime.ofEpochSecond(
                                                o.millis() / 1000,
                                                (int) (o.millis() % 1000) * 1_000_000,
                                                ZoneOffset.UTC)
                                        .format(sql)));
            }
            Files.write(events, lines);
        }
        return "CREATE TABLE orders (customer STRING, product STRING, amount DECIMAL(10, 2),"
                + " order_time TIMESTAMP(3), WATERMARK FOR order_time AS order_time - INTERVAL '5'"
                + " SECOND) WITH ('connector' = 'filesystem', 'path' = '"
                + events
                + "', 'format' = 'json');\n"
                + "CREATE TABLE hourly (window_start TIMESTAMP(3) NOT NULL, window_end TIMESTAMP(3)"
                + " NOT NULL, customer STRING NOT NULL, orders BIGINT NOT NULL, products BIGINT NOT"
                + " NULL, revenue DECIMAL(38, 2), PRIMARY KEY (window_start, window_end, customer)"
                + " NOT ENFORCED) WITH ('connector' = 'canonical-snapshots', 'store' = '"
                + store
                + "', 'pipeline' = 'orders', 'job-version' = '1', 'buckets' = '"
                + BUCKETS
                + "');\n"
                + "INSERT INTO hourly SELECT window_start, window_end, customer, COUNT(*),"
                + " COUNT(DISTINCT product), SUM(amount) FROM TABLE(TUMBLE(TABLE orders,"
                + " DESCRIPTOR(order_time), "
                + tumble
                + ")) GROUP BY window_start, window_end, customer";
    }

    private static List<String> statements(String script) {
        return List.of(script.split(";\n"));
    }

    private static Configuration settings(int parallelism) {
        Configuration conf = new Configuration();
        conf.setString("parallelism.default", Integer.toString(parallelism));
        conf.setString("table.local-time-zone", "UTC");
        return conf;
    }

    private static TableEnvironment tables(int parallelism) {
        return TableEnvironment.create(
                EnvironmentSettings.newInstance()
                        .inStreamingMode()
                        .withConfiguration(settings(parallelism))
                        .build());
    }

    /** Runs the script's statements, the INSERT to its end. */
    private static void run(int parallelism, String script) throws Exception {
        TableEnvironment tables = tables(parallelism);
        for (String statement : statements(script)) {
            tables.executeSql(statement).await();
        }
    }

    /** The store's Parquet parts, key to fingerprint. */
    private static Map<String, String> parts(String store) throws Exception {
        Map<String, String> parts = new TreeMap<>();
        try (ObjectStore objects = StoreSpec.parse(store).open()) {
            objects.list(
                    "",
                    o -> {
                        if (ObjectKeys.parse(o.key())
                                .filter(k -> k.kind() == PartKind.SNAPSHOT)
                                .isPresent()) {
                            parts.put(o.key(), o.metadata().get(PartMetadata.FINGERPRINT));
                        }
                    });
        }
        return parts;
    }
}
