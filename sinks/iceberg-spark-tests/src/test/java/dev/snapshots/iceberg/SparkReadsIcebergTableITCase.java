package dev.snapshots.iceberg;

import static org.assertj.core.api.Assertions.assertThat;

import dev.snapshots.iceberg.WindowTotals.Row;
import dev.snapshots.store.StoreSpec;
import dev.snapshots.testkit.IcebergCatalogs;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.execution.SparkPlan;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import scala.collection.JavaConverters;

/**
 * Spark, as a user queries the reader table: its own Iceberg catalog on the same JDBC database, its
 * own FileIO (Hadoop's, for the file:// locations), the table's main branch. It polls while a job
 * writes, window by window, and must never see part of a window, nor a window twice.
 */
class SparkReadsIcebergTableITCase {
    @RegisterExtension static final MiniClusterExtension CLUSTER = WindowTotals.cluster();

    private static final String TABLE = "snapshots.analytics.payments";
    private static final int PER_SECOND = 75; // the windows complete over 20 seconds

    @TempDir Path tmp;

    @Test
    void sparkSeesWholeWindowsWhileAJobWritesThenEveryWindowOnce() throws Exception {
        StoreSpec store = StoreSpec.local(tmp.resolve("store"));
        Map<String, String> catalog = IcebergCatalogs.sqlite(tmp.resolve("catalog.db"));
        Map<Long, List<Row>> reference =
                LocalSpark.byWindow(WindowTotals.reference(LocalSpark.PAYMENTS));

        try (SparkSession spark = spark(catalog)) {
            // Spark is up before the job starts: its first query takes seconds.
            spark.sql("SELECT 1").collect();
            JobClient job =
                    WindowTotals.start(
                            LocalSpark.PAYMENTS,
                            PER_SECOND,
                            WindowTotals.sink(
                                            store,
                                            1,
                                            IcebergTable.in(catalog, "analytics.payments"))
                                    ::writeWindows);
            List<Set<Long>> reads =
                    LocalSpark.whileRunning(
                            job,
                            WindowTotals.reference(LocalSpark.PAYMENTS),
                            () ->
                                    spark.catalog().tableExists(TABLE)
                                            ? Optional.of(rows(spark, ""))
                                            : Optional.empty());
            job.getJobExecutionResult().get();
            Set<Long> seenWhileWriting = new TreeSet<>();
            reads.forEach(seenWhileWriting::addAll);
            assertThat(seenWhileWriting).as("windows seen before the job ended").isNotEmpty();

            assertThat(rows(spark, ""))
                    .as("every window once, at the end")
                    .containsExactlyInAnyOrderElementsOf(
                            WindowTotals.reference(LocalSpark.PAYMENTS));

            long window = WindowTotals.START + 4 * WindowTotals.WINDOW;
            Dataset<org.apache.spark.sql.Row> query =
                    select(
                            spark,
                            "WHERE window_start = TIMESTAMP '"
                                    + Instant.ofEpochMilli(window).toString().replace('T', ' ')
                                    + "'");
            assertThat(LocalSpark.rows(query))
                    .as("a window's rows, its files found by their window_start bounds")
                    .containsExactlyInAnyOrderElementsOf(reference.get(window));
            assertThat(scanMetric(query, "resultDataFiles"))
                    .as("the files scanned: the window's parts, one per bucket")
                    .isEqualTo(WindowTotals.BUCKETS);
            assertThat(spark.sql("SELECT * FROM " + TABLE + ".files").count())
                    .as("the table's files")
                    .isEqualTo(LocalSpark.WINDOWS * WindowTotals.BUCKETS);
        }
    }

    /**
     * Spark in local mode with the table's catalog as a user configures it. Catalog tables are not
     * cached, so every query sees the newest commit. Iceberg's vectorized Parquet reader is off for
     * this session: in 1.10 it fails on the parts' TIMESTAMP(MILLIS) columns with a
     * ClassCastException (apache/iceberg#14430, fixed after 1.10 by #14499); the row reader
     * converts them to microseconds.
     */
    private SparkSession spark(Map<String, String> catalog) {
        SparkSession.Builder builder =
                LocalSpark.session(tmp)
                        .config("spark.sql.iceberg.vectorization.enabled", "false")
                        .config(
                                "spark.sql.catalog.snapshots",
                                "org.apache.iceberg.spark.SparkCatalog")
                        .config("spark.sql.catalog.snapshots.warehouse", tmp.toUri().toString())
                        .config("spark.sql.catalog.snapshots.cache-enabled", "false");
        // The followers' JDBC catalog properties (type, uri, ...) as they are.
        catalog.forEach(
                (key, value) -> builder.config("spark.sql.catalog.snapshots." + key, value));
        return builder.getOrCreate();
    }

    private static Dataset<org.apache.spark.sql.Row> select(SparkSession spark, String where) {
        return spark.sql(
                "SELECT device, window_start, payments, amount FROM " + TABLE + " " + where);
    }

    private static List<Row> rows(SparkSession spark, String where) {
        return LocalSpark.rows(select(spark, where));
    }

    /** A metric of the query's Iceberg scan, as its last execution reported it. */
    private static long scanMetric(Dataset<org.apache.spark.sql.Row> query, String name) {
        SparkPlan plan = query.queryExecution().executedPlan();
        return JavaConverters.seqAsJavaList(plan.collectLeaves()).stream()
                .filter(leaf -> leaf.metrics().contains(name))
                .mapToLong(leaf -> leaf.metrics().apply(name).value())
                .sum();
    }
}
