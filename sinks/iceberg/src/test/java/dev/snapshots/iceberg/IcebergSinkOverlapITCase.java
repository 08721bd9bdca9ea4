package dev.snapshots.iceberg;

import static dev.snapshots.iceberg.IcebergTableChecks.rows;
import static org.assertj.core.api.Assertions.assertThat;

import dev.snapshots.iceberg.WindowTotals.Payment;
import dev.snapshots.iceberg.WindowTotals.Row;
import dev.snapshots.iceberg.WindowTotals.Total;
import dev.snapshots.store.StoreSpec;
import dev.snapshots.testkit.IcebergCatalogs;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Consumer;
import java.util.stream.Collectors;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.table.data.DecimalData;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.StringData;
import org.apache.flink.table.data.TimestampData;
import org.apache.flink.table.runtime.typeutils.InternalTypeInfo;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.SupportsNamespaces;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.flink.FlinkSchemaUtil;
import org.apache.iceberg.flink.TableLoader;
import org.apache.iceberg.flink.sink.FlinkSink;
import org.apache.iceberg.relocated.com.google.common.collect.Iterables;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The blue/green overlap, measured on both sinks: two executions of one job (two job ids) over the
 * same input, at the same time, each writing its totals through Iceberg's own Flink sink into one
 * table and through this sink's reader table into another. Iceberg's sink deduplicates per job id
 * ({@code flink.job-id}, {@code flink.max-committed-checkpoint-id}), so each execution commits its
 * own files and readers see every row twice; the reader table commits each window once.
 */
class IcebergSinkOverlapITCase {
    private static final Logger LOG = LoggerFactory.getLogger(IcebergSinkOverlapITCase.class);

    @RegisterExtension static final MiniClusterExtension CLUSTER = WindowTotals.cluster(2);

    private static final int WINDOWS = 8;
    private static final List<Payment> PAYMENTS = WindowTotals.payments(13, 2_000, WINDOWS);

    @TempDir Path tmp;

    @Test
    void underAnOverlapIcebergsOwnSinkDuplicatesEveryRowAndTheReaderTableNone() throws Exception {
        StoreSpec store = StoreSpec.local(tmp.resolve("store"));
        Map<String, String> catalog = IcebergCatalogs.sqlite(tmp.resolve("catalog.db"));
        IcebergTable ours = IcebergTable.in(catalog, "analytics.payments");
        TableIdentifier theirs = TableIdentifier.parse("analytics.payments_iceberg_sink");
        Schema schema = IcebergSchemas.of(WindowTotals.format().schema());
        try (IcebergTable.Opened opened = ours.open(store)) {
            Catalog c = opened.catalog();
            ((SupportsNamespaces) c).createNamespace(Namespace.of("analytics"));
            c.buildTable(theirs, schema)
                    .withPartitionSpec(IcebergSchemas.spec(schema))
                    .withLocation(StoreFileIO.rootOf(store) + "/iceberg-sink")
                    .create();
        }
        TableLoader loader = FlinkTables.loader(catalog, store, theirs);

        // Blue and green: the same job, the same input, at the same time.
        List<JobClient> executions =
                List.of(
                        WindowTotals.start(PAYMENTS, 400, both(store, ours, loader, schema)),
                        WindowTotals.start(PAYMENTS, 400, both(store, ours, loader, schema)));
        for (JobClient execution : executions) {
            execution.getJobExecutionResult().get();
        }

        List<Row> reference = WindowTotals.reference(PAYMENTS);
        Table t = IcebergTableChecks.load(ours, store);
        Map<String, Long> icebergSink = copies(load(loader));
        Map<String, Long> readerTable = copies(t);
        LOG.info(
                "overlap of 2 executions, {} windows, {} rows in the reference: Iceberg's sink {}"
                        + " rows, {} (window, device) twice or more, {} snapshots; the reader"
                        + " table {} rows, {} twice or more, {} snapshots",
                WINDOWS,
                reference.size(),
                sum(icebergSink),
                icebergSink.values().stream().filter(n -> n > 1).count(),
                Iterables.size(load(loader).snapshots()),
                sum(readerTable),
                readerTable.values().stream().filter(n -> n > 1).count(),
                Iterables.size(t.snapshots()));

        assertThat(readerTable)
                .as("the reader table: every (window, device) once")
                .hasSize(reference.size())
                .allSatisfy((key, n) -> assertThat(n).as(key).isEqualTo(1));
        assertThat(rows(t, t.currentSnapshot())).containsExactlyInAnyOrderElementsOf(reference);
        // At least once per execution: a loaded run of CI's build saw the last window three times.
        assertThat(icebergSink)
                .as("Iceberg's own sink: every (window, device) at least once per execution")
                .hasSize(reference.size())
                .allSatisfy((key, n) -> assertThat(n).as(key).isGreaterThanOrEqualTo(2));
    }

    /** Writes the totals into both tables: through Iceberg's sink and through this one. */
    private static Consumer<DataStream<Total>> both(
            StoreSpec store, IcebergTable ours, TableLoader theirs, Schema schema) {
        RowType type = FlinkSchemaUtil.convert(schema);
        List<String> columns = type.getFieldNames();
        return totals -> {
            WindowTotals.sink(store, 1, ours).writeWindows(totals);
            FlinkSink.forRowData(
                            totals.map(total -> row(columns, total))
                                    .returns(InternalTypeInfo.of(type)))
                    .tableLoader(theirs)
                    .append();
        };
    }

    private static RowData row(List<String> columns, Total total) {
        GenericRowData row = new GenericRowData(columns.size());
        for (int i = 0; i < columns.size(); i++) {
            row.setField(
                    i,
                    switch (columns.get(i)) {
                        case "device" -> StringData.fromString(total.device);
                        case "window_start" -> TimestampData.fromInstant(total.window_start);
                        case "payments" -> total.payments;
                        case "amount" -> DecimalData.fromBigDecimal(total.amount, 12, 2);
                        default -> throw new IllegalArgumentException(columns.get(i));
                    });
        }
        return row;
    }

    private static Table load(TableLoader loader) {
        loader.open();
        return loader.loadTable();
    }

    /** How often each (window, device) is in the table's main. */
    private static Map<String, Long> copies(Table t) throws Exception {
        return rows(t, t.currentSnapshot()).stream()
                .collect(
                        Collectors.groupingBy(
                                r -> r.windowStart() + "/" + r.device(),
                                TreeMap::new,
                                Collectors.counting()));
    }

    private static long sum(Map<String, Long> copies) {
        return copies.values().stream().mapToLong(Long::longValue).sum();
    }
}
