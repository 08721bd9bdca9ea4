package dev.snapshots.store;

import dev.snapshots.key.ObjectKeys;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.annotation.VisibleForTesting;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Proves, before anything is published, the one property the guarantee rests on: the store refuses
 * a second create-if-absent at a key. Several S3-compatible servers ignore {@code If-None-Match}
 * (S3Proxy before 2.x's conditional writes, for one), and some proxies strip it; on such a store
 * every later execution of a window silently replaces the first one's object, and the committer
 * cannot tell: the write succeeds either way.
 *
 * <p>The probe writes twice at keys of its own under {@value ObjectKeys#CONFORMANCE_PREFIX}, once
 * by a plain conditional write and once by promoting staged content (S3: {@code
 * CompleteMultipartUpload} with {@code If-None-Match: *}; a filesystem: a hard link), and expects
 * the second of each refused and the first content kept. Its objects are removed afterwards (a
 * bucket's lifecycle rule expires any that a killed process leaves).
 */
@PublicEvolving
public final class StoreConformance {
    private static final Logger LOG = LoggerFactory.getLogger(StoreConformance.class);

    /** Stores proven in this JVM, by {@link ObjectStore#describe()}: one probe per process. */
    private static final Set<String> PROVEN = ConcurrentHashMap.newKeySet();

    /**
     * What the probe found: no violation when the store refused both second writes; {@code
     * notProbed} says why a read-only tool could not tell.
     */
    public record Verdict(String store, Optional<String> violation, Optional<String> notProbed) {
        public boolean conforming() {
            return violation.isEmpty() && notProbed.isEmpty();
        }

        @Override
        public String toString() {
            return violation
                    .map(v -> "NOT CONFORMING: " + v)
                    .or(() -> notProbed.map(n -> "conformance not probed (" + n + ")"))
                    .orElse("conforming: refuses a second create-if-absent");
        }
    }

    /** The store cannot keep the guarantee: a second execution would replace a published part. */
    public static final class NonConformingStoreException extends IllegalStateException {
        private static final long serialVersionUID = 1L;

        NonConformingStoreException(String message) {
            super(message);
        }
    }

    private StoreConformance() {}

    /** Probes the store now. */
    public static Verdict probe(ObjectStore store) throws IOException {
        String base = ObjectKeys.CONFORMANCE_PREFIX + UUID.randomUUID() + "/";
        byte[] first = "first".getBytes(StandardCharsets.UTF_8);
        byte[] second = "second".getBytes(StandardCharsets.UTF_8);
        String put = base + "put";
        String promoted = base + "promoted";
        try {
            Optional<String> violation =
                    check(
                            store,
                            put,
                            "a conditional PUT (If-None-Match: *)",
                            first,
                            store.putIfAbsent(put, first, Map.of()),
                            store.putIfAbsent(put, second, Map.of()));
            if (violation.isEmpty()) {
                boolean created =
                        promoteOrAbort(store, store.stage(promoted, Chunks.of(first), Map.of()));
                boolean replaced =
                        promoteOrAbort(store, store.stage(promoted, Chunks.of(second), Map.of()));
                violation =
                        check(
                                store,
                                promoted,
                                "publishing staged content (a completed multipart upload with"
                                        + " If-None-Match: *, or a hard link)",
                                first,
                                created,
                                replaced);
            }
            return new Verdict(store.describe(), violation, Optional.empty());
        } finally {
            store.delete(put);
            store.delete(promoted);
        }
    }

    /**
     * Promotes staged content; content not published (refused, or the promote failed) is aborted,
     * so that a probe leaves no staged upload behind: one failed under injected faults, and every
     * start then left an upload that {@code inspect} listed until the bucket's rule aborted it.
     */
    private static boolean promoteOrAbort(ObjectStore store, StagedObject staged)
            throws IOException {
        boolean promoted = false;
        try {
            promoted = store.promote(staged);
            return promoted;
        } finally {
            if (!promoted) {
                try {
                    store.abort(staged);
                } catch (IOException e) {
                    LOG.debug("the probe's staged {} stays until the bucket's rule", staged, e);
                }
            }
        }
    }

    private static Optional<String> check(
            ObjectStore store,
            String key,
            String operation,
            byte[] first,
            boolean created,
            boolean secondCreated)
            throws IOException {
        Optional<byte[]> kept = store.get(key).map(ObjectStore.VersionedContent::content);
        // A create whose answer was lost (the connection dropped after the store carried it out)
        // is sent again by the client and refused, since the object now exists. The key is the
        // probe's own: if it holds the first content, the create happened.
        if (!created && !(kept.isPresent() && Arrays.equals(kept.get(), first))) {
            return Optional.of(
                    operation + " refused to create " + key + ", which did not exist before");
        }
        if (secondCreated || kept.isEmpty() || !Arrays.equals(kept.get(), first)) {
            return Optional.of(
                    operation
                            + " over an existing object succeeded"
                            + (kept.isPresent() && !Arrays.equals(kept.get(), first)
                                    ? " and replaced it"
                                    : "")
                            + ", at "
                            + key);
        }
        return Optional.empty();
    }

    /**
     * For tools that only read, such as the audit: the verdict, or why the probe could not run (a
     * read-only credential, say) instead of failing the tool.
     */
    public static Verdict probeIfWritable(ObjectStore store) {
        try {
            return probe(store);
        } catch (IOException e) {
            return new Verdict(store.describe(), Optional.empty(), Optional.of(e.getMessage()));
        }
    }

    /**
     * Forgets the stores this process proved, as a TaskManager's new process knows none: for tests
     * that run a whole cluster in one process.
     */
    @VisibleForTesting
    static void forgetProven() {
        PROVEN.clear();
    }

    /**
     * Probes the store unless it was proven in this process already.
     *
     * @throws NonConformingStoreException naming the store, the operation whose condition was
     *     ignored, and what to do
     * @throws IOException if the probe itself cannot run
     */
    public static void require(ObjectStore store) throws IOException {
        if (PROVEN.contains(store.describe())) {
            return;
        }
        Verdict verdict = probe(store);
        if (!verdict.conforming()) {
            throw new NonConformingStoreException(refusal(verdict));
        }
        LOG.info("{} refuses a second create-if-absent: parts can be published", store.describe());
        PROVEN.add(store.describe());
    }

    /** The message a refused start gives. */
    public static String refusal(Verdict verdict) {
        return "the store "
                + verdict.store()
                + " does not refuse a second create-if-absent: "
                + verdict.violation().orElseThrow()
                + ". On it a second execution of a window would replace the first one's part"
                + " instead of collapsing into it, and nobody would be told. Nothing was published."
                + " Use a store that honours If-None-Match: * on PutObject and"
                + " CompleteMultipartUpload (AWS S3 does, and S3Proxy 4.1 does; S3Proxy 2.0"
                + " does not), and make sure no proxy between the job and the store strips"
                + " the header.";
    }
}
