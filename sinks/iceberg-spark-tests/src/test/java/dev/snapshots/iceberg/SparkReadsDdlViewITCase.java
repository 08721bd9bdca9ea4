package dev.snapshots.iceberg;

import static org.assertj.core.api.Assertions.assertThat;

import dev.snapshots.cli.Cli;
import dev.snapshots.iceberg.WindowTotals.Payment;
import dev.snapshots.iceberg.WindowTotals.Row;
import dev.snapshots.key.PartKind;
import dev.snapshots.progress.CompletionPointer;
import dev.snapshots.store.ObjectStore;
import dev.snapshots.store.StoreSpec;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code snapshots ddl --engine spark}, its statements as the command line prints them, run by
 * Spark while a job writes, again on each read as a user would: the view {@code payments_complete}
 * must return a window whole or not at all. The job writes through {@link LaggingStoreFactory}, so
 * Spark often lists a window with bucket 0's part still to come, as it would on S3; with the parts
 * alone (the view's join with the records taken out) this test fails.
 */
class SparkReadsDdlViewITCase {
    @RegisterExtension static final MiniClusterExtension CLUSTER = WindowTotals.cluster();

    private static final String PIPELINE = "payments";
    private static final int PER_SECOND = 50; // the windows complete over 30 seconds

    @TempDir Path tmp;

    @Test
    void theViewReturnsOnlyWholeWindowsWhileAJobWritesThenEveryWindow() throws Exception {
        StoreSpec store = StoreSpec.local(tmp.resolve("store"));
        StoreSpec writer = LaggingStoreFactory.over(tmp.resolve("store"));
        List<Row> reference = WindowTotals.reference(LocalSpark.PAYMENTS);

        try (SparkSession spark = LocalSpark.session(tmp).getOrCreate();
                ObjectStore reader = store.open()) {
            // Spark's first read of the view takes seconds (classes, generated code), more under
            // load: one over a finished run first, so that reads keep up with the job's windows.
            List<Payment> twoWindows = LocalSpark.PAYMENTS.subList(0, 300);
            StoreSpec finished = StoreSpec.local(tmp.resolve("finished"));
            WindowTotals.run(twoWindows, WindowTotals.sink(finished, 1, null));
            assertThat(complete(spark, finished))
                    .as("a finished run's windows")
                    .containsExactlyInAnyOrderElementsOf(WindowTotals.reference(twoWindows));

            JobClient job =
                    WindowTotals.start(
                            LocalSpark.PAYMENTS,
                            PER_SECOND,
                            WindowTotals.sink(writer, 1, null)::writeWindows);
            List<Set<Long>> reads =
                    LocalSpark.whileRunning(
                            job,
                            reference,
                            // Before the first complete window there is no record for the
                            // statements' JSON views to read, and Spark refuses a missing path.
                            () ->
                                    CompletionPointer.read(reader, PartKind.SNAPSHOT, PIPELINE, 1)
                                                    .isPresent()
                                            ? Optional.of(complete(spark, store))
                                            : Optional.empty());
            job.getJobExecutionResult().get();

            assertThat(reads)
                    .as("windows returned by each read while the job wrote")
                    .anyMatch(windows -> !windows.isEmpty() && windows.size() < LocalSpark.WINDOWS);
            assertThat(complete(spark, store))
                    .as("every window, after the job")
                    .containsExactlyInAnyOrderElementsOf(reference);
        }
    }

    /**
     * Runs every statement {@code snapshots ddl} prints, split at the semicolons that end them,
     * then reads the view. Again on each read: a temporary view keeps the files Spark listed when
     * it was created.
     */
    private static List<Row> complete(SparkSession spark, StoreSpec store) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code =
                Cli.run(
                        new String[] {
                            "ddl",
                            store.uri().toString(),
                            "--pipeline",
                            PIPELINE,
                            "--job-version",
                            "1",
                            "--engine",
                            "spark"
                        },
                        new PrintStream(out, true, StandardCharsets.UTF_8),
                        new PrintStream(err, true, StandardCharsets.UTF_8),
                        Cli.commands(Map.of()),
                        "snapshots");
        assertThat(code).as(err.toString(StandardCharsets.UTF_8)).isZero();
        for (String statement : out.toString(StandardCharsets.UTF_8).split(";\n")) {
            if (!statement.isBlank()) {
                spark.sql(statement);
            }
        }
        return LocalSpark.rows(
                spark.sql(
                        "SELECT device, window_start, payments, amount FROM "
                                + PIPELINE
                                + "_complete"));
    }
}
