package dev.snapshots.table;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.snapshots.format.ColumnType;
import java.nio.file.Path;
import org.apache.flink.table.api.EnvironmentSettings;
import org.apache.flink.table.api.TableEnvironment;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The connector as the planner finds and plans it: discovered by its identifier, and refusing, as a
 * statement is planned and before anything runs, every table and query it could not publish exactly
 * once.
 */
class CanonicalSnapshotsTableFactoryTest {
    private static final String HOURLY =
            "SELECT window_start, window_end, customer, COUNT(*) AS orders"
                    + " FROM TABLE(TUMBLE(TABLE orders, DESCRIPTOR(ts), INTERVAL '1' HOUR))"
                    + " GROUP BY window_start, window_end, customer";

    @TempDir Path store;
    private TableEnvironment sql;

    @BeforeEach
    void orders() {
        sql = TableEnvironment.create(EnvironmentSettings.inStreamingMode());
        sql.executeSql(
                "CREATE TABLE orders (customer STRING, amount DECIMAL(10, 2), ts TIMESTAMP(3),"
                        + " WATERMARK FOR ts AS ts - INTERVAL '5' SECOND)"
                        + " WITH ('connector' = 'datagen', 'number-of-rows' = '10')");
    }

    @Test
    void aWindowAggregateIntoATableWithAPrimaryKeyIsPlanned() {
        create(
                "hourly",
                "window_start TIMESTAMP(3) NOT NULL, window_end TIMESTAMP(3) NOT NULL,"
                        + " customer STRING NOT NULL, orders BIGINT NOT NULL,"
                        + " PRIMARY KEY (window_start, window_end, customer) NOT ENFORCED",
                "'window' = '1 h'");

        // The window's rows go straight to the sink: no materializer of updates in between.
        assertThat(sql.explainSql("INSERT INTO hourly " + HOURLY))
                .contains(
                        "Sink(table=[default_catalog.default_database.hourly], fields=[window_start,"
                                + " window_end, customer, orders])\n"
                                + "+- Calc(select=[window_start, window_end, customer, orders])\n"
                                + "   +- GlobalWindowAggregate(groupBy=[customer]")
                .doesNotContain("Materializer");
    }

    /** The window's length is not among them: the rows give it. */
    @Test
    void missingRequiredOptionsAreNamed() {
        sql.executeSql(
                "CREATE TABLE hourly (window_start TIMESTAMP(3), window_end TIMESTAMP(3), customer"
                        + " STRING, orders BIGINT, PRIMARY KEY (customer) NOT ENFORCED)"
                        + " WITH ('connector' = 'canonical-snapshots', 'store' = '"
                        + store.toUri()
                        + "')");

        assertThatThrownBy(() -> sql.explainSql("INSERT INTO hourly " + HOURLY))
                .hasStackTraceContaining("Missing required options are:")
                .hasStackTraceContaining("buckets")
                .hasStackTraceContaining("job-version")
                .hasStackTraceContaining("pipeline")
                .rootCause()
                .message()
                .doesNotContain("window");
    }

    @Test
    void aTableWithoutWindowColumnsIsRefused() {
        create(
                "hourly",
                "customer STRING NOT NULL, orders BIGINT, PRIMARY KEY (customer) NOT ENFORCED",
                "'window' = '1 h'");

        assertThatThrownBy(
                        () ->
                                sql.explainSql(
                                        "INSERT INTO hourly SELECT customer, COUNT(*) FROM orders"
                                                + " GROUP BY customer"))
                .hasStackTraceContaining("needs columns window_start and window_end")
                .hasStackTraceContaining("it has no window_start");
    }

    @Test
    void aTableWithoutAPrimaryKeyIsRefused() {
        create(
                "hourly",
                "window_start TIMESTAMP(3), window_end TIMESTAMP(3), customer STRING,"
                        + " orders BIGINT",
                "'window' = '1 h'");

        assertThatThrownBy(() -> sql.explainSql("INSERT INTO hourly " + HOURLY))
                .hasStackTraceContaining("has no primary key");
    }

    @Test
    void aWindowThatDoesNotDivideADayIsRefused() {
        create(
                "hourly",
                "window_start TIMESTAMP(3) NOT NULL, window_end TIMESTAMP(3) NOT NULL,"
                        + " customer STRING NOT NULL, orders BIGINT NOT NULL,"
                        + " PRIMARY KEY (customer) NOT ENFORCED",
                "'window' = '7 min'");

        assertThatThrownBy(() -> sql.explainSql("INSERT INTO hourly " + HOURLY))
                .hasStackTraceContaining("window length must divide a day");
    }

    @Test
    void aColumnOfATypePartsDoNotHoldIsRefusedWithTheTypesTheyDo() {
        create(
                "hourly",
                "window_start TIMESTAMP(3) NOT NULL, window_end TIMESTAMP(3) NOT NULL,"
                        + " customer STRING NOT NULL, share FLOAT,"
                        + " PRIMARY KEY (customer) NOT ENFORCED",
                "'window' = '1 h'");

        assertThatThrownBy(
                        () ->
                                sql.explainSql(
                                        "INSERT INTO hourly SELECT window_start, window_end,"
                                                + " customer, CAST(0.5 AS FLOAT) FROM TABLE(TUMBLE("
                                                + "TABLE orders, DESCRIPTOR(ts), INTERVAL '1'"
                                                + " HOUR)) GROUP BY window_start, window_end,"
                                                + " customer"))
                .hasStackTraceContaining("column share of table")
                .hasStackTraceContaining("FLOAT")
                .hasStackTraceContaining(ColumnType.SUPPORTED);
    }

    /** A non-windowed GROUP BY updates its rows; published parts cannot change. */
    @Test
    void aQueryThatUpdatesItsRowsIsRefused() {
        create(
                "hourly",
                "window_start TIMESTAMP(3) NOT NULL, window_end TIMESTAMP(3) NOT NULL,"
                        + " customer STRING NOT NULL, orders BIGINT NOT NULL,"
                        + " PRIMARY KEY (customer) NOT ENFORCED",
                "'window' = '1 h'");

        assertThatThrownBy(
                        () ->
                                sql.explainSql(
                                        "INSERT INTO hourly SELECT MIN(ts), MAX(ts), customer,"
                                                + " COUNT(*) FROM orders GROUP BY customer"))
                .hasStackTraceContaining("doesn't support consuming update");
    }

    private void create(String table, String columns, String options) {
        sql.executeSql(
                "CREATE TABLE "
                        + table
                        + " ("
                        + columns
                        + ") WITH ('connector' = 'canonical-snapshots', 'store' = '"
                        + store.toUri()
                        + "', 'pipeline' = 'orders', 'job-version' = '1', 'buckets' = '4', "
                        + options
                        + ")");
    }
}
