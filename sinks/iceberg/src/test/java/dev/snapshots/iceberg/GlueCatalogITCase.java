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

import dev.snapshots.progress.ReaderTable;
import dev.snapshots.store.ObjectStore;
import dev.snapshots.store.StoreSpec;
import dev.snapshots.testkit.StoreKind;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.iceberg.HasTableOperations;
import org.apache.iceberg.Table;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The reader table in production's shape: Iceberg's own GlueCatalog, through the AWS SDK, against a
 * stand-in that keeps Glue's rules (its optimistic lock on the table's VersionId, throttling), the
 * table's files on S3 (S3Proxy). Glue's lock is what makes a commit atomic there: Iceberg uses no
 * other lock when the SDK can send a VersionId.
 */
// A follower that cannot reach its catalog fails the job, which restarts without end: fail instead.
@Timeout(value = 10, unit = TimeUnit.MINUTES)
class GlueCatalogITCase {
    @RegisterExtension static final MiniClusterExtension CLUSTER = IcebergTableChecks.cluster();

    private GlueStandIn glue;

    @BeforeEach
    void startGlue() throws Exception {
        glue = new GlueStandIn();
        glue.throttle(0.2, 33);
    }

    @AfterEach
    void stopGlue() {
        glue.close();
    }

    @Test
    void aBoundedRunOnGlueCommitsEachWindowOnceWholeThroughThrottling() throws Exception {
        StoreSpec store = StoreKind.S3_INLINE.fresh();
        IcebergTable table = IcebergTable.in(glue.catalog(), "analytics.payments");
        WindowTotals.run(PAYMENTS, WindowTotals.sink(store, 1, table));

        Table t = load(table, store);
        assertThat(windowsCommitted(t, "v1"))
                .as("one commit per window, in order")
                .containsExactlyElementsOf(referenceWindows());
        assertThat(rows(t, t.currentSnapshot())).containsExactlyInAnyOrderElementsOf(reference());
        assertThat(dataFiles(t)).as("no data file registered twice").doesNotHaveDuplicates();
        assertThat(glue.tableParameters("analytics", "payments"))
                .as("what Athena reads from Glue: an Iceberg table at its current metadata")
                .containsEntry("table_type", "ICEBERG")
                .containsEntry(
                        "metadata_location",
                        ((HasTableOperations) t).operations().current().metadataFileLocation());
        assertThat(glue.throttled()).as("requests Glue throttled, retried by the SDK").isPositive();
    }

    @Test
    void twoFollowersRacingForTheSameWindowsOnGlueCommitEachOnce() throws Exception {
        StoreSpec store = StoreKind.S3_INLINE.fresh();
        WindowTotals.run(PAYMENTS, WindowTotals.sink(store, 1, null));
        IcebergTable table = IcebergTable.in(glue.catalog(), "analytics.payments");
        ReaderTable.Output output = output(store, 1);
        ExecutorService loserThread = Executors.newSingleThreadExecutor();
        try (ObjectStore objects = store.open();
                ReaderTable.Follower winner = table.follow(objects, output);
                ReaderTable.Follower loser = table.follow(objects, output)) {
            // The branch first, as a follower's first catch-up makes it: the race is for windows.
            Table t = load(table, store);
            t.manageSnapshots()
                    .createBranch("v1", t.refs().get(IcebergWindows.EMPTY).snapshotId())
                    .commit();
            // The loser has read the table and sends its first window's UpdateTable; before Glue
            // checks its VersionId, the winner commits every window.
            GlueStandIn.Hold held = glue.holdNextUpdate();
            Future<Integer> lost = loserThread.submit(loser::catchUp);
            held.awaitArrival();
            assertThat(winner.catchUp()).isEqualTo(WINDOWS);
            held.release();
            assertThat(lost.get(2, TimeUnit.MINUTES)).as("windows the loser added").isZero();
        } finally {
            loserThread.shutdownNow();
        }
        assertThat(glue.staleUpdates())
                .as("the loser's update refused for its stale VersionId")
                .isPositive();
        assertThat(glue.throttled()).isPositive();
        Table t = load(table, store);
        assertThat(windowsCommitted(t, "v1")).containsExactlyElementsOf(referenceWindows());
        assertThat(rows(t, t.snapshot("v1"))).containsExactlyInAnyOrderElementsOf(reference());
        assertThat(dataFiles(t)).doesNotHaveDuplicates();
    }
}
