package dev.snapshots.harness.bench;

import static org.assertj.core.api.Assertions.assertThat;

import dev.snapshots.key.ObjectKeys;
import dev.snapshots.store.ObjectStore;
import dev.snapshots.store.StoreSpec;
import dev.snapshots.testkit.FaultProxy;
import dev.snapshots.testkit.S3ProxyServer;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Production's commit shape driven through the sink's own committers against S3Proxy, behind the
 * counting proxy: every window's parts land, each committer's window commit is timed, and the
 * requests are counted. How long anything takes is not asserted.
 */
class CommitShapesITCase {

    @Test
    void everyWindowsPartsArePublishedAndEachWindowCommitIsMeasured() throws Exception {
        S3ProxyServer s3 = S3ProxyServer.get();
        StoreSpec direct = StoreSpec.parse("s3://" + s3.createBucket("shapes") + "/out");
        try (FaultProxy counter = new FaultProxy(s3.endpoint(), 0)) {
            CommitShapes.Round round =
                    CommitShapes.round(
                            new CommitShapes.Shape(4, 2),
                            200,
                            "shapes",
                            direct.withEndpoint(counter.endpoint()),
                            8,
                            counter::forwarded);

            assertThat(round.windowCommitMillis())
                    .as("a window commit per committer and window")
                    .hasSize(CommitShapes.WINDOWS * 2);
            assertThat(round.dataObjects()).isEqualTo(CommitShapes.WINDOWS * 4);
            assertThat(round.requests()).isGreaterThanOrEqualTo(round.dataObjects());
            List<String> parts = new ArrayList<>();
            try (ObjectStore store = direct.withEndpoint(s3.endpoint()).open()) {
                store.list(
                        "",
                        o -> {
                            if (ObjectKeys.parse(o.key()).isPresent()) {
                                parts.add(o.key());
                            }
                        });
            }
            assertThat(parts).hasSize(CommitShapes.WINDOWS * 4);
        }
    }
}
