package dev.snapshots.sink;

import static org.assertj.core.api.Assertions.assertThat;

import dev.snapshots.key.ObjectKeys;
import dev.snapshots.key.PartKind;
import dev.snapshots.progress.CompletionPointer;
import dev.snapshots.progress.WindowManifest;
import dev.snapshots.store.ObjectStore;
import dev.snapshots.store.StoreSpec;
import dev.snapshots.store.s3.S3ObjectStore;
import dev.snapshots.testkit.FaultProxy;
import dev.snapshots.testkit.FaultProxy.Fault;
import dev.snapshots.testkit.S3ProxyServer;
import dev.snapshots.testkit.StoreKind;
import dev.snapshots.testutils.KeyTotal;
import dev.snapshots.testutils.Metrics;
import dev.snapshots.testutils.PartRef;
import dev.snapshots.testutils.PointerWatch;
import dev.snapshots.testutils.Readings;
import dev.snapshots.testutils.SnapshotTestJob;
import dev.snapshots.testutils.StoreContents;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.apache.flink.api.common.JobID;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.runtime.testutils.InMemoryReporter;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.test.junit5.InjectMiniCluster;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The sink's promise under the failures it exists for, on a Flink MiniCluster (2 TaskManagers,
 * checkpointing on) against real stores: S3Proxy over HTTP and the local filesystem. Every scenario
 * runs a bounded, deterministic input over 24 windows and checks the store against a reference
 * computed in plain Java: exactly one object per (window, bucket), rows equal to the reference,
 * fingerprints matching content, and the completion pointer at the last window.
 */
class SnapshotSinkITCase {
    private static final InMemoryReporter REPORTER = InMemoryReporter.createWithRetainedMetrics();

    @RegisterExtension
    static final MiniClusterExtension CLUSTER =
            new MiniClusterExtension(
                    new MiniClusterResourceConfiguration.Builder()
                            .setNumberTaskManagers(2)
                            .setNumberSlotsPerTaskManager(4)
                            .setConfiguration(REPORTER.addToConfiguration(new Configuration()))
                            .build());

    private static final int WINDOWS = 24;
    private static final Readings READINGS = Readings.of(WINDOWS, 60_000, 60, 40);

    @ParameterizedTest(name = "{0}")
    @EnumSource(StoreKind.class)
    void failureAfterCompletedCheckpointsStillPublishesEachPartExactlyOnce(StoreKind kind)
            throws Exception {
        StoreSpec store = kind.fresh();
        SnapshotTestJob job =
                SnapshotTestJob.over(READINGS)
                        .store(store)
                        .inlineThresholdBytes(kind.inlineThresholdBytes())
                        .failOnceAfter(READINGS.count() / 2);

        JobID id = job.run();

        // Whether the restored checkpoint held parts that were already committed depends on timing
        // (and a write whose response was lost counts as collapsed on its retry), so created and
        // collapsed counts are reported, not asserted, here; SnapshotCommitterITCase re-commits on
        // purpose.
        figures(
                "restart",
                kind,
                assertPublishedExactlyOnce(store, READINGS, job.bucketCount(), 1),
                id);
        assertThat(Metrics.sum(REPORTER, id, "partsDivergent")).isZero();
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(StoreKind.class)
    void taskManagerTerminatedMidWindowLeavesOneObjectPerPart(
            StoreKind kind, @InjectMiniCluster MiniCluster cluster) throws Exception {
        StoreSpec store = kind.fresh();
        SnapshotTestJob job =
                SnapshotTestJob.over(READINGS)
                        .store(store)
                        .inlineThresholdBytes(kind.inlineThresholdBytes())
                        .eventsPerSecond(400);

        JobClient client = job.start();
        awaitParts(store, 6);
        cluster.terminateTaskManager(0).get(30, TimeUnit.SECONDS);
        cluster.startTaskManager();
        client.getJobExecutionResult().get(3, TimeUnit.MINUTES);

        figures(
                "tm-killed",
                kind,
                assertPublishedExactlyOnce(store, READINGS, job.bucketCount(), 1),
                client.getJobID());
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(StoreKind.class)
    void twoConcurrentInstancesOfTheSameWorkCollapseIntoOneObjectPerPart(StoreKind kind)
            throws Exception {
        StoreSpec store = kind.fresh();
        SnapshotTestJob old =
                SnapshotTestJob.over(READINGS)
                        .store(store)
                        .inlineThresholdBytes(kind.inlineThresholdBytes());
        SnapshotTestJob next =
                SnapshotTestJob.over(READINGS)
                        .store(store)
                        .inlineThresholdBytes(kind.inlineThresholdBytes());

        JobClient a;
        JobClient b;
        try (PointerWatch watch = PointerWatch.start(store, 1, READINGS.windowMillis())) {
            a = old.start();
            b = next.start();
            a.getJobExecutionResult().get(3, TimeUnit.MINUTES);
            b.getJobExecutionResult().get(3, TimeUnit.MINUTES);
            assertPointerNeverAhead(watch, READINGS.reference(old.bucketCount()).keySet());
        }

        figures(
                "concurrent",
                kind,
                assertPublishedExactlyOnce(store, READINGS, old.bucketCount(), 1),
                a.getJobID(),
                b.getJobID());
        long collapsed =
                Metrics.sum(REPORTER, a.getJobID(), "partsCollapsed")
                        + Metrics.sum(REPORTER, b.getJobID(), "partsCollapsed");
        long created =
                Metrics.sum(REPORTER, a.getJobID(), "partsCreated")
                        + Metrics.sum(REPORTER, b.getJobID(), "partsCreated");
        int parts = READINGS.reference(old.bucketCount()).size();
        assertThat(created + collapsed)
                .as("every part committed by both instances")
                .isEqualTo(2L * parts);
        assertThat(collapsed)
                .as(
                        "the second copy of every part collapsed (a write whose reply was lost counts once more)")
                .isGreaterThanOrEqualTo(parts);
        assertThat(
                        Metrics.sum(REPORTER, a.getJobID(), "partsDivergent")
                                + Metrics.sum(REPORTER, b.getJobID(), "partsDivergent"))
                .isZero();
    }

    /**
     * A finished run (a replay of a file, a drained stop) leaves end-of-input marks behind. A later
     * run of the same version, over more input, must not let them carry the pointer past windows it
     * has not published yet.
     */
    @ParameterizedTest(name = "{0}")
    @EnumSource(
            value = StoreKind.class,
            names = {"S3_MULTIPART", "FILESYSTEM"})
    void aRunAfterAFinishedRunNeverShowsThePointerAheadOfItsParts(StoreKind kind) throws Exception {
        StoreSpec store = kind.fresh();
        SnapshotTestJob.over(Readings.of(WINDOWS / 2, 60_000, 60, 40))
                .store(store)
                .inlineThresholdBytes(kind.inlineThresholdBytes())
                .eventsPerSecond(100_000)
                .run();

        JobID later;
        try (PointerWatch watch = PointerWatch.start(store, 1, READINGS.windowMillis())) {
            later =
                    SnapshotTestJob.over(READINGS)
                            .store(store)
                            .inlineThresholdBytes(kind.inlineThresholdBytes())
                            .eventsPerSecond(400)
                            .run();
            assertPointerNeverAhead(watch, READINGS.reference(4).keySet());
        }
        figures(
                "run after a finished run",
                kind,
                assertPublishedExactlyOnce(store, READINGS, 4, 1),
                later);
    }

    /**
     * One task moves the pointer for every committer subtask: as windows complete while the job
     * runs, and about once a window, where a write per subtask per window made four times as many.
     */
    @Test
    void thePointerMovesWhileTheJobRunsAndIsWrittenAboutOnceAWindow() throws Exception {
        StoreSpec store = StoreKind.FILESYSTEM.fresh();
        int parallelism = 4;
        try (PointerWatch watch = PointerWatch.start(store, 1, READINGS.windowMillis())) {
            SnapshotTestJob.over(READINGS)
                    .store(store)
                    .parallelism(parallelism)
                    .eventsPerSecond(100)
                    .run();
            assertPointerNeverAhead(watch, READINGS.reference(4).keySet());
            assertThat(watch.distinctPointers())
                    .as("pointers seen while the job ran")
                    .isGreaterThan(WINDOWS / 2);
        }
        try (ObjectStore s = store.open()) {
            long[] newest = {-1};
            s.list(
                    ObjectKeys.progressLogPrefix(PartKind.SNAPSHOT, SnapshotTestJob.PIPELINE, 1),
                    o ->
                            ObjectKeys.progressEntry(o.key())
                                    .ifPresent(n -> newest[0] = Math.max(newest[0], n)));
            // The first marks the task hears, a write a window, and at the end of input each
            // committer's own mark and the task's.
            assertThat(newest[0] + 1)
                    .as("states of the pointer's log")
                    .isBetween((long) WINDOWS / 2, (long) WINDOWS + parallelism + 2);
        }
        assertPublishedExactlyOnce(store, READINGS, 4, 1);
    }

    /**
     * A replay: version 2 starts from a savepoint version 1 took mid-stream. Version 1's marks in
     * that savepoint say nothing of version 2, whose pointer shows only once it has published a
     * complete window of its own, and never ahead of its parts.
     */
    @ParameterizedTest(name = "{0}")
    @EnumSource(
            value = StoreKind.class,
            names = {"S3_MULTIPART", "FILESYSTEM"})
    void aReplayIntoANewVersionFromAnOldSavepointShowsItsPointerOnlyOverItsOwnParts(
            StoreKind kind, @TempDir Path savepoints) throws Exception {
        StoreSpec store = kind.fresh();
        JobClient v1 =
                SnapshotTestJob.over(READINGS)
                        .store(store)
                        .inlineThresholdBytes(kind.inlineThresholdBytes())
                        .eventsPerSecond(400)
                        .start();
        awaitParts(store, 12);
        String savepoint =
                v1.stopWithSavepoint(
                                false, savepoints.toUri().toString(), SavepointFormatType.CANONICAL)
                        .get(2, TimeUnit.MINUTES);

        try (PointerWatch watch = PointerWatch.start(store, 2, READINGS.windowMillis())) {
            JobID replay =
                    SnapshotTestJob.over(READINGS)
                            .store(store)
                            .inlineThresholdBytes(kind.inlineThresholdBytes())
                            .jobVersion(2)
                            .eventsPerSecond(400)
                            .fromSavepoint(savepoint)
                            .run();
            try (ObjectStore s = store.open()) {
                StoreContents v2 = StoreContents.read(s, SnapshotTestJob.PIPELINE, 2);
                long first =
                        v2.keys.keySet().stream()
                                .mapToLong(PartRef::windowStartMillis)
                                .min()
                                .orElseThrow();
                assertThat(first)
                        .as("the replay started mid-stream")
                        .isGreaterThan(Readings.BASE_MILLIS);
                Map<PartRef, Set<KeyTotal>> owed = new TreeMap<>(READINGS.reference(4));
                owed.keySet().removeIf(p -> p.windowStartMillis() < first);
                assertPointerNeverAhead(watch, owed.keySet());
                assertThat(v2.duplicated()).isEmpty();
                assertThat(v2.rows)
                        .as("every window from the replay's first on")
                        .containsAllEntriesOf(owed);
                // Version 1's pending parts in the savepoint are committed into v1's namespace,
                // never listed as v2's.
                List<String> manifested = new ArrayList<>();
                s.list(
                        ObjectKeys.versionPrefix(SnapshotTestJob.PIPELINE, 2),
                        o ->
                                ObjectKeys.parseManifest(o.key())
                                        .ifPresent(
                                                w -> {
                                                    try {
                                                        WindowManifest.read(s, o.key())
                                                                .orElseThrow()
                                                                .parts()
                                                                .values()
                                                                .forEach(
                                                                        l ->
                                                                                manifested.add(
                                                                                        l.key()));
                                                    } catch (IOException e) {
                                                        throw new UncheckedIOException(e);
                                                    }
                                                }));
                assertThat(manifested)
                        .as("parts v2's manifests list")
                        .isNotEmpty()
                        .allSatisfy(
                                k ->
                                        assertThat(k)
                                                .startsWith(
                                                        ObjectKeys.versionPrefix(
                                                                SnapshotTestJob.PIPELINE, 2)));
                figures("replay into v2", kind, v2, replay);
            }
        }
    }

    /**
     * With the first release's hash bucketing, behind the assembling window: buckets sharing a key
     * group each keep their own routing key, so their rows never meet in one part.
     */
    @Test
    void hashBucketsBeyondMaxParallelismPublishOnePartPerBucket() throws Exception {
        StoreSpec store = StoreKind.FILESYSTEM.fresh();
        SnapshotTestJob job =
                SnapshotTestJob.over(READINGS)
                        .store(store)
                        .bucketing(Bucketing.HASH)
                        .bucketCount(13)
                        .maxParallelism(4)
                        .parallelism(3);

        JobID id = job.run();

        figures(
                "hash bucketing, 13 buckets, max parallelism 4",
                StoreKind.FILESYSTEM,
                assertPublishedExactlyOnce(
                        store, READINGS, READINGS.reference(key -> Buckets.of(key, 13)), 1),
                id);
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(StoreKind.class)
    void recomputationWithDifferentInputKeepsTheFirstObjectAndReportsEachDivergentPart(
            StoreKind kind) throws Exception {
        StoreSpec store = kind.fresh();
        Readings altered = READINGS.alteringWindows(3, 7, 8);
        SnapshotTestJob.over(READINGS)
                .store(store)
                .inlineThresholdBytes(kind.inlineThresholdBytes())
                .run();

        JobID second =
                SnapshotTestJob.over(altered)
                        .store(store)
                        .inlineThresholdBytes(kind.inlineThresholdBytes())
                        .run();

        int buckets = 4;
        Map<PartRef, Set<KeyTotal>> first = READINGS.reference(buckets);
        Map<PartRef, Set<KeyTotal>> changed = altered.reference(buckets);
        long differing =
                first.keySet().stream().filter(p -> !first.get(p).equals(changed.get(p))).count();
        assertThat(differing).as("the altered windows change some parts").isPositive();

        StoreContents contents = assertPublishedExactlyOnce(store, READINGS, buckets, 1);
        figures("divergence (second run)", kind, contents, second);
        assertThat(contents.divergenceEvidence)
                .as("evidence for exactly the differing parts")
                .hasSize((int) differing);
        assertThat(Metrics.sum(REPORTER, second, "partsDivergent")).isEqualTo(differing);
        assertThat(Metrics.sum(REPORTER, second, "partsCollapsed"))
                .isEqualTo(first.size() - differing);
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(
            value = StoreKind.class,
            names = {"S3_INLINE", "S3_MULTIPART"})
    void injectedConflictsThrottlingErrorsAndDropsAreRetriedToTheSameResult(StoreKind kind)
            throws Exception {
        StoreSpec direct = kind.fresh();
        try (FaultProxy proxy = new FaultProxy(S3ProxyServer.get().endpoint(), 42)) {
            proxy.inject(0.15, EnumSet.allOf(Fault.class)).failNext(Fault.CONFLICT_409, 5);
            StoreSpec viaProxy =
                    StoreSpec.parse(direct.uri().toString()).withEndpoint(proxy.endpoint());

            JobID id =
                    SnapshotTestJob.over(READINGS)
                            .store(viaProxy)
                            .inlineThresholdBytes(kind.inlineThresholdBytes())
                            .backoff(new Backoff(10, Duration.ofMillis(10), Duration.ofMillis(200)))
                            .run();

            assertThat(proxy.injectedTotal()).isPositive();
            assertThat(proxy.injected(Fault.CONFLICT_409))
                    .as("409s reached conditional writes")
                    .isPositive();
            assertThat(Metrics.sum(REPORTER, id, "storeRetries")).as("commit retries").isPositive();
            figures(
                    "faults " + proxy.injectedTotal() + " injected",
                    kind,
                    assertPublishedExactlyOnce(direct, READINGS, 4, 1),
                    id);
        }
    }

    /**
     * The errors AWS documents as worth retrying, answered as S3 does to the request they belong
     * to: a part's PUT, or a staged part's CompleteMultipartUpload or UploadPartCopy failing inside
     * a 200. Each fails one request as often as the S3 client tries it (twice where the SDK retries
     * at once by itself, once for an expired token, which it does not), so it reaches the sink,
     * which retries it (one retry) instead of failing the job over.
     */
    @ParameterizedTest(name = "{0} to a {2}, {3} times, on {1}")
    @CsvSource({
        "REQUEST_TIMEOUT_400, S3_INLINE, PUT, 2",
        "EXPIRED_TOKEN_400, S3_INLINE, PUT, 1",
        "TIME_SKEWED_403, S3_INLINE, PUT, 2",
        "COMPLETE_INTERNAL_200, S3_MULTIPART, POST, 2",
        "COPY_INTERNAL_200, S3_MULTIPART, PUT, 2"
    })
    void aRetryableErrorIsRetriedWithoutAFailover(
            Fault fault, StoreKind kind, String method, int times) throws Exception {
        Readings readings = Readings.of(6, 60_000, 60, 40);
        StoreSpec direct = kind.fresh();
        try (FaultProxy proxy = new FaultProxy(S3ProxyServer.get().endpoint(), 5)) {
            StoreSpec viaProxy =
                    StoreSpec.parse(direct.uri().toString()).withEndpoint(proxy.endpoint());
            SnapshotTestJob job =
                    SnapshotTestJob.over(readings)
                            .store(viaProxy)
                            .inlineThresholdBytes(kind.inlineThresholdBytes())
                            .check(); // the probe's writes take no fault
            // Nor the version's identity, which the first writer to open records (one PUT).
            proxy.failOneRequest(fault, method, method.equals("PUT") ? 1 : 0, times);

            JobID id = job.run();

            assertThat(proxy.injected(fault)).isEqualTo(times);
            assertThat(Metrics.gaugeMax(REPORTER, id, "numRestarts")).as("failovers").isZero();
            assertThat(
                            Metrics.sum(REPORTER, id, "storeRetries")
                                    + Metrics.sum(REPORTER, id, "stageRetries"))
                    .as("retries, committing and staging")
                    .isEqualTo(1);
            figures(
                    fault + " " + times + "x",
                    kind,
                    assertPublishedExactlyOnce(direct, readings, 4, 1),
                    id);
        }
    }

    /**
     * The store goes down for longer than the committer retries, so the job fails over and keeps
     * failing; meanwhile every incomplete upload is aborted, as a lifecycle rule would after a long
     * outage (and as S3 does after a 409 on completion). Once the store is back, each part is
     * published from its staged copy: nothing is lost.
     */
    @Test
    void aStoreOutageLongerThanTheRetriesWithEveryStagedUploadAbortedStillEndsCorrect()
            throws Exception {
        StoreSpec direct = StoreKind.S3_MULTIPART.fresh();
        try (FaultProxy proxy = new FaultProxy(S3ProxyServer.get().endpoint(), 7);
                S3ObjectStore store = (S3ObjectStore) direct.open()) {
            StoreSpec viaProxy =
                    StoreSpec.parse(direct.uri().toString()).withEndpoint(proxy.endpoint());
            JobClient client =
                    SnapshotTestJob.over(READINGS)
                            .store(viaProxy)
                            .inlineThresholdBytes(0)
                            .backoff(new Backoff(3, Duration.ofMillis(10), Duration.ofMillis(50)))
                            .eventsPerSecond(400)
                            .start();
            awaitParts(direct, 4);
            awaitStagedUpload(
                    store); // a part staged and not yet committed: its upload is what the outage
            // takes
            proxy.outage(Duration.ofSeconds(4));
            int aborted = 0;
            for (long end = System.nanoTime() + Duration.ofSeconds(4).toNanos();
                    System.nanoTime() < end; ) {
                aborted += store.abortIncompleteUploads();
                Thread.sleep(100);
            }
            client.getJobExecutionResult().get(3, TimeUnit.MINUTES);

            assertThat(aborted).as("staged uploads aborted during the outage").isPositive();
            assertThat(proxy.injected(Fault.SLOW_DOWN_503)).isPositive();
            assertThat(Metrics.gaugeMax(REPORTER, client.getJobID(), "numRestarts"))
                    .as("the job failed over")
                    .isPositive();
            // A failover recomputes and stages again what it had staged after its last checkpoint:
            // those copies are garbage the staging retention removes, never a part at risk.
            List<String> left = new ArrayList<>();
            store.listStaged("", s -> left.add(s.key()));
            for (String key : left) {
                assertThat(store.head(key))
                        .as("the part of a staged copy left behind, %s, is published", key)
                        .isPresent();
            }
            System.out.printf(
                    "FIGURES outage: %d staged uploads aborted, %d restarts, %d staged objects left%n",
                    aborted,
                    Metrics.gaugeMax(REPORTER, client.getJobID(), "numRestarts"),
                    left.size());
            figures(
                    "outage with uploads aborted",
                    StoreKind.S3_MULTIPART,
                    assertPublishedExactlyOnce(direct, READINGS, 4, 1),
                    client.getJobID());
        }
    }

    private static void awaitStagedUpload(ObjectStore store) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(1);
        while (true) {
            List<String> uploads = new ArrayList<>();
            store.listStaged(
                    "",
                    s -> {
                        if (!s.handle().startsWith(ObjectKeys.STAGING_PREFIX)) {
                            uploads.add(s.handle());
                        }
                    });
            if (!uploads.isEmpty()) {
                return;
            }
            assertThat(System.nanoTime()).as("a staged upload appears").isLessThan(deadline);
            Thread.sleep(5);
        }
    }

    /** Prints what a scenario produced, so a run's figures can be quoted. */
    private static void figures(
            String scenario, StoreKind kind, StoreContents contents, JobID... jobs) {
        long[] sums = new long[5];
        String[] names = {
            "partsCreated", "partsCollapsed", "partsDivergent", "storeRetries", "storeConflicts"
        };
        for (JobID job : jobs) {
            for (int i = 0; i < names.length; i++) {
                sums[i] += Metrics.sum(REPORTER, job, names[i]);
            }
        }
        long windows =
                contents.keys.keySet().stream().map(PartRef::windowStartMillis).distinct().count();
        int maxPerPart = contents.keys.values().stream().mapToInt(List::size).max().orElse(0);
        System.out.printf(
                "FIGURES %s [%s]: windows=%d parts=%d max-objects-per-part=%d created=%d collapsed=%d"
                        + " divergent=%d retries=%d conflicts=%d evidence=%d%n",
                scenario,
                kind,
                windows,
                contents.keys.size(),
                maxPerPart,
                sums[0],
                sums[1],
                sums[2],
                sums[3],
                sums[4],
                contents.divergenceEvidence.size());
    }

    /**
     * The store holds exactly the reference: one object per part, rows equal, pointer at the end.
     */
    static StoreContents assertPublishedExactlyOnce(
            StoreSpec spec, Readings readings, int buckets, int jobVersion) throws Exception {
        return assertPublishedExactlyOnce(spec, readings, readings.reference(buckets), jobVersion);
    }

    static StoreContents assertPublishedExactlyOnce(
            StoreSpec spec,
            Readings readings,
            Map<PartRef, Set<KeyTotal>> reference,
            int jobVersion)
            throws Exception {
        try (ObjectStore store = spec.open()) {
            StoreContents contents =
                    StoreContents.read(store, SnapshotTestJob.PIPELINE, jobVersion);
            assertThat(contents.duplicated()).as("parts held by more than one object").isEmpty();
            assertThat(contents.unexpected).as("objects outside the key scheme").isEmpty();
            assertThat(contents.keys.keySet())
                    .as("(window, bucket) parts published")
                    .isEqualTo(reference.keySet());
            assertThat(contents.rows)
                    .as("rows per part equal the reference computed without Flink")
                    .isEqualTo(reference);
            assertThat(contents.fingerprintMismatches).isEmpty();
            assertThat(contents.missingProvenance)
                    .as("writer provenance in every part's metadata")
                    .isEmpty();
            long lastWindowEnd =
                    reference.keySet().stream()
                                    .mapToLong(PartRef::windowStartMillis)
                                    .max()
                                    .getAsLong()
                            + readings.windowMillis();
            assertThat(
                            CompletionPointer.read(
                                    store, PartKind.SNAPSHOT, SnapshotTestJob.PIPELINE, jobVersion))
                    .as("completion pointer")
                    .contains(lastWindowEnd);
            long firstWindow =
                    reference.keySet().stream()
                            .mapToLong(PartRef::windowStartMillis)
                            .min()
                            .getAsLong();
            for (long w = firstWindow; w < lastWindowEnd; w += readings.windowMillis()) {
                long window = w;
                Map<Integer, String> published = new TreeMap<>();
                contents.keys.forEach(
                        (ref, keys) -> {
                            if (ref.windowStartMillis() == window) {
                                published.put(ref.bucket(), keys.get(0));
                            }
                        });
                WindowManifest.Manifest manifest =
                        WindowManifest.read(
                                        store,
                                        ObjectKeys.manifestKey(
                                                PartKind.SNAPSHOT,
                                                SnapshotTestJob.PIPELINE,
                                                jobVersion,
                                                1,
                                                w))
                                .orElseThrow(
                                        () ->
                                                new AssertionError(
                                                        "no manifest for complete window "
                                                                + Instant.ofEpochMilli(window)));
                assertThat(
                                manifest.parts().values().stream()
                                        .collect(
                                                Collectors.toMap(
                                                        WindowManifest.Listed::bucket,
                                                        WindowManifest.Listed::key)))
                        .as("manifest of %s", Instant.ofEpochMilli(w))
                        .isEqualTo(published);
            }
            return contents;
        }
    }

    private static void assertPointerNeverAhead(PointerWatch watch, Set<PartRef> expected)
            throws Exception {
        assertThat(watch.observations()).as("polls that saw a pointer").isPositive();
        assertThat(watch.violations(expected))
                .as("moments the pointer was ahead of the parts")
                .isEmpty();
        System.out.printf(
                "FIGURES pointer invariant: %d polls, no window before the pointer without its parts%n",
                watch.observations());
    }

    static void awaitParts(StoreSpec spec, int parts) throws Exception {
        try (ObjectStore store = spec.open()) {
            long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(2);
            while (System.nanoTime() < deadline) {
                int[] n = {0};
                store.list(
                        SnapshotTestJob.PIPELINE + "/",
                        o -> n[0] += o.key().endsWith(".parquet") ? 1 : 0);
                if (n[0] >= parts) {
                    return;
                }
                Thread.sleep(50);
            }
            throw new AssertionError("fewer than " + parts + " parts appeared in " + spec);
        }
    }
}
