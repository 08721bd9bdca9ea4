package dev.snapshots.iceberg;

import static org.assertj.core.api.Assertions.assertThat;

import dev.snapshots.iceberg.WindowTotals.Payment;
import dev.snapshots.iceberg.WindowTotals.Row;
import dev.snapshots.store.StoreSpec;
import dev.snapshots.testkit.IcebergCatalogs;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.runtime.typeutils.InternalTypeInfo;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.flink.util.CloseableIterator;
import org.apache.iceberg.flink.FlinkSchemaUtil;
import org.apache.iceberg.flink.TableLoader;
import org.apache.iceberg.flink.source.IcebergSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Flink's own Iceberg source (iceberg-flink-runtime, as a Flink user has it in lib/) reads the
 * reader table's main branch: the canonical parts, through the name mapping, with its own Parquet
 * reader. Its files are read through the sink's store ({@link StoreFileIO}): this module's Hadoop
 * is trimmed to what Parquet needs, too little for HadoopFileIO; a Flink with Hadoop in lib/ can
 * use that, or S3FileIO, as Spark does.
 */
class FlinkIcebergSourceITCase {
    @RegisterExtension static final MiniClusterExtension CLUSTER = WindowTotals.cluster();

    private static final List<Payment> PAYMENTS = WindowTotals.payments(11, 2_000, 6);

    @TempDir Path tmp;

    @Test
    void flinksIcebergSourceReadsEveryRowOfMainOnce() throws Exception {
        StoreSpec store = StoreSpec.local(tmp.resolve("store"));
        Map<String, String> catalog = IcebergCatalogs.sqlite(tmp.resolve("catalog.db"));
        IcebergTable table = IcebergTable.in(catalog, "analytics.payments");
        WindowTotals.run(PAYMENTS, WindowTotals.sink(store, 1, table));

        assertThat(read(catalog, table, store))
                .containsExactlyInAnyOrderElementsOf(WindowTotals.reference(PAYMENTS));
    }

    /** main, read in batch by Flink's Iceberg source, through the JDBC catalog. */
    private List<Row> read(Map<String, String> followers, IcebergTable table, StoreSpec store)
            throws Exception {
        TableLoader loader = FlinkTables.loader(followers, store, table.identifier());
        loader.open();
        RowType type = FlinkSchemaUtil.convert(loader.loadTable().schema());
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setParallelism(2);
        List<Row> rows = new ArrayList<>();
        try (CloseableIterator<RowData> read =
                env.fromSource(
                                IcebergSource.forRowData()
                                        .tableLoader(loader)
                                        .streaming(false)
                                        .build(),
                                WatermarkStrategy.noWatermarks(),
                                "iceberg",
                                InternalTypeInfo.of(type))
                        .executeAndCollect("read main")) {
            read.forEachRemaining(
                    r ->
                            rows.add(
                                    new Row(
                                            r.getString(type.getFieldIndex("device")).toString(),
                                            r.getTimestamp(type.getFieldIndex("window_start"), 6)
                                                    .getMillisecond(),
                                            r.getLong(type.getFieldIndex("payments")),
                                            r.getDecimal(type.getFieldIndex("amount"), 12, 2)
                                                    .toBigDecimal())));
        }
        return rows;
    }
}
