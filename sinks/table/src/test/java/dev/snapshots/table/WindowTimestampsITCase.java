package dev.snapshots.table;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;
import org.apache.flink.table.api.EnvironmentSettings;
import org.apache.flink.table.api.TableEnvironment;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What only the rows can tell: a query whose windows are not the table's fails its job on the first
 * row, naming both lengths, before any part of it is published.
 */
class WindowTimestampsITCase {
    @TempDir Path store;

    @Test
    void rowsOfAnotherWindowLengthFailTheJobAndPublishNothing() throws Exception {
        TableEnvironment sql = TableEnvironment.create(EnvironmentSettings.inStreamingMode());
        sql.executeSql(
                "CREATE TABLE orders (customer STRING, ts TIMESTAMP(3),"
                        + " WATERMARK FOR ts AS ts - INTERVAL '5' SECOND) WITH ("
                        + "'connector' = 'datagen', 'number-of-rows' = '50',"
                        + " 'fields.customer.length' = '2')");
        sql.executeSql(
                "CREATE TABLE hourly (window_start TIMESTAMP(3) NOT NULL, window_end TIMESTAMP(3)"
                        + " NOT NULL, customer STRING NOT NULL, orders BIGINT NOT NULL,"
                        + " PRIMARY KEY (window_start, window_end, customer) NOT ENFORCED) WITH ("
                        + "'connector' = 'canonical-snapshots', 'store' = '"
                        + store.toUri()
                        + "', 'pipeline' = 'orders', 'job-version' = '1', 'buckets' = '2',"
                        + " 'window' = '1 h')");

        assertThatThrownBy(
                        () ->
                                sql.executeSql(
                                                "INSERT INTO hourly SELECT window_start,"
                                                        + " window_end, customer, COUNT(*) FROM"
                                                        + " TABLE(TUMBLE(TABLE orders,"
                                                        + " DESCRIPTOR(ts), INTERVAL '30'"
                                                        + " MINUTES)) GROUP BY window_start,"
                                                        + " window_end, customer")
                                        .await())
                .hasStackTraceContaining("table hourly was given a row of the window")
                .hasStackTraceContaining("PT30M long, while the table's 'window' is PT1H");
        try (Stream<Path> files = Files.walk(store)) {
            assertThat(files.map(p -> store.relativize(p).toString()))
                    .noneMatch(p -> p.endsWith(".parquet"));
        }
    }
}
