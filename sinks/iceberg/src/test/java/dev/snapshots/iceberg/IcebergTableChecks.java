package dev.snapshots.iceberg;

import dev.snapshots.iceberg.WindowTotals.Payment;
import dev.snapshots.iceberg.WindowTotals.Row;
import dev.snapshots.progress.ReaderTable;
import dev.snapshots.store.StoreSpec;
import java.io.IOException;
import java.math.BigDecimal;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.List;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.expressions.Expression;
import org.apache.iceberg.expressions.Expressions;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.util.SnapshotUtil;

/**
 * What the reader table's tests read back, whatever the catalog: the input, its reference, and the
 * table as a reader sees it (windows committed per branch, rows, data files).
 */
final class IcebergTableChecks {
    static final int WINDOWS = 12;
    static final List<Payment> PAYMENTS = WindowTotals.payments(7, 3_000, WINDOWS);

    private IcebergTableChecks() {}

    /** Two slots: WindowTotals runs at parallelism 2. */
    static MiniClusterExtension cluster() {
        return new MiniClusterExtension(
                new MiniClusterResourceConfiguration.Builder()
                        .setNumberTaskManagers(1)
                        .setNumberSlotsPerTaskManager(2)
                        .build());
    }

    /** Job version {@code jobVersion}'s output, as a follower outside the job sees it. */
    static ReaderTable.Output output(StoreSpec store, int jobVersion) {
        return new ReaderTable.Output(
                store,
                WindowTotals.sink(store, jobVersion, null).config().pointerScope(),
                WindowTotals.format().schema());
    }

    static Table load(IcebergTable table, StoreSpec store) {
        IcebergTable.Opened opened = table.open(store);
        return opened.catalog().loadTable(table.identifier());
    }

    static List<Long> referenceWindows() {
        return reference().stream().map(Row::windowStart).distinct().sorted().toList();
    }

    static List<Row> reference() {
        return WindowTotals.reference(PAYMENTS);
    }

    /** The windows the branch's snapshots added, oldest first. */
    static List<Long> windowsCommitted(Table t, String branch) {
        List<Long> windows = new ArrayList<>();
        for (Snapshot s : SnapshotUtil.ancestorsOf(t.snapshot(branch).snapshotId(), t::snapshot)) {
            String start = s.summary().get(IcebergWindows.WINDOW_START_MILLIS);
            if (start != null) {
                windows.add(0, Long.parseLong(start));
            }
        }
        return windows;
    }

    static List<Row> rows(Table t, Snapshot snapshot) throws IOException {
        return rows(t, snapshot, Expressions.alwaysTrue());
    }

    /** The rows of a snapshot that match a filter, which Iceberg's reader pushes down. */
    static List<Row> rows(Table t, Snapshot snapshot, Expression filter) throws IOException {
        List<Row> rows = new ArrayList<>();
        try (CloseableIterable<Record> records =
                IcebergGenerics.read(t).useSnapshot(snapshot.snapshotId()).where(filter).build()) {
            for (Record r : records) {
                rows.add(
                        new Row(
                                (String) r.getField("device"),
                                ((OffsetDateTime) r.getField("window_start"))
                                        .toInstant()
                                        .toEpochMilli(),
                                (Long) r.getField("payments"),
                                (BigDecimal) r.getField("amount")));
            }
        }
        return rows;
    }

    /** Every data file every snapshot added: a file registered twice appears twice. */
    static List<String> dataFiles(Table t) {
        List<String> files = new ArrayList<>();
        for (Snapshot s : t.snapshots()) {
            for (DataFile f : s.addedDataFiles(t.io())) {
                files.add(f.location());
            }
        }
        return files;
    }
}
