package dev.snapshots.job.sql;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.snapshots.harness.cluster.Kinesalite;
import dev.snapshots.harness.testutils.KinesaliteServer;
import dev.snapshots.job.testutils.KplEncoder;
import dev.snapshots.key.PartKind;
import dev.snapshots.progress.CompletionPointer;
import dev.snapshots.store.ObjectStore;
import dev.snapshots.store.StoreSpec;
import dev.snapshots.testkit.StoreKind;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.apache.flink.api.common.JobID;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.metrics.Counter;
import org.apache.flink.runtime.testutils.InMemoryReporter;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.api.TableResult;
import org.apache.flink.table.api.bridge.java.StreamTableEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.flink.util.FileUtils;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import software.amazon.awssdk.core.SdkBytes;
import software.amazon.awssdk.services.kinesis.KinesisClient;
import software.amazon.awssdk.services.kinesis.model.Shard;

/**
 * {@code 'connector' = 'snapshots-kinesis'} on a MiniCluster with kinesalite: four shards read by
 * two subtasks, JSON orders (some in KPL aggregates), a TUMBLE per minute and customer into {@code
 * 'connector' = 'canonical-snapshots'} on files. The output equals a reference computed here from
 * the on-time records produced; every malformed and every late record injected is one dead letter
 * in the store, and counted.
 */
class KinesisTableITCase {
    private static final InMemoryReporter REPORTER = InMemoryReporter.createWithRetainedMetrics();

    @RegisterExtension
    static final MiniClusterExtension CLUSTER =
            new MiniClusterExtension(
                    new MiniClusterResourceConfiguration.Builder()
                            .setNumberTaskManagers(1)
                            .setNumberSlotsPerTaskManager(4)
                            .setConfiguration(REPORTER.addToConfiguration(new Configuration()))
                            .build());

    private static final long START = Instant.parse("2026-12-01T00:00:00Z").toEpochMilli();
    private static final long MINUTE = 60_000;
    private static final int SHARDS = 4;
    private static final int WINDOWS = 5;
    private static final int PER_WINDOW = 30;
    private static final DateTimeFormatter SQL_TIME =
            DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss.SSS").withZone(ZoneOffset.UTC);

    /** One order as produced; {@code onTime} is what the reference counts. */
    record Order(String customer, BigDecimal amount, long time) {
        byte[] json() {
            return ("{\"customer\":\""
                            + customer
                            + "\",\"amount\":"
                            + amount.toPlainString()
                            + ",\"order_time\":\""
                            + SQL_TIME.format(Instant.ofEpochMilli(time))
                            + "\"}")
                    .getBytes(StandardCharsets.UTF_8);
        }
    }

    private Path root;

    @AfterEach
    void deleteStore() throws Exception {
        if (root != null) {
            FileUtils.deleteDirectory(root.toFile());
        }
    }

    @Test
    void aSqlTumbleOverFourShardsEqualsTheReferenceAndEveryBadOrLateRecordIsADeadLetter()
            throws Exception {
        Kinesalite kinesis = KinesaliteServer.get();
        Produced produced = produce(kinesis.client(), "orders");

        StoreSpec store = StoreKind.FILESYSTEM.fresh();
        long started = System.nanoTime();
        JobClient job =
                SqlJob.start(
                        StreamExecutionEnvironment.getExecutionEnvironment(),
                        SqlScript.parse(script(produced.arn(), kinesis.endpoint(), store)),
                        "kinesis orders");
        root = Path.of(store.uri());
        int expectedDeadLetters = produced.deadLetters();
        try {
            long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(3);
            while (!allPublished(store)) {
                if (job.getJobExecutionResult().isDone()) {
                    SqlJob.await(job); // throws with the job's failure
                }
                assertThat(System.nanoTime())
                        .as(
                                "every window published; pointers %s and %s",
                                Instant.ofEpochMilli(pointer(store, PartKind.SNAPSHOT)),
                                Instant.ofEpochMilli(pointer(store, PartKind.DEAD_LETTER)))
                        .isLessThan(deadline);
                Thread.sleep(200);
            }
        } finally {
            job.cancel().get(1, TimeUnit.MINUTES);
        }
        System.out.printf(
                "FIGURES kinesis table: %d orders on time, %d dead letters, %.1f s%n",
                produced.onTime().size(), expectedDeadLetters, (System.nanoTime() - started) / 1e9);

        assertThat(snapshots(root)).isEqualTo(reference(produced.onTime()));
        assertThat(deadLetters(root)).isEqualTo(produced.injected());
        assertThat(counter(job.getJobID(), "late"))
                .isEqualTo(produced.injected().get("late").size());
        assertThat(counter(job.getJobID(), "bad-format"))
                .isEqualTo(produced.injected().get("bad-format").size());
    }

    /**
     * The stream, the orders produced on time, and the payloads of the bad and late ones by reason,
     * sorted.
     */
    record Produced(String arn, List<Order> onTime, Map<String, List<String>> injected) {
        int deadLetters() {
            return injected.values().stream().mapToInt(List::size).sum();
        }
    }

    /**
     * A new stream of four shards, five minutes of orders each, some in a KPL aggregate, with late
     * and malformed records from the fourth minute on, and an order per shard that closes every
     * window.
     */
    static Produced produce(KinesisClient client, String prefix) {
        String name = prefix + "-" + Long.toHexString(System.nanoTime());
        String arn = Kinesalite.createStream(client, name, SHARDS);
        List<String> hashKeys =
                client.listShards(b -> b.streamName(name)).shards().stream()
                        .map(Shard::hashKeyRange)
                        .map(r -> r.startingHashKey())
                        .toList();

        List<Order> onTime = new ArrayList<>();
        Map<String, List<String>> injected = new TreeMap<>(); // reason -> payloads
        for (int s = 0; s < SHARDS; s++) {
            String key = hashKeys.get(s);
            for (int w = 0; w < WINDOWS; w++) {
                List<byte[]> aggregate = new ArrayList<>();
                for (int i = 0; i < PER_WINDOW; i++) {
                    // Out of order by up to 3 s, inside the WATERMARK's 5 s: never late.
                    long time = START + w * MINUTE + i * 2_000L - (i % 3 == 1 ? 3_000 : 0);
                    Order o =
                            new Order(
                                    "c-" + (s * 7 + w * 3 + i) % 5,
                                    BigDecimal.valueOf((s * 31L + w * 17L + i * 13L) % 10_000, 2),
                                    time);
                    onTime.add(o);
                    if (w == 2 && i >= 10 && i < 14) { // a KPL aggregate of four orders
                        aggregate.add(o.json());
                        if (aggregate.size() == 4) {
                            put(client, name, key, KplEncoder.aggregate("p", aggregate));
                        }
                        continue;
                    }
                    put(client, name, key, o.json());
                    if (w >= 3 && i == 15) {
                        // The shard's watermark is past window w - 2 by now: late by its own rule.
                        byte[] late =
                                new Order("late", BigDecimal.ONE, START + (w - 2) * MINUTE + 10_000)
                                        .json();
                        byte[] truncated =
                                Arrays.copyOf(o.json(), o.json().length - 5 - s); // cut mid-value
                        byte[] notJson =
                                ("not json " + s + "/" + w).getBytes(StandardCharsets.UTF_8);
                        for (byte[] bad : List.of(late, truncated, notJson)) {
                            put(client, name, key, bad);
                        }
                        injected.computeIfAbsent("late", r -> new ArrayList<>())
                                .add(new String(late, StandardCharsets.UTF_8));
                        injected.computeIfAbsent("bad-format", r -> new ArrayList<>())
                                .addAll(
                                        List.of(
                                                new String(truncated, StandardCharsets.UTF_8),
                                                new String(notJson, StandardCharsets.UTF_8)));
                    }
                }
            }
            // Moves the shard's watermark past every window above, and its dead letters'.
            put(
                    client,
                    name,
                    key,
                    new Order("closing", BigDecimal.ZERO, START + 7 * MINUTE).json());
        }

        injected.values().forEach(l -> l.sort(null));
        return new Produced(arn, onTime, injected);
    }

    /**
     * Both kinds complete past the last window, whatever they hold: the dead letters' windows end
     * before the closing orders' watermark.
     */
    static boolean allPublished(StoreSpec store) throws Exception {
        return pointer(store, PartKind.SNAPSHOT) >= START + WINDOWS * MINUTE
                && pointer(store, PartKind.DEAD_LETTER) >= START + WINDOWS * MINUTE;
    }

    /**
     * The planner drops a sink a table source adds beside the query: a job planned with {@code
     * executeSql} would lose every dead letter, so it refuses to start instead.
     */
    @Test
    void anInsertRunByExecuteSqlFailsRatherThanDropItsDeadLetters() throws Exception {
        Kinesalite kinesis = KinesaliteServer.get();
        String arn =
                Kinesalite.createStream(
                        kinesis.client(), "plain-" + Long.toHexString(System.nanoTime()), 1);
        StoreSpec store = StoreKind.FILESYSTEM.fresh();
        root = Path.of(store.uri());
        // Checkpointing on, as the script's SETs (not run here) would set it: without it the sink
        // refuses the unbounded job before the dead letters' refusal is reached.
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.enableCheckpointing(500);
        StreamTableEnvironment tables = StreamTableEnvironment.create(env);
        TableResult insert = null;
        for (SqlScript.Statement statement :
                SqlScript.parse(script(arn, kinesis.endpoint(), store)).statements()) {
            if (statement.kind() != SqlScript.Kind.SET) {
                insert = tables.executeSql(statement.text());
            }
        }
        TableResult started = insert;
        assertThatThrownBy(() -> started.await(2, TimeUnit.MINUTES))
                .hasStackTraceContaining("the dead letters of table orders have no sink");
    }

    /** examples/orders/orders-kinesis.sql, pointed at kinesalite and the test's store. */
    static String script(String arn, String endpoint, StoreSpec store) throws Exception {
        String sql =
                Files.readString(
                        Path.of(System.getProperty("snapshots.root"))
                                .resolve("examples/orders/orders-kinesis.sql"));
        sql = OrdersFixture.option(sql, "stream.arn", arn);
        sql = OrdersFixture.option(sql, "dead-letters.store", store.uri().toString());
        sql = OrdersFixture.option(sql, "store", store.uri().toString());
        assertThat(sql).contains("'window' = '1 min',\n");
        sql =
                sql.replace(
                        "'window' = '1 min',\n",
                        "'window' = '1 min', 'aws.endpoint' = '"
                                + endpoint
                                + "',\n  'source.shard.discovery-interval' = '1 s',\n");
        return OrdersFixture.SETTINGS + sql;
    }

    static void put(KinesisClient client, String stream, String hashKey, byte[] data) {
        client.putRecord(
                b ->
                        b.streamName(stream)
                                .partitionKey("p")
                                .explicitHashKey(hashKey)
                                .data(SdkBytes.fromByteArray(data)));
    }

    /** Per window start: "customer orders revenue", sorted. */
    static Map<Long, List<String>> reference(List<Order> orders) {
        Map<Long, Map<String, BigDecimal[]>> totals = new TreeMap<>();
        for (Order o : orders) {
            BigDecimal[] t =
                    totals.computeIfAbsent(
                                    o.time - Math.floorMod(o.time, MINUTE), w -> new TreeMap<>())
                            .computeIfAbsent(
                                    o.customer,
                                    c -> new BigDecimal[] {BigDecimal.ZERO, BigDecimal.ZERO});
            t[0] = t[0].add(BigDecimal.ONE);
            t[1] = t[1].add(o.amount);
        }
        Map<Long, List<String>> rows = new TreeMap<>();
        totals.forEach(
                (w, byCustomer) ->
                        byCustomer.forEach(
                                (c, t) ->
                                        rows.computeIfAbsent(w, k -> new ArrayList<>())
                                                .add(c + " " + t[0] + " " + t[1].toPlainString())));
        return rows;
    }

    /**
     * Per window start, as {@link #reference}: the windows of the orders produced. The closing
     * orders' window is left out: it is published too once every shard has been idle for {@code
     * 'source.idleness'} (30 s), which a loaded machine reaches before the store is read.
     */
    static Map<Long, List<String>> snapshots(Path root) throws Exception {
        TreeMap<Long, List<String>> rows = new TreeMap<>();
        try (Connection duckdb = DriverManager.getConnection("jdbc:duckdb:");
                Statement st = duckdb.createStatement();
                ResultSet rs =
                        st.executeQuery(
                                "SELECT * FROM read_parquet('"
                                        + root
                                        + "/orders/v=1/schema=1/*/*/*.parquet')"
                                        + " ORDER BY window_start, customer")) {
            while (rs.next()) {
                long window =
                        rs.getObject("window_start", LocalDateTime.class)
                                .toInstant(ZoneOffset.UTC)
                                .toEpochMilli();
                rows.computeIfAbsent(window, w -> new ArrayList<>())
                        .add(
                                rs.getString("customer")
                                        + " "
                                        + rs.getLong("orders")
                                        + " "
                                        + rs.getBigDecimal("revenue").toPlainString());
            }
        }
        return rows.headMap(START + WINDOWS * MINUTE);
    }

    /**
     * Every published dead letter, the JSON lines of {@code _deadletter/orders/v=1}: their payloads
     * by reason, sorted.
     */
    static Map<String, List<String>> deadLetters(Path root) throws Exception {
        Path dir = root.resolve("_deadletter/orders/v=1");
        Map<String, List<String>> published = new TreeMap<>();
        if (!Files.isDirectory(dir)) {
            return published;
        }
        ObjectMapper json = new ObjectMapper();
        try (Stream<Path> files = Files.walk(dir)) {
            for (Path f :
                    files.filter(
                                    p ->
                                            p.getFileName().toString().endsWith(".jsonl")
                                                    && !p.getFileName().toString().startsWith("."))
                            .toList()) {
                for (String line : Files.readAllLines(f, StandardCharsets.UTF_8)) {
                    if (!line.isBlank()) {
                        JsonNode d = json.readTree(line);
                        published
                                .computeIfAbsent(d.get("reason").asText(), r -> new ArrayList<>())
                                .add(d.get("payload").asText());
                    }
                }
            }
        }
        published.values().forEach(l -> l.sort(null));
        return published;
    }

    static long pointer(StoreSpec spec, PartKind kind) throws Exception {
        try (ObjectStore store = spec.open()) {
            return CompletionPointer.read(store, kind, "orders", 1).orElse(0L);
        }
    }

    private static long counter(JobID job, String name) {
        return REPORTER.getMetricsByGroup().entrySet().stream()
                .filter(g -> job.toString().equals(g.getKey().getAllVariables().get("<job_id>")))
                .filter(g -> g.getKey().getMetricIdentifier(name).contains("deadLetters."))
                .map(g -> g.getValue().get(name))
                .filter(m -> m instanceof Counter)
                .mapToLong(m -> ((Counter) m).getCount())
                .sum();
    }
}
