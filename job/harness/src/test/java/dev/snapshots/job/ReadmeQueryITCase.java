package dev.snapshots.job;

import static org.assertj.core.api.Assertions.assertThat;

import dev.snapshots.harness.testutils.WindowRows;
import dev.snapshots.job.config.JobConfig;
import dev.snapshots.key.PartKind;
import dev.snapshots.progress.CompletionPointer;
import dev.snapshots.store.ObjectStore;
import dev.snapshots.store.StoreSpec;
import dev.snapshots.testkit.StoreKind;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The README's reader query, run as written by DuckDB over what the job published: only the bucket
 * ({@code s3://my-bucket/snapshots/}) becomes the local store's directory. Every window it returns
 * must have all its rows, equal to a reference computed from the generator's truth, not from the
 * job: after the job, and while it writes.
 */
class ReadmeQueryITCase {
    @RegisterExtension
    static final MiniClusterExtension CLUSTER =
            new MiniClusterExtension(
                    new MiniClusterResourceConfiguration.Builder()
                            .setNumberTaskManagers(1)
                            .setNumberSlotsPerTaskManager(4)
                            .build());

    private static final String BUCKET = "s3://my-bucket/snapshots/";

    @Test
    void theDuckDbQueryReturnsEveryWindowsRowsAsTheReferenceHasThem() throws Exception {
        StoreSpec store = StoreKind.FILESYSTEM.fresh();
        JobConfig config = config(store, "--windows", "3");
        SnapshotJob.start(StreamExecutionEnvironment.getExecutionEnvironment(), config)
                .getJobExecutionResult()
                .get();

        Map<String, List<String>> expected = WindowRows.expected(config);
        assertThat(expected).as("the reference's windows").hasSizeGreaterThan(2);
        try (Connection duckdb = DriverManager.getConnection("jdbc:duckdb:")) {
            assertThat(WindowRows.query(duckdb, readmeQuery(store))).isEqualTo(expected);
        }
    }

    /**
     * Polled while a job at parallelism 2 writes: its writer subtasks publish a window's parts one
     * by one, so a query that read the parts alone would return windows with some of their buckets.
     * Nobody promotes: a new pipeline's first version is what readers see.
     */
    @Test
    void whileTheJobWritesTheQueryReturnsOnlyWholeWindows() throws Exception {
        StoreSpec store = StoreKind.FILESYSTEM.fresh();
        JobConfig config =
                config(
                        store,
                        "--windows",
                        "12",
                        "--events-per-second",
                        "1500",
                        "--parallelism",
                        "2");
        Map<String, List<String>> expected = WindowRows.expected(config);
        JobClient job =
                SnapshotJob.start(StreamExecutionEnvironment.getExecutionEnvironment(), config);
        TreeSet<Integer> seenWhileRunning = new TreeSet<>();
        int polls = 0;
        try (Connection duckdb = DriverManager.getConnection("jdbc:duckdb:");
                ObjectStore reader = store.open()) {
            // Until the first window is complete there are no records to read.
            while (CompletionPointer.read(reader, PartKind.SNAPSHOT, "telemetry", 1).isEmpty()) {
                assertThat(job.getJobStatus().get().isGloballyTerminalState())
                        .as("the job ended before its first window was complete")
                        .isFalse();
                Thread.sleep(20);
            }
            String sql = readmeQuery(store);
            while (!job.getJobStatus().get().isGloballyTerminalState()) {
                Map<String, List<String>> read = WindowRows.query(duckdb, sql);
                polls++;
                read.forEach(
                        (window, rows) ->
                                assertThat(rows)
                                        .as("window %s, as the query returned it", window)
                                        .isEqualTo(expected.get(window)));
                seenWhileRunning.add(read.size());
            }
            job.getJobExecutionResult().get(2, TimeUnit.MINUTES);
            assertThat(WindowRows.query(duckdb, sql)).as("after the job").isEqualTo(expected);
        }
        System.out.printf(
                "[figures] %d polls while the job wrote, windows returned: %s%n",
                polls, seenWhileRunning);
        assertThat(seenWhileRunning)
                .as("windows returned by polls while the job wrote")
                .anyMatch(n -> n > 0 && n < expected.size());
    }

    private static JobConfig config(StoreSpec store, String... more) {
        String[] args = new String[4 + more.length];
        args[0] = "--store";
        args[1] = store.uri().toString();
        args[2] = "--checkpoint-interval";
        args[3] = "300ms";
        System.arraycopy(more, 0, args, 4, more.length);
        return JobConfig.parse(args);
    }

    /** The README's DuckDB block as written, over {@code store} instead of the bucket. */
    private static String readmeQuery(StoreSpec store) throws Exception {
        String readme =
                Files.readString(Path.of(System.getProperty("snapshots.root"), "README.md"));
        String sql = readme.substring(readme.indexOf("```sql\n-- DuckDB") + "```sql\n".length());
        sql = sql.substring(0, sql.indexOf("```")).trim();
        assertThat(sql).contains(BUCKET + "telemetry/");
        return sql.replace(BUCKET, Path.of(store.uri()) + "/");
    }
}
