package dev.snapshots.job.sql;

import static org.assertj.core.api.Assertions.assertThat;

import dev.snapshots.harness.cluster.Kinesalite;
import dev.snapshots.harness.testutils.KinesaliteServer;
import dev.snapshots.job.testutils.KplEncoder;
import dev.snapshots.key.ObjectKeys;
import dev.snapshots.key.PartKind;
import dev.snapshots.key.PartMetadata;
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
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.metrics.Counter;
import org.apache.flink.metrics.Gauge;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.runtime.testutils.InMemoryReporter;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.api.EnvironmentSettings;
import org.apache.flink.table.api.TableEnvironment;
import org.apache.flink.table.api.TableResult;
import org.apache.flink.test.junit5.InjectMiniCluster;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.flink.util.FileUtils;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import software.amazon.awssdk.core.SdkBytes;
import software.amazon.awssdk.services.kinesis.KinesisClient;
import software.amazon.awssdk.services.kinesis.model.Shard;

/**
 * {@code 'connector' = 'snapshots-kinesis'} on a MiniCluster with kinesalite: JSON orders (some in
 * KPL aggregates) on several shards, a TUMBLE per minute and customer into {@code 'connector' =
 * 'canonical-snapshots'} on files. The output equals a reference computed here from the on-time
 * records produced; every malformed and every late record injected is one dead letter in the store,
 * once, and counted: run by {@code ./snapshots run --sql}, by plain {@code executeSql} (as the SQL
 * Client and Gateway run it), twice over the same store, and across a TaskManager's death.
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

    static final long START = Instant.parse("2026-12-01T00:00:00Z").toEpochMilli();
    static final long MINUTE = 60_000;
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
            awaitAllPublished(store, job);
        } finally {
            cancel(job);
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
        return new Orders(client, prefix, SHARDS, 3).windows(0, WINDOWS).close().produced();
    }

    /** A new stream of kinesalite, its orders put window by window. */
    static final class Orders {
        private final KinesisClient client;
        private final String name;
        private final String arn;
        private final List<String> hashKeys;
        private final int badFrom;
        private final List<Order> onTime = new ArrayList<>();
        private final Map<String, List<String>> injected = new TreeMap<>(); // reason -> payloads

        /**
         * {@code shards} shards, with late and malformed records from window {@code badFrom} on.
         */
        Orders(KinesisClient client, String prefix, int shards, int badFrom) {
            this.client = client;
            this.name = prefix + "-" + Long.toHexString(System.nanoTime());
            this.arn = Kinesalite.createStream(client, name, shards);
            this.hashKeys =
                    client.listShards(b -> b.streamName(name)).shards().stream()
                            .map(Shard::hashKeyRange)
                            .map(r -> r.startingHashKey())
                            .toList();
            this.badFrom = badFrom;
        }

        /** The orders of shard {@code s} in window {@code w}, in the order they are put. */
        static List<Order> of(int s, int w) {
            List<Order> orders = new ArrayList<>();
            for (int i = 0; i < PER_WINDOW; i++) {
                // Out of order by up to 3 s, inside the WATERMARK's 5 s: never late.
                long time = START + w * MINUTE + i * 2_000L - (i % 3 == 1 ? 3_000 : 0);
                orders.add(
                        new Order(
                                "c-" + (s * 7 + w * 3 + i) % 5,
                                BigDecimal.valueOf((s * 31L + w * 17L + i * 13L) % 10_000, 2),
                                time));
            }
            return orders;
        }

        /** Windows [from, to) of every shard. */
        Orders windows(int from, int to) {
            for (int s = 0; s < hashKeys.size(); s++) {
                String key = hashKeys.get(s);
                for (int w = from; w < to; w++) {
                    List<byte[]> aggregate = new ArrayList<>();
                    List<Order> orders = of(s, w);
                    for (int i = 0; i < PER_WINDOW; i++) {
                        Order o = orders.get(i);
                        onTime.add(o);
                        if (w == 2 && i >= 10 && i < 14) { // a KPL aggregate of four orders
                            aggregate.add(o.json());
                            if (aggregate.size() == 4) {
                                put(client, name, key, KplEncoder.aggregate("p", aggregate));
                            }
                            continue;
                        }
                        put(client, name, key, o.json());
                        if (w >= badFrom && i == 15) {
                            bad(key, s, w, o);
                        }
                    }
                }
            }
            return this;
        }

        private void bad(String key, int shard, int window, Order order) {
            // The shard's watermark is past window w - 2 by now: late by its own rule.
            byte[] late =
                    new Order("late", BigDecimal.ONE, START + (window - 2) * MINUTE + 10_000)
                            .json();
            byte[] truncated =
                    Arrays.copyOf(order.json(), order.json().length - 5 - shard); // mid-value
            byte[] notJson = ("not json " + shard + "/" + window).getBytes(StandardCharsets.UTF_8);
            for (byte[] record : List.of(late, truncated, notJson)) {
                put(client, name, key, record);
            }
            injected.computeIfAbsent("late", r -> new ArrayList<>())
                    .add(new String(late, StandardCharsets.UTF_8));
            injected.computeIfAbsent("bad-format", r -> new ArrayList<>())
                    .addAll(
                            List.of(
                                    new String(truncated, StandardCharsets.UTF_8),
                                    new String(notJson, StandardCharsets.UTF_8)));
        }

        /** Moves each shard's watermark past every window above, and its dead letters'. */
        Orders close() {
            for (String key : hashKeys) {
                put(
                        client,
                        name,
                        key,
                        new Order("closing", BigDecimal.ZERO, START + 7 * MINUTE).json());
            }
            return this;
        }

        /** What was put so far. */
        Produced produced() {
            Map<String, List<String>> sorted = new TreeMap<>();
            injected.forEach((reason, p) -> sorted.put(reason, p.stream().sorted().toList()));
            return new Produced(arn, List.copyOf(onTime), sorted);
        }
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
     * The statements one by one through {@code executeSql}, as the SQL Client and Gateway run them,
     * with no help from this project: the dead letters' sink is in the graph the planner keeps. Two
     * shards read by three subtasks: the one without a shard is idle, and the query's windows close
     * past it. The job ends by a drain and {@code await()}; a second run over the same store
     * computes every part again and collapses into it.
     */
    @Test
    void anInsertRunByExecuteSqlPublishesItsDeadLettersOnceAndASecondRunAddsNoObject()
            throws Exception {
        Kinesalite kinesis = KinesaliteServer.get();
        Produced produced =
                new Orders(kinesis.client(), "plain", 2, 3).windows(0, WINDOWS).close().produced();
        StoreSpec store = store();
        String script = steady(script(produced.arn(), kinesis.endpoint(), store), 3, "500 ms");

        TableResult first = executeSql(script);
        awaitAllPublished(store, first.getJobClient().orElseThrow());
        drain(first);
        first.await(1, TimeUnit.MINUTES);

        assertThat(snapshots(root)).isEqualTo(reference(produced.onTime()));
        assertThat(deadLetters(root)).isEqualTo(produced.injected());
        Map<String, String> objects = dataObjects(store);

        TableResult second = executeSql(script);
        JobClient again = second.getJobClient().orElseThrow();
        // The drain closes the closing orders' window: only once every other one is computed.
        List<String> beforeDrain = collapses(again, objects, START + WINDOWS * MINUTE);
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(2);
        while (!evidence(store, ObjectKeys.COLLAPSED_PREFIX).containsAll(beforeDrain)) {
            if (again.getJobExecutionResult().isDone()) {
                SqlJob.await(again);
            }
            assertThat(System.nanoTime())
                    .as("the second run collapsed into the first's %d parts", beforeDrain.size())
                    .isLessThan(deadline);
            Thread.sleep(200);
        }
        drain(second);
        second.await(1, TimeUnit.MINUTES);

        assertThat(evidence(store, ObjectKeys.COLLAPSED_PREFIX))
                .containsAll(collapses(again, objects, Long.MAX_VALUE));
        assertThat(dataObjects(store)).as("no object written again, none added").isEqualTo(objects);
        assertThat(deadLetters(root)).isEqualTo(produced.injected());
        assertThat(evidence(store, ObjectKeys.DIVERGENCE_PREFIX)).isEmpty();
        System.out.printf(
                "FIGURES executeSql: %d objects (%d dead-letter parts) published once, collapsed"
                        + " into by the second run%n",
                objects.size(),
                objects.keySet().stream().filter(k -> k.startsWith("_deadletter/")).count());
    }

    /**
     * The TaskManager dies as soon as the first dead letters are published, at a checkpoint's
     * completion and before the next one (every 3 s here, unaligned, as production runs); the job
     * restarts from that checkpoint on a new TaskManager, commits its parts again, restores the
     * dead letters of the window still open and reads the rest of the stream, produced after the
     * restart: every dead letter is published once.
     */
    @Test
    void deadLettersArePublishedOnceAcrossATaskManagersDeath(@InjectMiniCluster MiniCluster cluster)
            throws Exception {
        Kinesalite kinesis = KinesaliteServer.get();
        Orders orders = new Orders(kinesis.client(), "failover", SHARDS, 1).windows(0, 3);
        StoreSpec store = store();
        long started = System.nanoTime();
        TableResult insert =
                executeSql(
                        steady(script(orders.arn, kinesis.endpoint(), store), 2, "3 s")
                                + "SET 'execution.checkpointing.unaligned.enabled' = 'true';\n");
        JobClient job = insert.getJobClient().orElseThrow();
        long killed;
        try {
            long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(2);
            while (deadLetters(root).isEmpty()) {
                assertThat(job.getJobExecutionResult().isDone()).as("job ended").isFalse();
                assertThat(System.nanoTime()).as("a dead letter published").isLessThan(deadline);
                Thread.sleep(50);
            }
            cluster.terminateTaskManager(0).get(30, TimeUnit.SECONDS);
            killed = System.nanoTime();
            cluster.startTaskManager();
            orders.windows(3, WINDOWS).close();
            awaitAllPublished(store, job);
        } finally {
            cancel(job);
        }

        Produced produced = orders.produced();
        assertThat(jobGauge(job.getJobID(), "numRestarts")).as("restarts").isPositive();
        assertThat(snapshots(root)).isEqualTo(reference(produced.onTime()));
        assertThat(deadLetters(root)).isEqualTo(produced.injected());
        assertThat(evidence(store, ObjectKeys.DIVERGENCE_PREFIX)).isEmpty();
        List<String> collapsed = evidence(store, ObjectKeys.COLLAPSED_PREFIX + "_deadletter/");
        assertThat(collapsed)
                .as("dead-letter parts committed again after the restart")
                .isNotEmpty();
        System.out.printf(
                "FIGURES TaskManager killed after %.1f s: %d dead letters published once, %d"
                        + " dead-letter parts committed again and collapsed; %.1f s after%n",
                (killed - started) / 1e9,
                produced.deadLetters(),
                collapsed.size(),
                (System.nanoTime() - killed) / 1e9);
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

    private StoreSpec store() {
        StoreSpec store = StoreKind.FILESYSTEM.fresh();
        root = Path.of(store.uri());
        return store;
    }

    /**
     * {@code script} at {@code parallelism}, checkpointing every {@code checkpoints}, without the
     * shards' idleness: judged by arrival, a shard quiet for 30 s (a loaded machine, the pause
     * between a test's phases) would move its watermark to the wall clock and close every window.
     */
    private static String steady(String script, int parallelism, String checkpoints) {
        return neverIdle(script)
                + "\nSET 'parallelism.default' = '"
                + parallelism
                + "';\nSET 'execution.checkpointing.interval' = '"
                + checkpoints
                + "';\n";
    }

    /** {@code script} with its Kinesis table's shards never idle. */
    static String neverIdle(String script) {
        String connector = "'connector' = 'snapshots-kinesis',";
        assertThat(script).contains(connector);
        return script.replace(connector, connector + " 'source.idleness' = '0 s',");
    }

    /**
     * The script as Flink's SQL Client runs it: its SETs into the session's configuration (the
     * client applies them itself), every other statement through a TableEnvironment's executeSql.
     */
    private static TableResult executeSql(String script) {
        SqlScript parsed = SqlScript.parse(script);
        TableEnvironment tables = TableEnvironment.create(EnvironmentSettings.inStreamingMode());
        parsed.settings().forEach(tables.getConfig()::set);
        TableResult last = null;
        for (SqlScript.Statement statement : parsed.statements()) {
            if (statement.kind() != SqlScript.Kind.SET) {
                last = tables.executeSql(statement.text());
            }
        }
        return last;
    }

    /** Cancels a job still running: one that failed has said why already. */
    private static void cancel(JobClient job) throws Exception {
        if (!job.getJobExecutionResult().isDone()) {
            job.cancel().get(1, TimeUnit.MINUTES);
        }
    }

    /** Stops the job with a drain: every window closes, the last checkpoint commits its parts. */
    private void drain(TableResult insert) throws Exception {
        insert.getJobClient()
                .orElseThrow()
                .stopWithSavepoint(
                        true,
                        root.resolve("_savepoints").toUri().toString(),
                        SavepointFormatType.CANONICAL)
                .get(1, TimeUnit.MINUTES);
    }

    /** Until {@link #allPublished}; a failed job fails the test. */
    private static void awaitAllPublished(StoreSpec store, JobClient job) throws Exception {
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
    }

    /**
     * The records of {@code job}'s collapses into each of {@code objects} whose window starts
     * before {@code before}.
     */
    private static List<String> collapses(JobClient job, Map<String, String> objects, long before) {
        return objects.keySet().stream()
                .filter(k -> ObjectKeys.parse(k).orElseThrow().windowStartMillis() < before)
                .map(k -> ObjectKeys.collapsedKey(k, job.getJobID().toHexString()))
                .toList();
    }

    /** Every part, snapshots and dead letters: its key and the version and writer of its bytes. */
    private static Map<String, String> dataObjects(StoreSpec spec) throws Exception {
        Map<String, String> parts = new TreeMap<>();
        try (ObjectStore store = spec.open()) {
            List<ObjectStore.ObjectInfo> all = new ArrayList<>();
            store.list("", all::add);
            for (ObjectStore.ObjectInfo o : all) {
                if (ObjectKeys.parse(o.key()).isPresent()) {
                    parts.put(
                            o.key(),
                            o.version()
                                    + " by "
                                    + store.head(o.key())
                                            .orElseThrow()
                                            .metadata()
                                            .get(PartMetadata.WRITER_JOB));
                }
            }
        }
        return parts;
    }

    private static List<String> evidence(StoreSpec spec, String prefix) throws Exception {
        List<String> keys = new ArrayList<>();
        try (ObjectStore store = spec.open()) {
            store.list(prefix, o -> keys.add(o.key()));
        }
        return keys;
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

    private static long jobGauge(JobID job, String name) {
        return REPORTER.findMetrics(job, name).values().stream()
                .filter(m -> m instanceof Gauge<?>)
                .mapToLong(m -> ((Number) ((Gauge<?>) m).getValue()).longValue())
                .max()
                .orElse(0);
    }
}
