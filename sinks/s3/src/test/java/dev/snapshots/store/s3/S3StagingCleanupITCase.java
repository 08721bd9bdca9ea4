package dev.snapshots.store.s3;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.snapshots.store.Chunks;
import dev.snapshots.store.ObjectStore;
import dev.snapshots.store.ObjectStore.StagedInfo;
import dev.snapshots.store.StagedObject;
import dev.snapshots.store.StoreSpec;
import dev.snapshots.testkit.FaultProxy;
import dev.snapshots.testkit.FaultProxy.Fault;
import dev.snapshots.testkit.S3ProxyServer;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * A failed stage or a failed re-made upload leaves nothing behind for the lifecycle rules to find:
 * the caller retries under new names, so what a failed attempt wrote would only pile up.
 */
class S3StagingCleanupITCase {
    private static final byte[] CONTENT = "part".getBytes(StandardCharsets.UTF_8);

    @Test
    void aStageWhoseUploadCannotStartLeavesNoCopy() throws Exception {
        try (Stores s = new Stores()) {
            s.proxy.failOneRequest(Fault.INTERNAL_500, "POST", 2); // past the SDK's own retry

            assertThatThrownBy(() -> s.viaProxy.stage("p/k", Chunks.of(CONTENT), Map.of()))
                    .isInstanceOf(IOException.class);
            assertThat(staged(s.direct)).isEmpty();
        }
    }

    @Test
    void aRemadeUploadWhoseCompletionFailsIsAbortedAndTheNextAttemptPublishes() throws Exception {
        try (Stores s = new Stores()) {
            StagedObject part = s.direct.stage("p/k", Chunks.of(CONTENT), Map.of());
            ((S3ObjectStore) s.direct).abortIncompleteUploads(); // the lifecycle rule, say
            // The first completion finds the upload gone; the one of the re-made upload fails.
            s.proxy.failOneRequest(Fault.COMPLETE_INTERNAL_200, "POST", 1, 2);

            assertThatThrownBy(() -> s.viaProxy.promote(part)).isInstanceOf(IOException.class);
            assertThat(staged(s.direct))
                    .as("only the durable copy")
                    .extracting(StagedInfo::handle)
                    .containsExactly(part.copy());

            assertThat(s.viaProxy.promote(part)).isTrue();
            assertThat(staged(s.direct)).isEmpty();
            assertThat(s.direct.get("p/k").orElseThrow().content()).isEqualTo(CONTENT);
        }
    }

    private static List<StagedInfo> staged(ObjectStore store) throws IOException {
        List<StagedInfo> staged = new ArrayList<>();
        store.listStaged("", staged::add);
        return staged;
    }

    /** One bucket, seen directly and through a fault proxy. */
    private static final class Stores implements AutoCloseable {
        final FaultProxy proxy;
        final ObjectStore direct;
        final ObjectStore viaProxy;

        Stores() throws IOException {
            S3ProxyServer s3 = S3ProxyServer.get();
            String bucket = s3.createBucket("cleanup");
            proxy = new FaultProxy(s3.endpoint(), 1);
            direct = StoreSpec.parse("s3://" + bucket + "/out").withEndpoint(s3.endpoint()).open();
            viaProxy =
                    StoreSpec.parse("s3://" + bucket + "/out")
                            .withEndpoint(proxy.endpoint())
                            .open();
        }

        @Override
        public void close() {
            viaProxy.close();
            direct.close();
            proxy.close();
        }
    }
}
