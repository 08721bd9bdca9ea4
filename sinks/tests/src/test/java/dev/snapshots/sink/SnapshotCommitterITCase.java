package dev.snapshots.sink;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.snapshots.format.PartEncoding;
import dev.snapshots.key.ObjectKeys;
import dev.snapshots.key.PartKind;
import dev.snapshots.key.PartMetadata;
import dev.snapshots.key.WorkIdentity;
import dev.snapshots.progress.CompletionPointer;
import dev.snapshots.store.Chunks;
import dev.snapshots.store.ObjectStore;
import dev.snapshots.store.StagedObject;
import dev.snapshots.store.StoreException;
import dev.snapshots.store.StoreSpec;
import dev.snapshots.testkit.FaultProxy;
import dev.snapshots.testkit.FaultProxy.Fault;
import dev.snapshots.testkit.S3ProxyServer;
import dev.snapshots.testkit.StoreKind;
import dev.snapshots.testkit.TestCommitRequest;
import dev.snapshots.testutils.CountingMetricGroup;
import dev.snapshots.testutils.KeyTotal;
import dev.snapshots.testutils.StoreContents;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.avro.generic.GenericRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Each commit outcome, driven through the committer directly against real stores, so every branch
 * is reached on purpose rather than by luck of timing: created, collapsed on re-commit, divergent,
 * 409 on completion, persistent failure.
 */
class SnapshotCommitterITCase {
    private static final long WINDOW = 1_796_047_500_000L;

    @ParameterizedTest(name = "{0}")
    @EnumSource(StoreKind.class)
    void committingTheSameCommittableAgainAfterARestoreCollapsesIntoTheFirstObject(StoreKind kind)
            throws Exception {
        StoreSpec spec = kind.fresh();
        CountingMetricGroup metrics = new CountingMetricGroup();
        try (ObjectStore store = spec.open();
                SnapshotCommitter committer = committer(spec, metrics)) {
            SnapshotCommittable part =
                    part(store, kind, "job-a", new KeyTotal("dev-1", WINDOW, 2, 10));

            TestCommitRequest<SnapshotCommittable> first = commit(committer, part);
            TestCommitRequest<SnapshotCommittable> again =
                    commit(committer, part); // as after restore from the checkpoint
            commit(committer, part); // and once more

            assertThat(first.alreadyCommitted).isFalse();
            assertThat(again.alreadyCommitted).isTrue();
            assertThat(metrics.count("partsCreated")).isEqualTo(1);
            assertThat(metrics.count("partsCollapsed")).isEqualTo(2);
            assertThat(metrics.names())
                    .as("the pointer's metrics are the Completion pointer task's only")
                    .contains("commitMillis")
                    .doesNotContain("completeThroughMillis", "pointerMillis", "progressFailures");
            assertThat(keysUnder(store, "readings/")).containsExactly(part.key());
            String record = ObjectKeys.collapsedKey(part.key(), "job-a");
            assertThat(StoreContents.keys(store, ObjectKeys.COLLAPSED_PREFIX))
                    .as("one record per part and job, however often it collapses")
                    .containsExactly(record);
            assertThat(ObjectKeys.parseCollapsed(record).orElseThrow().key()).isEqualTo(part.key());
            assertThat(
                            new String(
                                    store.get(record).orElseThrow().content(),
                                    StandardCharsets.UTF_8))
                    .contains("\"canonical\"", "\"collapsed\"", part.fingerprint(), "job-a");
        }
    }

    @Test
    void aCollapseWhoseRecordCannotBeWrittenStillCommits() throws Exception {
        StoreSpec spec = StoreKind.FILESYSTEM.fresh();
        // A file where the records' directory would go: every record's write fails.
        Files.writeString(Path.of(spec.uri()).resolve("_collapsed"), "in the way");
        CountingMetricGroup metrics = new CountingMetricGroup();
        try (ObjectStore store = spec.open();
                SnapshotCommitter committer = committer(spec, metrics)) {
            SnapshotCommittable part =
                    part(
                            store,
                            StoreKind.FILESYSTEM,
                            "job-a",
                            new KeyTotal("dev-1", WINDOW, 2, 10));
            commit(committer, part);

            TestCommitRequest<SnapshotCommittable> again = commit(committer, part);

            assertThat(again.alreadyCommitted).isTrue();
            assertThat(metrics.count("partsCollapsed")).isEqualTo(1);
            assertThat(StoreContents.keys(store, ObjectKeys.COLLAPSED_PREFIX)).isEmpty();
        }
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(StoreKind.class)
    void aSecondWriterWithDifferentContentIsReportedAndTheFirstObjectStays(StoreKind kind)
            throws Exception {
        StoreSpec spec = kind.fresh();
        CountingMetricGroup metrics = new CountingMetricGroup();
        try (ObjectStore store = spec.open();
                SnapshotCommitter committer = committer(spec, metrics)) {
            SnapshotCommittable canonical =
                    part(store, kind, "job-a", new KeyTotal("dev-1", WINDOW, 2, 10));
            SnapshotCommittable other =
                    part(store, kind, "job-b", new KeyTotal("dev-1", WINDOW, 2, 11));
            commit(committer, canonical);
            byte[] firstBytes = store.get(canonical.key()).orElseThrow().content();

            TestCommitRequest<SnapshotCommittable> second = commit(committer, other);

            assertThat(second.failure)
                    .as(
                            "a divergence does not fail the commit; its committable goes no further"
                                    + " (the window's manifest lists the canonical object)")
                    .hasMessageContaining("_divergence/");
            assertThat(metrics.count("partsDivergent")).isEqualTo(1);
            assertThat(store.get(canonical.key()).orElseThrow().content()).isEqualTo(firstBytes);
            String evidenceKey = ObjectKeys.divergenceKey(other.key(), other.fingerprint());
            String evidence = new String(store.get(evidenceKey).orElseThrow().content());
            assertThat(evidence)
                    .contains(canonical.fingerprint(), other.fingerprint(), "job-a", "job-b");
        }
    }

    @Test
    void aConflictOnCompletingTheUploadIsResolvedByWhatTheKeyHolds() throws Exception {
        StoreSpec direct = StoreKind.S3_MULTIPART.fresh();
        try (FaultProxy proxy = new FaultProxy(S3ProxyServer.get().endpoint(), 1);
                ObjectStore store = direct.open();
                SnapshotCommitter other = committer(direct, new CountingMetricGroup())) {
            StoreSpec viaProxy =
                    StoreSpec.parse(direct.uri().toString()).withEndpoint(proxy.endpoint());
            CountingMetricGroup metrics = new CountingMetricGroup();
            try (SnapshotCommitter committer = committer(viaProxy, metrics)) {
                SnapshotCommittable ours =
                        part(
                                store,
                                StoreKind.S3_MULTIPART,
                                "job-b",
                                new KeyTotal("dev-1", WINDOW, 2, 10));
                SnapshotCommittable theirs =
                        part(
                                store,
                                StoreKind.S3_INLINE,
                                "job-a",
                                new KeyTotal("dev-1", WINDOW, 2, 10));
                // While our completion is in flight, another execution of the same work publishes:
                // S3 answers 409.
                proxy.failNext(Fault.CONFLICT_409, 1, () -> commitUnchecked(other, theirs));

                TestCommitRequest<SnapshotCommittable> request = commit(committer, ours);

                assertThat(proxy.injected(Fault.CONFLICT_409)).isEqualTo(1);
                assertThat(metrics.count("storeConflicts")).isEqualTo(1);
                assertThat(request.alreadyCommitted)
                        .as("re-evaluated: the key holds the same content")
                        .isTrue();
                assertThat(metrics.count("partsCollapsed")).isEqualTo(1);
                assertThat(keysUnder(store, "readings/")).containsExactly(ours.key());
            }
        }
    }

    @Test
    void aConflictOnCompletingTheUploadWithNobodyElseThereIsRetried() throws Exception {
        StoreSpec direct = StoreKind.S3_MULTIPART.fresh();
        try (FaultProxy proxy = new FaultProxy(S3ProxyServer.get().endpoint(), 4);
                ObjectStore store = direct.open()) {
            StoreSpec viaProxy =
                    StoreSpec.parse(direct.uri().toString()).withEndpoint(proxy.endpoint());
            CountingMetricGroup metrics = new CountingMetricGroup();
            try (SnapshotCommitter committer = committer(viaProxy, metrics)) {
                SnapshotCommittable ours =
                        part(
                                store,
                                StoreKind.S3_MULTIPART,
                                "job-b",
                                new KeyTotal("dev-1", WINDOW, 2, 10));
                proxy.failNext(Fault.CONFLICT_409, 1);

                commit(committer, ours);

                assertThat(metrics.count("storeConflicts")).isEqualTo(1);
                assertThat(metrics.count("storeRetries")).isEqualTo(1);
                assertThat(metrics.count("partsCreated"))
                        .as("published from the staged copy: the 409 dropped the upload")
                        .isEqualTo(1);
                assertThat(contentFingerprint(store, ours.key())).isEqualTo(ours.fingerprint());
                assertThat(staged(store)).as("nothing left staged once published").isEmpty();
            }
        }
    }

    @Test
    void aStagedPartWhoseUploadALifecycleRuleAbortedIsPublishedFromItsCopy() throws Exception {
        StoreSpec spec = StoreKind.S3_MULTIPART.fresh();
        CountingMetricGroup metrics = new CountingMetricGroup();
        try (ObjectStore store = spec.open();
                SnapshotCommitter committer = committer(spec, metrics)) {
            SnapshotCommittable part =
                    part(
                            store,
                            StoreKind.S3_MULTIPART,
                            "job-a",
                            new KeyTotal("dev-1", WINDOW, 2, 10));
            StagedObject staged = part.staged().orElseThrow();
            store.abort(
                    new StagedObject(
                            staged.key(),
                            staged.handle(),
                            List.of())); // the upload only; the copy stays

            commit(committer, part);

            assertThat(metrics.count("partsCreated")).isEqualTo(1);
            assertThat(contentFingerprint(store, part.key())).isEqualTo(part.fingerprint());
            assertThat(staged(store)).isEmpty();
        }
    }

    @Test
    void aStagedPartWhoseUploadAndCopyAreBothGoneFailsPermanentlyNamingTheRetention()
            throws Exception {
        StoreSpec spec = StoreKind.S3_MULTIPART.fresh();
        try (ObjectStore store = spec.open();
                SnapshotCommitter committer = committer(spec, new CountingMetricGroup())) {
            SnapshotCommittable part =
                    part(
                            store,
                            StoreKind.S3_MULTIPART,
                            "job-a",
                            new KeyTotal("dev-1", WINDOW, 2, 10));
            store.abort(part.staged().orElseThrow());

            assertThatThrownBy(() -> commit(committer, part))
                    .isInstanceOfSatisfying(
                            StoreException.class,
                            e -> {
                                assertThat(e.kind()).isEqualTo(StoreException.Kind.PERMANENT);
                                assertThat(e.getMessage()).contains("staging retention");
                            });
            assertThat(store.head(part.key())).isEmpty();
        }
    }

    @Test
    void aConflictOnAPutIsRetriedUntilItGoesThrough() throws Exception {
        StoreSpec direct = StoreKind.S3_INLINE.fresh();
        try (FaultProxy proxy = new FaultProxy(S3ProxyServer.get().endpoint(), 2);
                ObjectStore store = direct.open()) {
            StoreSpec viaProxy =
                    StoreSpec.parse(direct.uri().toString()).withEndpoint(proxy.endpoint());
            CountingMetricGroup metrics = new CountingMetricGroup();
            try (SnapshotCommitter committer = committer(viaProxy, metrics)) {
                SnapshotCommittable part =
                        part(
                                store,
                                StoreKind.S3_INLINE,
                                "job-a",
                                new KeyTotal("dev-1", WINDOW, 2, 10));
                proxy.failNext(Fault.CONFLICT_409, 2); // the committer makes 3 attempts

                commit(committer, part);

                assertThat(metrics.count("storeConflicts")).isEqualTo(2);
                assertThat(metrics.count("storeRetries")).isEqualTo(2);
                assertThat(metrics.count("partsCreated")).isEqualTo(1);
                assertThat(store.head(part.key())).isPresent();
            }
        }
    }

    @Test
    void aStoreThatStaysDownFailsTheCommitAfterTheLastRetrySoFlinkRestartsAndRecommits()
            throws Exception {
        StoreSpec direct = StoreKind.S3_INLINE.fresh();
        try (FaultProxy proxy = new FaultProxy(S3ProxyServer.get().endpoint(), 3);
                ObjectStore store = direct.open()) {
            StoreSpec viaProxy =
                    StoreSpec.parse(direct.uri().toString()).withEndpoint(proxy.endpoint());
            CountingMetricGroup metrics = new CountingMetricGroup();
            SnapshotCommittable part =
                    part(store, StoreKind.S3_INLINE, "job-a", new KeyTotal("dev-1", WINDOW, 2, 10));
            proxy.outage(Duration.ofMinutes(1));
            try (SnapshotCommitter committer = committer(viaProxy, metrics)) {
                assertThatThrownBy(() -> commit(committer, part))
                        .isInstanceOfSatisfying(
                                StoreException.class,
                                e -> assertThat(e.kind()).isEqualTo(StoreException.Kind.TRANSIENT));
                assertThat(metrics.count("storeRetries")).isEqualTo(3 - 1);
            }
            proxy.heal();
            try (SnapshotCommitter afterRestart = committer(viaProxy, metrics)) {
                commit(afterRestart, part);
            }
            assertThat(metrics.count("partsCreated")).isEqualTo(1);
        }
    }

    /**
     * A bounded run's last commit carries the end-of-input mark, and no commit comes after it to
     * try the pointer again: an update the store fails fails that commit, so Flink retries it from
     * the checkpoint until the pointer takes it. The mark alone brings the pointer to the run's
     * last window, published by an earlier commit.
     */
    @Test
    void theLastUpdateOfABoundedRunFailsItsCommitUntilItLands() throws Exception {
        StoreSpec direct = StoreKind.S3_INLINE.fresh();
        try (FaultProxy proxy = new FaultProxy(S3ProxyServer.get().endpoint(), 6);
                ObjectStore store = direct.open()) {
            StoreSpec viaProxy =
                    StoreSpec.parse(direct.uri().toString()).withEndpoint(proxy.endpoint());
            SnapshotCommittable part =
                    part(store, StoreKind.S3_INLINE, "job-a", new KeyTotal("dev-1", WINDOW, 2, 10));
            SnapshotCommittable last =
                    SnapshotCommittable.mark(
                            new SnapshotCommittable.Run("readings", 1, PartKind.SNAPSHOT, "r"),
                            0,
                            1,
                            Long.MAX_VALUE,
                            WINDOW + 300_000L);
            try (SnapshotCommitter committer = committer(viaProxy, new CountingMetricGroup())) {
                commit(committer, part);
                proxy.outage(Duration.ofMinutes(1));
                assertThatThrownBy(() -> committer.commit(List.of(new TestCommitRequest<>(last))))
                        .hasMessageContaining("end of input");
            }
            assertThat(CompletionPointer.read(store, PartKind.SNAPSHOT, "readings", 1)).isEmpty();

            proxy.heal();
            try (SnapshotCommitter retried = committer(viaProxy, new CountingMetricGroup())) {
                retried.commit(List.of(new TestCommitRequest<>(last)));
            }
            assertThat(CompletionPointer.read(store, PartKind.SNAPSHOT, "readings", 1))
                    .contains(WINDOW + 300_000L);
        }
    }

    @Test
    void aCommitPublishesItsPartsAsManyAtATimeAsConfiguredAndAllLand() throws Exception {
        StoreSpec direct = StoreKind.S3_INLINE.fresh();
        try (FaultProxy proxy = new FaultProxy(S3ProxyServer.get().endpoint(), 4);
                ObjectStore store = direct.open()) {
            StoreSpec viaProxy =
                    StoreSpec.parse(direct.uri().toString()).withEndpoint(proxy.endpoint());
            List<TestCommitRequest<SnapshotCommittable>> requests = new ArrayList<>();
            for (int i = 0; i < 12; i++) {
                requests.add(
                        new TestCommitRequest<>(
                                part(
                                        store,
                                        StoreKind.S3_INLINE,
                                        "job-a",
                                        new KeyTotal("dev-1", WINDOW + i * 300_000L, 2, 10))));
            }
            proxy.inject(
                    1.0, Set.of(Fault.LATENCY)); // 200-1000 ms each: requests of one commit overlap
            CountingMetricGroup metrics = new CountingMetricGroup();
            try (SnapshotCommitter committer = committer(viaProxy, metrics, 3)) {
                committer.commit(new ArrayList<>(requests));
            }

            assertThat(proxy.peakInFlight()).as("parts in flight at once").isEqualTo(3);
            assertThat(metrics.count("partsCreated")).isEqualTo(12);
            for (TestCommitRequest<SnapshotCommittable> r : requests) {
                assertThat(store.head(r.getCommittable().key()))
                        .as(r.getCommittable().key())
                        .isPresent();
            }
        }
    }

    private static SnapshotCommitter committer(StoreSpec spec, CountingMetricGroup metrics) {
        return committer(spec, metrics, CanonicalSnapshotSinkBuilder.DEFAULT_PUBLISH_CONCURRENCY);
    }

    private static SnapshotCommitter committer(
            StoreSpec spec, CountingMetricGroup metrics, int publishConcurrency) {
        return new SnapshotCommitter(
                CanonicalSnapshotSink.<KeyTotal>builder()
                        .pipeline("readings")
                        .jobVersion(1)
                        .bucketCount(4)
                        .windowLength(Duration.ofMinutes(5))
                        .store(spec)
                        .rowFormat(new KeyTotal.Format())
                        .retries(new Backoff(3, Duration.ofMillis(5), Duration.ofMillis(20)))
                        .publishConcurrency(publishConcurrency)
                        .build()
                        .config(),
                metrics);
    }

    /** A committable as the writer makes it: inline for S3_INLINE, staged otherwise. */
    private static SnapshotCommittable part(
            ObjectStore store, StoreKind kind, String job, KeyTotal row) throws Exception {
        List<GenericRecord> records = List.of(new KeyTotal.Format().toRecord(row));
        String fingerprint = PartEncoding.fingerprint(records, KeyTotal.SCHEMA, 1);
        byte[] parquet = PartEncoding.encode(records, KeyTotal.SCHEMA);
        String key =
                ObjectKeys.partKey(
                        new WorkIdentity("readings", row.windowStart, 300_000, 1, 1, 0, 4, ""));
        Map<String, String> metadata =
                Map.of(
                        PartMetadata.FINGERPRINT,
                        fingerprint,
                        PartMetadata.WRITER_JOB,
                        job,
                        PartMetadata.ROWS,
                        "1");
        if (kind == StoreKind.S3_INLINE) {
            return SnapshotCommittable.inline(
                    key,
                    row.windowStart,
                    row.windowStart + 300_000,
                    0,
                    fingerprint,
                    1,
                    metadata,
                    parquet);
        }
        StagedObject staged = store.stage(key, Chunks.of(parquet), metadata);
        return SnapshotCommittable.staged(
                row.windowStart, row.windowStart + 300_000, 0, fingerprint, 1, metadata, staged);
    }

    private static TestCommitRequest<SnapshotCommittable> commit(
            SnapshotCommitter committer, SnapshotCommittable c) throws Exception {
        TestCommitRequest<SnapshotCommittable> request = new TestCommitRequest<>(c);
        committer.commit(List.of(request));
        return request;
    }

    private static void commitUnchecked(SnapshotCommitter committer, SnapshotCommittable c) {
        try {
            commit(committer, c);
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    /** The fingerprint of what is stored at {@code key}, hashed from its content. */
    private static String contentFingerprint(ObjectStore store, String key) throws Exception {
        return PartEncoding.fingerprint(
                PartEncoding.decode(store.get(key).orElseThrow().content()), KeyTotal.SCHEMA, 1);
    }

    /** What is staged and not published: uploads and staged copies. */
    private static List<String> staged(ObjectStore store) throws Exception {
        List<String> handles = new ArrayList<>();
        store.listStaged("", s -> handles.add(s.handle()));
        return handles;
    }

    /** The parts under {@code prefix}: neither the pointer nor the manifests. */
    private static List<String> keysUnder(ObjectStore store, String prefix) throws Exception {
        List<String> keys = new ArrayList<>();
        store.list(prefix, o -> ObjectKeys.parse(o.key()).ifPresent(p -> keys.add(p.key())));
        return keys;
    }
}
