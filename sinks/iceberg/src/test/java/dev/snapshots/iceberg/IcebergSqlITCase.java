package dev.snapshots.iceberg;

import static org.assertj.core.api.Assertions.assertThat;

import dev.snapshots.iceberg.WindowTotals.Payment;
import dev.snapshots.iceberg.WindowTotals.Row;
import dev.snapshots.store.StoreSpec;
import dev.snapshots.testkit.IcebergCatalogs;
import java.math.BigDecimal;
import java.nio.file.Path;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.api.DataTypes;
import org.apache.flink.table.api.Schema;
import org.apache.flink.table.api.bridge.java.StreamTableEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.io.CloseableIterable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Iceberg table opted into from a SQL table's options ({@code 'iceberg.table'} and {@code
 * 'iceberg.catalog.*'}): a window TVF's rows land in it once per window, equal to the reference.
 */
class IcebergSqlITCase {
    @RegisterExtension
    static final MiniClusterExtension CLUSTER =
            new MiniClusterExtension(
                    new MiniClusterResourceConfiguration.Builder()
                            .setNumberTaskManagers(1)
                            .setNumberSlotsPerTaskManager(2)
                            .build());

    private static final List<Payment> PAYMENTS = WindowTotals.payments(11, 2_000, 6);

    @TempDir Path tmp;

    @Test
    void aSqlTableWithIcebergOptionsFillsTheIcebergTableOncePerWindow() throws Exception {
        StoreSpec store = StoreSpec.local(tmp.resolve("store"));
        Map<String, String> catalog = IcebergCatalogs.sqlite(tmp.resolve("catalog.db"));
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setParallelism(2);
        env.enableCheckpointing(100);
        StreamTableEnvironment sql = StreamTableEnvironment.create(env);
        sql.getConfig().set("table.local-time-zone", "UTC");
        sql.createTemporaryView(
                "payments",
                env.fromData(Payment.class, PAYMENTS.toArray(Payment[]::new))
                        .assignTimestampsAndWatermarks(
                                WatermarkStrategy.<Payment>forMonotonousTimestamps()
                                        .withTimestampAssigner((p, t) -> p.timeMillis)),
                Schema.newBuilder()
                        .columnByExpression("amount_", "CAST(amount AS DECIMAL(12, 2))")
                        .columnByMetadata("ts", DataTypes.TIMESTAMP_LTZ(3), "rowtime")
                        .watermark("ts", "SOURCE_WATERMARK()")
                        .build());
        StringBuilder icebergOptions = new StringBuilder();
        catalog.forEach(
                (k, v) ->
                        icebergOptions.append(
                                String.format(", 'iceberg.catalog.%s' = '%s'", k, v)));
        sql.executeSql(
                "CREATE TABLE totals (window_start TIMESTAMP(3) NOT NULL, window_end TIMESTAMP(3)"
                        + " NOT NULL, device STRING NOT NULL, payments BIGINT NOT NULL,"
                        + " amount DECIMAL(12, 2), PRIMARY KEY (window_start, window_end, device)"
                        + " NOT ENFORCED) WITH ('connector' = 'canonical-snapshots', 'store' = '"
                        + store.uri()
                        + "', 'pipeline' = 'payments', 'job-version' = '1', 'buckets' = '4',"
                        + " 'window' = '10 min', 'iceberg.table' = 'analytics.totals'"
                        + icebergOptions
                        + ")");
        sql.executeSql(
                        "INSERT INTO totals SELECT window_start, window_end, device, COUNT(*),"
                                + " SUM(amount_) FROM TABLE(TUMBLE(TABLE payments, DESCRIPTOR(ts),"
                                + " INTERVAL '10' MINUTES)) GROUP BY window_start, window_end,"
                                + " device")
                .await();

        IcebergTable table = IcebergTable.in(catalog, "analytics.totals");
        Table t = table.open(store).catalog().loadTable(table.identifier());
        List<Row> rows = new ArrayList<>();
        try (CloseableIterable<Record> records = IcebergGenerics.read(t).build()) {
            for (Record r : records) {
                rows.add(
                        new Row(
                                (String) r.getField("device"),
                                ((LocalDateTime) r.getField("window_start"))
                                        .toInstant(ZoneOffset.UTC)
                                        .toEpochMilli(),
                                (Long) r.getField("payments"),
                                (BigDecimal) r.getField("amount")));
            }
        }
        assertThat(rows).containsExactlyInAnyOrderElementsOf(WindowTotals.reference(PAYMENTS));
        assertThat(IcebergTableChecks.windowsCommitted(t, "v1"))
                .as("one commit per window")
                .doesNotHaveDuplicates()
                .hasSize(6);
    }
}
