package dev.snapshots.sink;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.snapshots.key.ObjectKeys;
import dev.snapshots.key.PartKind;
import dev.snapshots.store.ObjectStore;
import dev.snapshots.store.ProvenStores;
import dev.snapshots.store.StoreConformance;
import dev.snapshots.store.StoreConformance.NonConformingStoreException;
import dev.snapshots.store.StoreConformance.Verdict;
import dev.snapshots.store.StoreSpec;
import dev.snapshots.testkit.FaultProxy;
import dev.snapshots.testkit.S3ProxyServer;
import dev.snapshots.testkit.StoreKind;
import dev.snapshots.testutils.CountingMetricGroup;
import dev.snapshots.testutils.KeyTotal;
import dev.snapshots.testutils.Metrics;
import dev.snapshots.testutils.Readings;
import dev.snapshots.testutils.SnapshotTestJob;
import dev.snapshots.testutils.StoreContents;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.runtime.execution.SuppressRestartsException;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.runtime.testutils.InMemoryReporter;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.test.junit5.InjectMiniCluster;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The store must refuse a second create-if-absent before anything is published to it. Proven
 * against real servers: S3Proxy 4.1.0 and the local filesystem conform; S3Proxy 2.0.0 ignores
 * {@code If-None-Match} and replaces the object; a proxy that strips the header makes S3Proxy 4.1.0
 * replace it too.
 */
class StoreConformanceITCase {
    private static final InMemoryReporter REPORTER = InMemoryReporter.createWithRetainedMetrics();

    /** A slot per TaskManager: the job's two subtasks run on both, so losing one fails the job. */
    @RegisterExtension
    static final MiniClusterExtension CLUSTER =
            new MiniClusterExtension(
                    new MiniClusterResourceConfiguration.Builder()
                            .setNumberTaskManagers(2)
                            .setNumberSlotsPerTaskManager(1)
                            .setConfiguration(REPORTER.addToConfiguration(new Configuration()))
                            .build());

    private static final Readings READINGS = Readings.of(4, 60_000, 20, 10);

    @ParameterizedTest(name = "{0}")
    @EnumSource(StoreKind.class)
    void aStoreThatRefusesASecondCreateConformsAndKeepsNothingOfTheProbe(StoreKind kind)
            throws Exception {
        try (ObjectStore store = kind.fresh().open()) {
            Verdict verdict = StoreConformance.probe(store);

            assertThat(verdict.conforming()).as(verdict.toString()).isTrue();
            assertThat(StoreContents.keys(store, "")).isEmpty();
        }
    }

    @Test
    void aServerThatIgnoresIfNoneMatchIsNamedWithTheOperation() throws Exception {
        StoreSpec spec = withoutConditionalWrites();
        try (ObjectStore store = spec.open()) {
            Verdict verdict = StoreConformance.probe(store);

            assertThat(verdict.conforming()).isFalse();
            assertThat(StoreConformance.refusal(verdict))
                    .contains(spec.toString())
                    .contains(S3ProxyServer.withoutConditionalWrites().endpoint())
                    .contains("a conditional PUT (If-None-Match: *) over an existing object")
                    .contains("replaced it")
                    .contains("Nothing was published");
            assertThat(StoreContents.keys(store, "")).isEmpty();
        }
    }

    @Test
    void aProxyThatStripsTheConditionIsRefused() throws Exception {
        S3ProxyServer s3 = S3ProxyServer.get();
        try (FaultProxy proxy = new FaultProxy(s3.endpoint(), 1).stripConditionalHeaders();
                ObjectStore store =
                        StoreSpec.parse("s3://" + s3.createBucket("strip") + "/out")
                                .withEndpoint(proxy.endpoint())
                                .open()) {
            assertThat(StoreConformance.probe(store).violation())
                    .hasValueSatisfying(v -> assertThat(v).contains("If-None-Match"));
        }
    }

    /**
     * A connection dropped after S3 carried out the probe's first write: the client sends it again
     * and S3 refuses it, since the object now exists. That is a conforming store, not one that
     * refuses to create a new key (a chaos run's job, started through a faulty proxy, was refused
     * for it; a writer so refused fails the job for good).
     */
    @Test
    void aCreateWhoseAnswerWasLostIsNotTakenForARefusal() throws Exception {
        S3ProxyServer s3 = S3ProxyServer.get();
        try (FaultProxy proxy = new FaultProxy(s3.endpoint(), 1);
                ObjectStore store =
                        StoreSpec.parse("s3://" + s3.createBucket("lost") + "/out")
                                .withEndpoint(proxy.endpoint())
                                .open()) {
            proxy.failNext(FaultProxy.Fault.DROP_AFTER_FORWARD, 1); // the first conditional PUT
            Verdict verdict = StoreConformance.probe(store);

            assertThat(verdict.conforming()).as(verdict.toString()).isTrue();
        }
    }

    /**
     * A probe that cannot finish (the store keeps failing the promotion of its staged content)
     * fails, and leaves no staged upload: with injected faults every start had left one for the
     * bucket's rule, and {@code inspect} listed it.
     */
    @Test
    void aProbeThatFailsLeavesNoStagedUpload() throws Exception {
        S3ProxyServer s3 = S3ProxyServer.get();
        try (FaultProxy proxy = new FaultProxy(s3.endpoint(), 1);
                ObjectStore store =
                        StoreSpec.parse("s3://" + s3.createBucket("unfinished") + "/out")
                                .withEndpoint(proxy.endpoint())
                                .open()) {
            proxy.failOneRequest(FaultProxy.Fault.COMPLETE_INTERNAL_200, "POST", 100);

            assertThatThrownBy(() -> StoreConformance.probe(store)).isInstanceOf(IOException.class);
            List<String> staged = new ArrayList<>();
            store.listStaged("", s -> staged.add(s.key()));
            assertThat(staged).isEmpty();
            assertThat(StoreContents.keys(store, "")).isEmpty();
        }
    }

    /**
     * The probe costs a TaskManager new to the job seconds before its tasks run. A writer restoring
     * a checkpoint of its own run skips it: that run's writers proved the store before any
     * checkpoint. A new run (a new submission, from a savepoint or not) probes as it starts. The
     * file store keeps each probe's directory under {@code _conformance/}, so they can be counted;
     * the cluster runs in this process, so what it proved is forgotten where a real TaskManager
     * would be a new process.
     */
    @Test
    void aJobRestoredAfterATaskManagerLossDoesNotProbeAgainWhileANewRunDoes(
            @InjectMiniCluster MiniCluster cluster, @TempDir Path root, @TempDir Path savepoints)
            throws Exception {
        StoreSpec store = StoreSpec.local(root);
        Readings readings = Readings.of(16, 60_000, 400, 20); // 2 s a window
        JobClient first =
                SnapshotTestJob.over(readings)
                        .store(store)
                        .eventsPerSecond(200)
                        .beforeSubmit(ProvenStores::forget)
                        .start();
        SnapshotSinkITCase.awaitParts(store, 4);
        int atStart = probes(root);
        assertThat(atStart).as("probes by the build and the writers of a new run").isGreaterThan(1);

        ProvenStores.forget();
        // A writer that read the job version's identity would record it again (create-if-absent):
        // taken away, it stays away only if the restored writers asked the store nothing.
        Path identity =
                root.resolve(
                        ObjectKeys.identityKey(PartKind.SNAPSHOT, SnapshotTestJob.PIPELINE, 1));
        byte[] recorded = Files.readAllBytes(identity);
        Files.delete(identity);
        int partsBefore = parts(root);
        cluster.terminateTaskManager(0).get(30, TimeUnit.SECONDS);
        cluster.startTaskManager();
        // Two windows more: both restored writers opened and wrote.
        SnapshotSinkITCase.awaitParts(store, partsBefore + 8);
        assertThat(Metrics.gaugeMax(REPORTER, first.getJobID(), "numRestarts"))
                .as("the job failed over")
                .isPositive();
        assertThat(probes(root)).as("probes after the restore of its own run").isEqualTo(atStart);
        assertThat(identity)
                .as("the identity, not read by writers whose checkpoint carries what it told them")
                .doesNotExist();
        // Back, as the store keeps it: a version with parts and no record is taken for one
        // written before records existed, whose next run records fingerprint scheme 1.
        Files.write(identity, recorded);

        String savepoint =
                first.stopWithSavepoint(
                                false, savepoints.toUri().toString(), SavepointFormatType.CANONICAL)
                        .get(2, TimeUnit.MINUTES);
        SnapshotTestJob.over(readings)
                .store(store)
                .fromSavepoint(savepoint)
                .beforeSubmit(ProvenStores::forget)
                .run();

        assertThat(probes(root))
                .as("probes by the build and the writers of a run from the savepoint")
                .isGreaterThan(atStart + 1);
        SnapshotSinkITCase.assertPublishedExactlyOnce(store, readings, 4, 1);
    }

    private static int probes(Path root) throws IOException {
        try (Stream<Path> probes = Files.list(root.resolve(ObjectKeys.CONFORMANCE_PREFIX))) {
            return (int) probes.count();
        }
    }

    private static int parts(Path root) throws IOException {
        try (Stream<Path> files = Files.walk(root.resolve(SnapshotTestJob.PIPELINE))) {
            return (int) files.filter(f -> f.toString().endsWith(".parquet")).count();
        }
    }

    /**
     * Tried as a new user would: a job into such a store is refused before it is submitted, and
     * nothing is published.
     */
    @Test
    void aJobIntoANonConformingStoreIsRefusedBeforeItStarts() throws Exception {
        StoreSpec spec = withoutConditionalWrites();

        assertThatThrownBy(() -> SnapshotTestJob.over(READINGS).store(spec).start())
                .isInstanceOf(NonConformingStoreException.class)
                .hasMessageContaining(spec.toString());
        try (ObjectStore store = spec.open()) {
            assertThat(StoreContents.keys(store, "")).isEmpty();
        }
    }

    /** A writer opened any other way (a job built elsewhere) refuses too, and for good. */
    @Test
    void aWriterRefusesWithoutRestarts() throws Exception {
        StoreSpec spec = withoutConditionalWrites();
        SnapshotSinkConfig<KeyTotal> config =
                CanonicalSnapshotSink.<KeyTotal>builder()
                        .pipeline("readings")
                        .jobVersion(1)
                        .bucketCount(4)
                        .store(spec)
                        .rowFormat(new KeyTotal.Format())
                        .build()
                        .config();
        try (ObjectStore store = spec.open()) {
            assertThatThrownBy(
                            () ->
                                    Preflight.inWriter(
                                            config,
                                            128,
                                            store,
                                            new CountingMetricGroup().counter("retries"),
                                            true))
                    .isInstanceOf(SuppressRestartsException.class)
                    .hasRootCauseInstanceOf(NonConformingStoreException.class);
        }
    }

    private static StoreSpec withoutConditionalWrites() {
        S3ProxyServer legacy = S3ProxyServer.withoutConditionalWrites();
        return StoreSpec.parse("s3://" + legacy.createBucket("legacy") + "/out")
                .withEndpoint(legacy.endpoint());
    }
}
