package dev.snapshots.job.sql;

import static dev.snapshots.job.sql.OrdersFixture.EXAMPLE;
import static dev.snapshots.job.sql.OrdersFixture.assertOnePartPerWindowAndBucket;
import static dev.snapshots.job.sql.OrdersFixture.awaitPointer;
import static dev.snapshots.job.sql.OrdersFixture.hashes;
import static dev.snapshots.job.sql.OrdersFixture.option;
import static dev.snapshots.job.sql.OrdersFixture.partHashes;
import static dev.snapshots.job.sql.OrdersFixture.reference;
import static dev.snapshots.job.sql.OrdersFixture.script;
import static dev.snapshots.job.sql.OrdersFixture.watching;
import static dev.snapshots.job.sql.OrdersFixture.windows;
import static org.assertj.core.api.Assertions.assertThat;

import dev.snapshots.harness.Snapshots;
import dev.snapshots.key.ObjectKeys;
import dev.snapshots.store.StoreSpec;
import dev.snapshots.testkit.StoreKind;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.apache.flink.api.common.JobID;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.StateRecoveryOptions;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.metrics.Counter;
import org.apache.flink.runtime.testutils.InMemoryReporter;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The second pipeline, {@code examples/orders/orders.sql}, proven as the telemetry job is: on a
 * MiniCluster, real files and S3Proxy, its output read back and compared with a reference computed
 * from the events in plain Java ({@link OrdersReference}); a second run collapses into the first;
 * two instances at once leave one object per part; a replay into job version 2 from a savepoint
 * writes its own namespace.
 */
class OrdersPipelineITCase {
    private static final InMemoryReporter REPORTER = InMemoryReporter.createWithRetainedMetrics();

    @RegisterExtension
    static final MiniClusterExtension CLUSTER =
            new MiniClusterExtension(
                    new MiniClusterResourceConfiguration.Builder()
                            .setNumberTaskManagers(2)
                            .setNumberSlotsPerTaskManager(4)
                            .setConfiguration(REPORTER.addToConfiguration(new Configuration()))
                            .build());

    @TempDir Path tmp;

    /**
     * As a user runs it: {@code snapshots run --sql}, the store a local directory, read back by
     * DuckDB, which sees decimals as decimals and timestamps as timestamps; then the same script
     * with another B, refused.
     */
    @Test
    void theExampleRunFromTheCommandLineEqualsTheReferenceReadByDuckDb() throws Exception {
        StoreSpec store = StoreKind.FILESYSTEM.fresh();
        Path script = tmp.resolve("orders.sql");
        Files.writeString(script, script(store, EXAMPLE.resolve("orders.jsonl"), 1));

        String out = cli("run", "--sql", script.toString());

        assertThat(out).contains("done, its sources ended");
        String parts = Path.of(store.uri()) + "/orders/v=1/schema=1/*/*/*.parquet";
        try (Connection duckdb = DriverManager.getConnection("jdbc:duckdb:");
                Statement st = duckdb.createStatement()) {
            try (ResultSet rs =
                    st.executeQuery(
                            "SELECT typeof(window_start), typeof(revenue), typeof(largest_order),"
                                    + " typeof(order_date), typeof(last_order), typeof(any_gift)"
                                    + " FROM read_parquet('"
                                    + parts
                                    + "') LIMIT 1")) {
                assertThat(rs.next()).isTrue();
                assertThat(List.of(1, 2, 3, 4, 5, 6).stream().map(c -> get(rs, c)))
                        .containsExactly(
                                "TIMESTAMP",
                                "DECIMAL(38,2)",
                                "DECIMAL(10,2)",
                                "DATE",
                                "TIMESTAMP",
                                "BOOLEAN");
            }
            Map<Long, List<String>> read = new TreeMap<>();
            try (ResultSet rs =
                    st.executeQuery(
                            "SELECT * FROM read_parquet('"
                                    + parts
                                    + "') ORDER BY window_start, customer")) {
                while (rs.next()) {
                    long window = millis(rs.getObject("window_start", LocalDateTime.class));
                    read.computeIfAbsent(window, w -> new ArrayList<>())
                            .add(
                                    OrdersReference.row(
                                            window,
                                            rs.getString("customer"),
                                            rs.getLong("orders"),
                                            rs.getLong("products"),
                                            rs.getBigDecimal("revenue"),
                                            rs.getBigDecimal("largest_order"),
                                            rs.getInt("items"),
                                            rs.getDouble("mean_quantity"),
                                            rs.getString("coupon"),
                                            rs.getBoolean("any_gift"),
                                            rs.getObject("order_date", LocalDate.class),
                                            millis(
                                                    rs.getObject(
                                                            "last_order", LocalDateTime.class))));
                }
            }
            assertThat(read).isEqualTo(reference(0, OrderEvents.HOURS));
        }
        assertOnePartPerWindowAndBucket(store, 1, reference(0, OrderEvents.HOURS));

        // The same job version with another B is refused before it runs, naming both.
        Files.writeString(script, option(Files.readString(script), "buckets", "8"));
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code =
                Snapshots.run(
                        new String[] {"run", "--sql", script.toString()},
                        new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8),
                        new PrintStream(err, true, StandardCharsets.UTF_8));
        assertThat(code).isEqualTo(2);
        assertThat(err.toString(StandardCharsets.UTF_8))
                .contains("buckets (B) 4 (recorded), 8 (this run)");
    }

    @Test
    void aSecondRunIntoTheSameS3StoreCollapsesEveryPartIntoTheFirst() throws Exception {
        StoreSpec store = StoreKind.S3_INLINE.fresh();
        String sql = script(store, EXAMPLE.resolve("orders.jsonl"), 1);
        JobClient first = start(sql, null);
        first.getJobExecutionResult().get(3, TimeUnit.MINUTES);
        Map<String, String> parts = partHashes(store, 1);

        JobClient second = start(sql, null);
        second.getJobExecutionResult().get(3, TimeUnit.MINUTES);

        assertThat(partHashes(store, 1)).as("parts and manifests, byte for byte").isEqualTo(parts);
        int published = assertOnePartPerWindowAndBucket(store, 1, reference(0, 6));
        assertThat(counter(second.getJobID(), "partsCreated")).isZero();
        assertThat(counter(second.getJobID(), "partsCollapsed")).isEqualTo(published);
        assertThat(counter(second.getJobID(), "partsDivergent")).isZero();
    }

    /**
     * At a laptop's default parallelism, 8, above the example's B = 4: one object per (hour,
     * bucket), equal to the reference; then a run at 3, which does not divide B, into the same
     * store adds no object and reports no divergence.
     */
    @Test
    void atParallelismEightThenThreeEachPartIsPublishedOnce() throws Exception {
        StoreSpec store = StoreKind.FILESYSTEM.fresh();
        String sql = script(store, EXAMPLE.resolve("orders.jsonl"), 1);
        JobClient first = start(sql + "\nSET 'parallelism.default' = '8';\n", null);
        first.getJobExecutionResult().get(3, TimeUnit.MINUTES);
        int published = assertOnePartPerWindowAndBucket(store, 1, reference(0, 6));
        Map<String, String> parts = partHashes(store, 1);

        JobClient second = start(sql + "\nSET 'parallelism.default' = '3';\n", null);
        second.getJobExecutionResult().get(3, TimeUnit.MINUTES);

        assertThat(subtasks(first.getJobID(), "partsCreated")).as("committers").isEqualTo(8);
        assertThat(subtasks(second.getJobID(), "partsCreated")).as("committers").isEqualTo(3);
        assertThat(partHashes(store, 1)).as("parts and manifests, byte for byte").isEqualTo(parts);
        assertThat(counter(second.getJobID(), "partsCreated")).isZero();
        assertThat(counter(second.getJobID(), "partsDivergent")).isZero();
        assertThat(counter(second.getJobID(), "partsCollapsed")).isEqualTo(published);
    }

    /**
     * A team that sets {@code pipeline.auto-generate-uids: false} has the planner name its
     * operators ({@code table.exec.uid.generation}); the table's own operators are named after it.
     */
    @Test
    void theExampleRunsWithoutGeneratedUids() throws Exception {
        StoreSpec store = StoreKind.FILESYSTEM.fresh();
        String sql =
                "SET 'pipeline.auto-generate-uids' = 'false';\n"
                        + "SET 'table.exec.uid.generation' = 'ALWAYS';\n"
                        + script(store, EXAMPLE.resolve("orders.jsonl"), 1);

        start(sql, null).getJobExecutionResult().get(3, TimeUnit.MINUTES);

        assertOnePartPerWindowAndBucket(store, 1, reference(0, 6));
    }

    @Test
    void twoInstancesAtOnceLeaveOneObjectPerPart() throws Exception {
        StoreSpec store = StoreKind.S3_MULTIPART.fresh();
        String sql = script(store, EXAMPLE.resolve("orders.jsonl"), 1);

        JobClient a = start(sql, null);
        JobClient b = start(sql, null);
        a.getJobExecutionResult().get(3, TimeUnit.MINUTES);
        b.getJobExecutionResult().get(3, TimeUnit.MINUTES);

        int parts = assertOnePartPerWindowAndBucket(store, 1, reference(0, 6));
        long created =
                counter(a.getJobID(), "partsCreated") + counter(b.getJobID(), "partsCreated");
        long collapsed =
                counter(a.getJobID(), "partsCollapsed") + counter(b.getJobID(), "partsCollapsed");
        System.out.printf(
                "FIGURES orders overlap: parts=%d created=%d collapsed=%d%n",
                parts, created, collapsed);
        assertThat(created + collapsed)
                .as("each instance committed every part")
                .isEqualTo(2L * parts);
        assertThat(collapsed)
                .as("the second copy of every part collapsed")
                .isGreaterThanOrEqualTo(parts);
        assertThat(
                        counter(a.getJobID(), "partsDivergent")
                                + counter(b.getJobID(), "partsDivergent"))
                .isZero();
    }

    /**
     * Version 1 reads hours 0-2 from a directory it watches and publishes the hours the watermark
     * passed (0 and 1), then stops with a savepoint. Version 2 resumes from it while hours 3-6
     * arrive: it publishes the rest (2-5; 6 stays open) into v=2 and leaves v=1 as it was.
     */
    @Test
    void aReplayIntoJobVersionTwoFromASavepointWritesItsOwnNamespaceAndLeavesVersionOne()
            throws Exception {
        StoreSpec store = StoreKind.FILESYSTEM.fresh();
        Path events = Files.createDirectories(tmp.resolve("events"));
        OrderEvents.write(events.resolve("hours-0-2.jsonl"), OrderEvents.lines(0, 3));
        JobClient v1 = start(watching(script(store, events, 1)), null);
        awaitPointer(store, 1, 2);
        String savepoint =
                v1.stopWithSavepoint(
                                false,
                                tmp.resolve("savepoints").toUri().toString(),
                                SavepointFormatType.CANONICAL)
                        .get(2, TimeUnit.MINUTES);
        Map<String, String> v1Objects = hashes(store, ObjectKeys.versionPrefix("orders", 1));

        OrderEvents.write(events.resolve("hours-3-6.jsonl"), OrderEvents.lines(3, 7));
        JobClient v2 = start(watching(script(store, events, 2)), savepoint);
        awaitPointer(store, 2, 6);
        v2.cancel().get(1, TimeUnit.MINUTES);

        Map<Long, List<String>> all = reference(0, 7);
        assertThat(hashes(store, ObjectKeys.versionPrefix("orders", 1)))
                .as("v1, byte for byte")
                .isEqualTo(v1Objects);
        assertOnePartPerWindowAndBucket(store, 1, windows(all, 0, 2));
        assertOnePartPerWindowAndBucket(store, 2, windows(all, 2, 6));
    }

    private JobClient start(String sql, String savepoint) {
        Configuration conf = new Configuration();
        if (savepoint != null) {
            conf.set(StateRecoveryOptions.SAVEPOINT_PATH, savepoint);
        }
        return SqlJob.start(
                StreamExecutionEnvironment.getExecutionEnvironment(conf),
                SqlScript.parse(sql),
                "orders");
    }

    private static String cli(String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        int code =
                Snapshots.run(args, new PrintStream(out, true, StandardCharsets.UTF_8), System.err);
        assertThat(code).as(out.toString(StandardCharsets.UTF_8)).isZero();
        return out.toString(StandardCharsets.UTF_8);
    }

    private static long counter(JobID job, String name) {
        // By group, not by identifier: a restarted task registers the same identifiers again.
        return REPORTER.getMetricsByGroup().entrySet().stream()
                .filter(g -> job.toString().equals(g.getKey().getAllVariables().get("<job_id>")))
                .map(g -> g.getValue().get(name))
                .filter(m -> m instanceof Counter)
                .mapToLong(m -> ((Counter) m).getCount())
                .sum();
    }

    /** How many subtasks of the job registered the metric. */
    private static long subtasks(JobID job, String name) {
        return REPORTER.getMetricsByGroup().entrySet().stream()
                .filter(g -> job.toString().equals(g.getKey().getAllVariables().get("<job_id>")))
                .filter(g -> g.getValue().containsKey(name))
                .map(g -> g.getKey().getAllVariables().get("<subtask_index>"))
                .distinct()
                .count();
    }

    private static long millis(LocalDateTime utc) {
        return utc.toInstant(ZoneOffset.UTC).toEpochMilli();
    }

    private static String get(ResultSet rs, int column) {
        try {
            return rs.getString(column);
        } catch (java.sql.SQLException e) {
            throw new IllegalStateException(e);
        }
    }
}
