package dev.snapshots.iceberg;

import static org.assertj.core.api.Assertions.assertThat;

import dev.snapshots.iceberg.WindowTotals.Payment;
import dev.snapshots.iceberg.WindowTotals.Row;
import dev.snapshots.store.StoreSpec;
import dev.snapshots.testkit.IcebergCatalogs;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Collectors;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.execution.SparkPlan;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import scala.collection.JavaConverters;

/**
 * Spark, as a user queries the reader table: its own Iceberg catalog on the same JDBC database, its
 * own FileIO (Hadoop's, for the file:// locations), the table's main branch. It polls while a job
 * writes, window by window, and must never see part of a window, nor a window twice.
 */
class SparkReadsIcebergTableITCase {
    private static final Logger LOG = LoggerFactory.getLogger(SparkReadsIcebergTableITCase.class);

    @RegisterExtension static final MiniClusterExtension CLUSTER = WindowTotals.cluster();

    private static final String TABLE = "snapshots.analytics.payments";
    private static final int WINDOWS = 10;
    private static final List<Payment> PAYMENTS = WindowTotals.payments(5, 1_500, WINDOWS);
    private static final int PER_SECOND = 75; // the windows complete over 20 seconds

    @TempDir Path tmp;

    @Test
    void sparkSeesWholeWindowsWhileAJobWritesThenEveryWindowOnce() throws Exception {
        StoreSpec store = StoreSpec.local(tmp.resolve("store"));
        Map<String, String> catalog = IcebergCatalogs.sqlite(tmp.resolve("catalog.db"));
        Map<Long, List<Row>> reference =
                WindowTotals.reference(PAYMENTS).stream()
                        .collect(Collectors.groupingBy(Row::windowStart, TreeMap::new, toList()));

        try (SparkSession spark = spark(catalog)) {
            // Spark is up before the job starts: its first query takes seconds.
            spark.sql("SELECT 1").collect();
            JobClient job =
                    WindowTotals.start(
                            PAYMENTS,
                            PER_SECOND,
                            WindowTotals.sink(
                                            store,
                                            1,
                                            IcebergTable.in(catalog, "analytics.payments"))
                                    ::writeWindows);
            Set<Long> seenWhileWriting = new TreeSet<>();
            int polls = 0;
            while (!job.getJobStatus().get().isGloballyTerminalState()) {
                if (spark.catalog().tableExists(TABLE)) {
                    Map<Long, List<Row>> seen = byWindow(rows(spark, ""));
                    seen.forEach(
                            (window, rows) ->
                                    assertThat(rows)
                                            .as("window %s while the job writes", window)
                                            .containsExactlyInAnyOrderElementsOf(
                                                    reference.get(window)));
                    seenWhileWriting.addAll(seen.keySet());
                    polls++;
                }
                Thread.sleep(250);
            }
            job.getJobExecutionResult().get();
            LOG.info(
                    "{} polls while the job wrote saw {} of {} windows",
                    polls,
                    seenWhileWriting.size(),
                    reference.size());
            assertThat(seenWhileWriting).as("windows seen before the job ended").isNotEmpty();

            assertThat(rows(spark, ""))
                    .as("every window once, at the end")
                    .containsExactlyInAnyOrderElementsOf(WindowTotals.reference(PAYMENTS));

            long window = WindowTotals.START + 4 * WindowTotals.WINDOW;
            Dataset<org.apache.spark.sql.Row> query =
                    select(
                            spark,
                            "WHERE window_start = TIMESTAMP '"
                                    + Instant.ofEpochMilli(window).toString().replace('T', ' ')
                                    + "'");
            assertThat(rows(query))
                    .as("a window's rows, its files found by their window_start bounds")
                    .containsExactlyInAnyOrderElementsOf(reference.get(window));
            assertThat(scanMetric(query, "resultDataFiles"))
                    .as("the files scanned: the window's parts, one per bucket")
                    .isEqualTo(WindowTotals.BUCKETS);
            assertThat(spark.sql("SELECT * FROM " + TABLE + ".files").count())
                    .as("the table's files")
                    .isEqualTo(WINDOWS * WindowTotals.BUCKETS);
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
                SparkSession.builder()
                        .master("local[1]")
                        .appName("readers")
                        .config("spark.ui.enabled", "false")
                        .config("spark.driver.bindAddress", "127.0.0.1")
                        .config("spark.driver.host", "127.0.0.1")
                        .config("spark.local.dir", tmp.resolve("spark").toString())
                        .config(
                                "spark.sql.warehouse.dir",
                                tmp.resolve("spark-warehouse").toString())
                        .config("spark.sql.shuffle.partitions", "1")
                        .config("spark.sql.adaptive.enabled", "false")
                        .config("spark.sql.session.timeZone", "UTC")
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
        return rows(select(spark, where));
    }

    private static List<Row> rows(Dataset<org.apache.spark.sql.Row> query) {
        List<Row> rows = new ArrayList<>();
        for (org.apache.spark.sql.Row r : query.collectAsList()) {
            rows.add(
                    new Row(
                            r.getString(0),
                            r.getTimestamp(1).getTime(),
                            r.getLong(2),
                            r.getDecimal(3)));
        }
        return rows;
    }

    private static Map<Long, List<Row>> byWindow(List<Row> rows) {
        return rows.stream()
                .collect(Collectors.groupingBy(Row::windowStart, TreeMap::new, toList()));
    }

    private static java.util.stream.Collector<Row, ?, List<Row>> toList() {
        return Collectors.toList();
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
