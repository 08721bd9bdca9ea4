package dev.snapshots.sink;

import static org.assertj.core.api.Assertions.assertThat;

import dev.snapshots.key.PartKind;
import dev.snapshots.progress.CompletionPointer;
import dev.snapshots.store.ObjectStore;
import dev.snapshots.store.StoreSpec;
import dev.snapshots.testkit.FaultProxy;
import dev.snapshots.testkit.FaultProxy.Fault;
import dev.snapshots.testutils.Metrics;
import dev.snapshots.testutils.PartRef;
import dev.snapshots.testutils.Readings;
import dev.snapshots.testutils.S3ProxyServer;
import dev.snapshots.testutils.SnapshotTestJob;
import dev.snapshots.testutils.StoreContents;
import dev.snapshots.testutils.StoreKind;
import java.time.Duration;
import java.util.EnumSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.apache.flink.api.common.JobID;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.runtime.testutils.InMemoryReporter;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.test.junit5.InjectMiniCluster;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The sink's promise under the failures it exists for, on a Flink MiniCluster (2 TaskManagers,
 * checkpointing on) against real stores: S3Proxy over HTTP and the local filesystem. Every
 * scenario runs a bounded, deterministic input over 24 windows and checks the store against a
 * reference computed in plain Java: exactly one object per (window, bucket), rows equal to the
 * reference, fingerprints matching content, and the completion pointer at the last window.
 */
class SnapshotSinkITCase {
    private static final InMemoryReporter REPORTER = InMemoryReporter.createWithRetainedMetrics();

    @RegisterExtension
    static final MiniClusterExtension CLUSTER = new MiniClusterExtension(new MiniClusterResourceConfiguration.Builder()
            .setNumberTaskManagers(2)
            .setNumberSlotsPerTaskManager(4)
            .setConfiguration(REPORTER.addToConfiguration(new Configuration()))
            .build());

    private static final int WINDOWS = 24;
    private static final Readings READINGS = Readings.of(WINDOWS, 60_000, 60, 40);

    @ParameterizedTest(name = "{0}")
    @EnumSource(StoreKind.class)
    void failureAfterCompletedCheckpointsStillPublishesEachPartExactlyOnce(StoreKind kind) throws Exception {
        StoreSpec store = kind.fresh();
        SnapshotTestJob job = SnapshotTestJob.over(READINGS).store(store)
                .inlineThresholdBytes(kind.inlineThresholdBytes())
                .failOnceAfter(READINGS.count() / 2);

        JobID id = job.run();

        // Whether the restored checkpoint held parts that were already committed depends on timing (and
        // a write whose response was lost counts as collapsed on its retry), so created and collapsed
        // counts are reported, not asserted, here; SnapshotCommitterITCase re-commits on purpose.
        figures("restart", kind, assertPublishedExactlyOnce(store, READINGS, job.bucketCount(), 1), id);
        assertThat(Metrics.sum(REPORTER, id, "partsDivergent")).isZero();
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(StoreKind.class)
    void taskManagerTerminatedMidWindowLeavesOneObjectPerPart(StoreKind kind, @InjectMiniCluster MiniCluster cluster)
            throws Exception {
        StoreSpec store = kind.fresh();
        SnapshotTestJob job = SnapshotTestJob.over(READINGS).store(store)
                .inlineThresholdBytes(kind.inlineThresholdBytes())
                .eventsPerSecond(400);

        JobClient client = job.start();
        awaitParts(store, 6);
        cluster.terminateTaskManager(0).get(30, TimeUnit.SECONDS);
        cluster.startTaskManager();
        client.getJobExecutionResult().get(3, TimeUnit.MINUTES);

        figures("tm-killed", kind, assertPublishedExactlyOnce(store, READINGS, job.bucketCount(), 1), client.getJobID());
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(StoreKind.class)
    void twoConcurrentInstancesOfTheSameWorkCollapseIntoOneObjectPerPart(StoreKind kind) throws Exception {
        StoreSpec store = kind.fresh();
        SnapshotTestJob old = SnapshotTestJob.over(READINGS).store(store).inlineThresholdBytes(kind.inlineThresholdBytes());
        SnapshotTestJob next = SnapshotTestJob.over(READINGS).store(store).inlineThresholdBytes(kind.inlineThresholdBytes());

        JobClient a = old.start();
        JobClient b = next.start();
        a.getJobExecutionResult().get(3, TimeUnit.MINUTES);
        b.getJobExecutionResult().get(3, TimeUnit.MINUTES);

        figures("concurrent", kind, assertPublishedExactlyOnce(store, READINGS, old.bucketCount(), 1), a.getJobID(), b.getJobID());
        long collapsed = Metrics.sum(REPORTER, a.getJobID(), "partsCollapsed") + Metrics.sum(REPORTER, b.getJobID(), "partsCollapsed");
        long created = Metrics.sum(REPORTER, a.getJobID(), "partsCreated") + Metrics.sum(REPORTER, b.getJobID(), "partsCreated");
        int parts = READINGS.reference(old.bucketCount()).size();
        assertThat(created + collapsed).as("every part committed by both instances").isEqualTo(2L * parts);
        assertThat(collapsed).as("the second copy of every part collapsed (a write whose reply was lost counts once more)")
                .isGreaterThanOrEqualTo(parts);
        assertThat(Metrics.sum(REPORTER, a.getJobID(), "partsDivergent") + Metrics.sum(REPORTER, b.getJobID(), "partsDivergent"))
                .isZero();
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(StoreKind.class)
    void recomputationWithDifferentInputKeepsTheFirstObjectAndReportsEachDivergentPart(StoreKind kind) throws Exception {
        StoreSpec store = kind.fresh();
        Readings altered = READINGS.alteringWindows(3, 7, 8);
        SnapshotTestJob.over(READINGS).store(store).inlineThresholdBytes(kind.inlineThresholdBytes()).run();

        JobID second = SnapshotTestJob.over(altered).store(store).inlineThresholdBytes(kind.inlineThresholdBytes()).run();

        int buckets = 4;
        Map<PartRef, Set<dev.snapshots.testutils.KeyTotal>> first = READINGS.reference(buckets);
        Map<PartRef, Set<dev.snapshots.testutils.KeyTotal>> changed = altered.reference(buckets);
        long differing = first.keySet().stream().filter(p -> !first.get(p).equals(changed.get(p))).count();
        assertThat(differing).as("the altered windows change some parts").isPositive();

        StoreContents contents = assertPublishedExactlyOnce(store, READINGS, buckets, 1);
        figures("divergence (second run)", kind, contents, second);
        assertThat(contents.divergenceEvidence).as("evidence for exactly the differing parts").hasSize((int) differing);
        assertThat(Metrics.sum(REPORTER, second, "partsDivergent")).isEqualTo(differing);
        assertThat(Metrics.sum(REPORTER, second, "partsCollapsed")).isEqualTo(first.size() - differing);
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(value = StoreKind.class, names = {"S3_INLINE", "S3_MULTIPART"})
    void injectedConflictsThrottlingErrorsAndDropsAreRetriedToTheSameResult(StoreKind kind) throws Exception {
        StoreSpec direct = kind.fresh();
        try (FaultProxy proxy = new FaultProxy(S3ProxyServer.get().endpoint(), 42)) {
            proxy.inject(0.15, EnumSet.allOf(Fault.class)).failNext(Fault.CONFLICT_409, 5);
            StoreSpec viaProxy = StoreSpec.parse(direct.uri().toString()).withEndpoint(proxy.endpoint());

            JobID id = SnapshotTestJob.over(READINGS).store(viaProxy).inlineThresholdBytes(kind.inlineThresholdBytes())
                    .backoff(new Backoff(10, Duration.ofMillis(10), Duration.ofMillis(200)))
                    .run();

            assertThat(proxy.injectedTotal()).isPositive();
            assertThat(proxy.injected(Fault.CONFLICT_409)).as("409s reached conditional writes").isPositive();
            assertThat(Metrics.sum(REPORTER, id, "storeRetries")).as("commit retries").isPositive();
            figures("faults " + proxy.injectedTotal() + " injected", kind, assertPublishedExactlyOnce(direct, READINGS, 4, 1), id);
        }
    }

    @Test
    void aStoreOutageLongerThanTheRetriesFailsTheJobOverAndItStillEndsCorrect() throws Exception {
        StoreSpec direct = StoreKind.S3_INLINE.fresh();
        try (FaultProxy proxy = new FaultProxy(S3ProxyServer.get().endpoint(), 7)) {
            StoreSpec viaProxy = StoreSpec.parse(direct.uri().toString()).withEndpoint(proxy.endpoint());
            JobClient client = SnapshotTestJob.over(READINGS).store(viaProxy)
                    .backoff(new Backoff(3, Duration.ofMillis(10), Duration.ofMillis(50)))
                    .eventsPerSecond(400)
                    .start();
            awaitParts(direct, 4);
            proxy.outage(Duration.ofSeconds(3));
            client.getJobExecutionResult().get(3, TimeUnit.MINUTES);

            assertThat(proxy.injected(Fault.SLOW_DOWN_503)).isPositive();
            assertThat(Metrics.sum(REPORTER, client.getJobID(), "storeRetries")).as("retries before giving up").isPositive();
            assertThat(Metrics.gaugeMax(REPORTER, client.getJobID(), "numRestarts")).as("the job failed over").isPositive();
            figures("outage, restarts=" + Metrics.gaugeMax(REPORTER, client.getJobID(), "numRestarts"), StoreKind.S3_INLINE,
                    assertPublishedExactlyOnce(direct, READINGS, 4, 1), client.getJobID());
        }
    }

    /** Prints what a scenario produced, so a run's figures can be quoted. */
    private static void figures(String scenario, StoreKind kind, StoreContents contents, JobID... jobs) {
        long[] sums = new long[5];
        String[] names = {"partsCreated", "partsCollapsed", "partsDivergent", "storeRetries", "storeConflicts"};
        for (JobID job : jobs) {
            for (int i = 0; i < names.length; i++) {
                sums[i] += Metrics.sum(REPORTER, job, names[i]);
            }
        }
        long windows = contents.keys.keySet().stream().map(PartRef::windowStartMillis).distinct().count();
        int maxPerPart = contents.keys.values().stream().mapToInt(java.util.List::size).max().orElse(0);
        System.out.printf("FIGURES %s [%s]: windows=%d parts=%d max-objects-per-part=%d created=%d collapsed=%d"
                        + " divergent=%d retries=%d conflicts=%d evidence=%d%n",
                scenario, kind, windows, contents.keys.size(), maxPerPart, sums[0], sums[1], sums[2], sums[3], sums[4],
                contents.divergenceEvidence.size());
    }

    /** The store holds exactly the reference: one object per part, rows equal, pointer at the end. */
    static StoreContents assertPublishedExactlyOnce(StoreSpec spec, Readings readings, int buckets, int jobVersion)
            throws Exception {
        Map<PartRef, Set<dev.snapshots.testutils.KeyTotal>> reference = readings.reference(buckets);
        try (ObjectStore store = spec.open()) {
            StoreContents contents = StoreContents.read(store, SnapshotTestJob.PIPELINE, jobVersion);
            assertThat(contents.duplicated()).as("parts held by more than one object").isEmpty();
            assertThat(contents.unexpected).as("objects outside the key scheme").isEmpty();
            assertThat(contents.keys.keySet()).as("(window, bucket) parts published").isEqualTo(reference.keySet());
            assertThat(contents.rows).as("rows per part equal the reference computed without Flink").isEqualTo(reference);
            assertThat(contents.fingerprintMismatches).isEmpty();
            assertThat(contents.missingProvenance).as("writer provenance in every part's metadata").isEmpty();
            long lastWindowEnd = reference.keySet().stream().mapToLong(PartRef::windowStartMillis).max().getAsLong()
                    + readings.windowMillis();
            assertThat(CompletionPointer.read(store, PartKind.SNAPSHOT, SnapshotTestJob.PIPELINE, jobVersion))
                    .as("completion pointer").contains(lastWindowEnd);
            return contents;
        }
    }

    private static void awaitParts(StoreSpec spec, int parts) throws Exception {
        try (ObjectStore store = spec.open()) {
            long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(2);
            while (System.nanoTime() < deadline) {
                int[] n = {0};
                store.list(SnapshotTestJob.PIPELINE + "/", o -> n[0] += o.key().endsWith(".parquet") ? 1 : 0);
                if (n[0] >= parts) {
                    return;
                }
                Thread.sleep(50);
            }
            throw new AssertionError("fewer than " + parts + " parts appeared in " + spec);
        }
    }
}
