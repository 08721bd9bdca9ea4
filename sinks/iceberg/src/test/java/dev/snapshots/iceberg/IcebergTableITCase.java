package dev.snapshots.iceberg;

import static dev.snapshots.iceberg.IcebergTableChecks.PAYMENTS;
import static dev.snapshots.iceberg.IcebergTableChecks.WINDOWS;
import static dev.snapshots.iceberg.IcebergTableChecks.dataFiles;
import static dev.snapshots.iceberg.IcebergTableChecks.load;
import static dev.snapshots.iceberg.IcebergTableChecks.output;
import static dev.snapshots.iceberg.IcebergTableChecks.reference;
import static dev.snapshots.iceberg.IcebergTableChecks.referenceWindows;
import static dev.snapshots.iceberg.IcebergTableChecks.rows;
import static dev.snapshots.iceberg.IcebergTableChecks.windowsCommitted;
import static org.assertj.core.api.Assertions.assertThat;

import dev.snapshots.key.ObjectKeys;
import dev.snapshots.key.PartKind;
import dev.snapshots.progress.ReaderTable;
import dev.snapshots.store.ObjectStore;
import dev.snapshots.store.StoreSpec;
import dev.snapshots.testkit.IcebergCatalogs;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.expressions.Expressions;
import org.apache.iceberg.types.Conversions;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The reader table as its readers judge it: every window of the output in the table once and whole,
 * rows equal to a reference computed from the input, whatever runs the followers and in what order.
 * A real JDBC catalog (SQLite) with its optimistic lock, over real files.
 */
class IcebergTableITCase {
    @RegisterExtension static final MiniClusterExtension CLUSTER = IcebergTableChecks.cluster();

    @TempDir Path tmp;

    @Test
    void aBoundedRunCommitsEachWindowOnceWholeAndASecondRunAddsNothing() throws Exception {
        StoreSpec store = StoreSpec.local(tmp.resolve("store"));
        IcebergTable table = table();
        WindowTotals.run(PAYMENTS, WindowTotals.sink(store, 1, table));

        Table t = load(table, store);
        assertThat(windowBounds(t))
                .as("each file's window_start bounds, what readers skip files by: its window")
                .allSatisfy((file, bounds) -> assertThat(file).contains(window(bounds)));
        assertThat(windowsCommitted(t, "v1"))
                .as("one commit per window, in order")
                .containsExactlyElementsOf(referenceWindows());
        assertThat(t.currentSnapshot().snapshotId())
                .as("main follows the version that created the table")
                .isEqualTo(t.snapshot("v1").snapshotId());
        assertThat(rows(t, t.currentSnapshot())).containsExactlyInAnyOrderElementsOf(reference());
        assertThat(dataFiles(t)).as("no data file registered twice").doesNotHaveDuplicates();
        long window = referenceWindows().get(3);
        assertThat(rows(t, t.currentSnapshot(), Expressions.equal("window_start", window * 1000)))
                .as("a window, as a reader filters for it")
                .containsExactlyInAnyOrderElementsOf(
                        reference().stream().filter(r -> r.windowStart() == window).toList());

        WindowTotals.run(PAYMENTS, WindowTotals.sink(store, 1, table));
        t.refresh();
        assertThat(windowsCommitted(t, "v1"))
                .as("the second run's windows were all there")
                .containsExactlyElementsOf(referenceWindows());
    }

    @Test
    void twoFollowersRacingForTheSameWindowsCommitEachOnce() throws Exception {
        StoreSpec store = StoreSpec.local(tmp.resolve("store"));
        WindowTotals.run(PAYMENTS, WindowTotals.sink(store, 1, null));
        IcebergTable table = table();
        ReaderTable.Output output = output(store, 1);

        try (ObjectStore objects = store.open();
                ReaderTable.Follower winner = table.follow(objects, output)) {
            // The loser reads the table, then the winner commits every window before the loser's
            // first commit: Iceberg's optimistic retry puts the loser's commit on the new state,
            // where its validation must refuse it.
            AtomicBoolean raced = new AtomicBoolean();
            ObjectStore interleaving =
                    (ObjectStore)
                            Proxy.newProxyInstance(
                                    ObjectStore.class.getClassLoader(),
                                    new Class<?>[] {ObjectStore.class},
                                    (proxy, method, args) -> {
                                        if (method.getName().equals("get")
                                                && ((String) args[0]).endsWith("_manifest.json")
                                                && raced.compareAndSet(false, true)) {
                                            assertThat(winner.catchUp()).isEqualTo(WINDOWS);
                                        }
                                        try {
                                            return method.invoke(objects, args);
                                        } catch (InvocationTargetException e) {
                                            throw e.getCause();
                                        }
                                    });
            try (ReaderTable.Follower loser = table.follow(interleaving, output)) {
                assertThat(loser.catchUp()).as("windows the loser added").isZero();
                assertThat(raced).isTrue();
            }
        }
        Table t = load(table, store);
        assertThat(windowsCommitted(t, "v1")).containsExactlyElementsOf(referenceWindows());
        assertThat(rows(t, t.snapshot("v1"))).containsExactlyInAnyOrderElementsOf(reference());
        assertThat(dataFiles(t)).doesNotHaveDuplicates();
    }

    @Test
    void aReplayIsInvisibleUntilPromotedThenVisibleAtOnce() throws Exception {
        StoreSpec store = StoreSpec.local(tmp.resolve("store"));
        IcebergTable table = table();
        WindowTotals.run(PAYMENTS, WindowTotals.sink(store, 1, table));
        Table t = load(table, store);
        long v1 = t.currentSnapshot().snapshotId();

        // The replay: the same input into job version 2.
        WindowTotals.run(PAYMENTS, WindowTotals.sink(store, 2, table));
        t.refresh();
        assertThat(windowsCommitted(t, "v2")).containsExactlyElementsOf(referenceWindows());
        assertThat(t.currentSnapshot().snapshotId()).as("main before promote").isEqualTo(v1);
        assertThat(rows(t, t.snapshot("v2"))).containsExactlyInAnyOrderElementsOf(reference());

        table.promote(store, 2);
        t.refresh();
        assertThat(t.currentSnapshot().snapshotId()).isEqualTo(t.snapshot("v2").snapshotId());
        assertThat(rows(t, t.currentSnapshot()))
                .as("version 2's rows only, once")
                .containsExactlyInAnyOrderElementsOf(reference());

        // Version 1 running on does not take main back.
        WindowTotals.run(PAYMENTS, WindowTotals.sink(store, 1, table));
        t.refresh();
        assertThat(t.currentSnapshot().snapshotId()).isEqualTo(t.snapshot("v2").snapshotId());
    }

    private IcebergTable table() throws Exception {
        return IcebergTable.in(
                IcebergCatalogs.sqlite(tmp.resolve("catalog.db")), "analytics.payments");
    }

    /** Each data file's lower and upper bound of window_start, in milliseconds. */
    private static Map<String, List<Long>> windowBounds(Table t) {
        int id = t.schema().findField("window_start").fieldId();
        Map<String, List<Long>> bounds = new TreeMap<>();
        for (Snapshot s : t.snapshots()) {
            for (DataFile f : s.addedDataFiles(t.io())) {
                Types.TimestampType type = Types.TimestampType.withZone();
                long lower = Conversions.<Long>fromByteBuffer(type, f.lowerBounds().get(id));
                long upper = Conversions.<Long>fromByteBuffer(type, f.upperBounds().get(id));
                bounds.put(f.location(), List.of(lower / 1000, upper / 1000));
            }
        }
        return bounds;
    }

    /** The key directory of the window both bounds must be in. */
    private static String window(List<Long> bounds) {
        assertThat(bounds.get(0)).isEqualTo(bounds.get(1));
        return ObjectKeys.windowPrefix(PartKind.SNAPSHOT, "payments", 1, 1, bounds.get(0))
                .replace("payments/v=1/", "");
    }
}
