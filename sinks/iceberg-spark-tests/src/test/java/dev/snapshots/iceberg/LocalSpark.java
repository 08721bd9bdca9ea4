package dev.snapshots.iceberg;

import static org.assertj.core.api.Assertions.assertThat;

import dev.snapshots.iceberg.WindowTotals.Payment;
import dev.snapshots.iceberg.WindowTotals.Row;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import java.util.stream.Collectors;
import org.apache.flink.core.execution.JobClient;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.SparkSession;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Spark in local mode as this module's readers run it, and what they compare: the rows of {@link
 * WindowTotals}' output as Spark returns them, read again and again while a job writes.
 */
final class LocalSpark {
    private static final Logger LOG = LoggerFactory.getLogger(LocalSpark.class);

    /** What the job writes in every test here: ten windows of about 150 payments. */
    static final int WINDOWS = 10;

    static final List<Payment> PAYMENTS = WindowTotals.payments(5, 1_500, WINDOWS);

    private LocalSpark() {}

    /**
     * One thread, no UI, no adaptive plans, its scratch space under {@code tmp}. UTC, so the rows'
     * {@code window_start} prints as the store's directories name it.
     */
    static SparkSession.Builder session(Path tmp) {
        return SparkSession.builder()
                .master("local[1]")
                .appName("readers")
                .config("spark.ui.enabled", "false")
                .config("spark.driver.bindAddress", "127.0.0.1")
                .config("spark.driver.host", "127.0.0.1")
                .config("spark.local.dir", tmp.resolve("spark").toString())
                .config("spark.sql.warehouse.dir", tmp.resolve("spark-warehouse").toString())
                .config("spark.sql.shuffle.partitions", "1")
                .config("spark.sql.adaptive.enabled", "false")
                .config("spark.sql.session.timeZone", "UTC");
    }

    /** A query's rows, its columns {@code device, window_start, payments, amount} in order. */
    static List<Row> rows(Dataset<org.apache.spark.sql.Row> query) {
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

    static Map<Long, List<Row>> byWindow(List<Row> rows) {
        return rows.stream()
                .collect(
                        Collectors.groupingBy(Row::windowStart, TreeMap::new, Collectors.toList()));
    }

    /**
     * Reads until the job ends, each window of each read compared with the reference: a reader must
     * never see part of a window, nor a window twice. {@code read} is empty while there is nothing
     * to read yet.
     *
     * @return the windows each read returned, in order
     */
    static List<Set<Long>> whileRunning(
            JobClient job, List<Row> reference, Callable<Optional<List<Row>>> read)
            throws Exception {
        Map<Long, List<Row>> expected = byWindow(reference);
        List<Set<Long>> reads = new ArrayList<>();
        while (!job.getJobStatus().get().isGloballyTerminalState()) {
            Optional<List<Row>> rows = read.call();
            if (rows.isPresent()) {
                Map<Long, List<Row>> seen = byWindow(rows.get());
                seen.forEach(
                        (window, windowRows) ->
                                assertThat(windowRows)
                                        .as("window %s while the job writes", window)
                                        .containsExactlyInAnyOrderElementsOf(
                                                expected.getOrDefault(window, List.of())));
                reads.add(seen.keySet());
            }
            Thread.sleep(250);
        }
        LOG.info(
                "{} reads while the job wrote; windows each returned: {}",
                reads.size(),
                reads.stream().map(Set::size).toList());
        return reads;
    }
}
