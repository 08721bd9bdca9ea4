package dev.snapshots.iceberg;

import dev.snapshots.iceberg.WindowTotals.Row;
import dev.snapshots.store.StoreSpec;
import java.io.IOException;
import java.math.BigDecimal;
import java.nio.file.Path;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.iceberg.CatalogUtil;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.expressions.Expression;
import org.apache.iceberg.expressions.Expressions;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.util.SnapshotUtil;

/** The reader table's test fixtures: its catalog, and the table as readers and auditors see it. */
final class IcebergTables {
    private IcebergTables() {}

    /**
     * A JDBC catalog in SQLite. Followers in several tasks use it at once: they wait for each
     * other's writes (SQLite locks the whole file) instead of failing. Its tables are created here,
     * once: Iceberg's check for them leaves a statement open on its connection, which holds a read
     * lock on the whole file and blocks every writer.
     */
    static Map<String, String> sqliteCatalog(Path db) throws Exception {
        Map<String, String> properties =
                Map.of(
                        "type",
                        "jdbc",
                        "uri",
                        "jdbc:sqlite:" + db,
                        "warehouse",
                        db.getParent().toUri().toString(),
                        "jdbc.busy_timeout",
                        "60000");
        try (AutoCloseable tables =
                (AutoCloseable) CatalogUtil.buildIcebergCatalog("create", properties, null)) {
            // created
        }
        Map<String, String> followers = new TreeMap<>(properties);
        followers.put("jdbc.init-catalog-tables", "false");
        followers.remove("warehouse");
        return followers;
    }

    /** The table as the sink's followers open it (their catalog, the store's FileIO). */
    static Table load(IcebergTable table, StoreSpec store) {
        IcebergTable.Opened opened = table.open(store);
        return opened.catalog().loadTable(table.identifier());
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

    /** The rows of a snapshot, read with Iceberg's own generic reader. */
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

    /** Every data file any snapshot added, as often as it was added. */
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
