package dev.snapshots.sink;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.snapshots.store.StoreSpec;
import dev.snapshots.testkit.StoreKind;
import dev.snapshots.testutils.KeyTotal;
import dev.snapshots.testutils.PointerWatch;
import dev.snapshots.testutils.Readings;
import dev.snapshots.testutils.SnapshotTestJob;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.client.program.rest.RestClusterClient;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.JobManagerOptions;
import org.apache.flink.configuration.PipelineOptions;
import org.apache.flink.connector.file.src.FileSource;
import org.apache.flink.connector.file.src.reader.TextLineInputFormat;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.runtime.execution.ExecutionState;
import org.apache.flink.runtime.jobgraph.JobResourceRequirements;
import org.apache.flink.runtime.jobgraph.JobVertexID;
import org.apache.flink.runtime.rest.messages.job.JobDetailsInfo;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.windowing.assigners.TumblingEventTimeWindows;
import org.apache.flink.test.junit5.InjectClusterClient;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Settings production teams run with, which the defaults never show: the adaptive scheduler
 * rescaling a running job in place, operators without generated uids, a job with checkpointing off.
 * On a MiniCluster with the adaptive scheduler, as a cluster that rescales runs.
 */
class ProductionSettingsITCase {
    @RegisterExtension
    static final MiniClusterExtension CLUSTER =
            new MiniClusterExtension(
                    new MiniClusterResourceConfiguration.Builder()
                            .setNumberTaskManagers(2)
                            .setNumberSlotsPerTaskManager(4)
                            .setConfiguration(adaptiveScheduler())
                            .build());

    private static final int WINDOWS = 24;
    private static final Readings READINGS = Readings.of(WINDOWS, 60_000, 60, 40);

    private static Configuration adaptiveScheduler() {
        Configuration conf = new Configuration();
        conf.set(JobManagerOptions.SCHEDULER, JobManagerOptions.SchedulerType.Adaptive);
        // Rescale as soon as asked: the defaults wait 30 s between rescales.
        conf.setString("jobmanager.adaptive-scheduler.scaling-interval.min", "0 s");
        conf.setString("jobmanager.adaptive-scheduler.resource-stabilization-timeout", "0 s");
        return conf;
    }

    /**
     * The window and its writers go from 2 subtasks to 4 and back to 2 while the job runs, in one
     * run (the same job, restored from its checkpoints): the pointer never passes a window with a
     * missing part, and reaches the last window. Before marks were kept per parallelism, the old
     * subtasks 2 and 3 held it back for good.
     */
    @ParameterizedTest(name = "unaligned checkpoints: {0}")
    @ValueSource(booleans = {false, true})
    void aRescaleInPlaceKeepsThePointerTrueAndBringsItToTheEnd(
            boolean unaligned, @InjectClusterClient RestClusterClient<?> client) throws Exception {
        StoreSpec store = StoreKind.FILESYSTEM.fresh();
        SnapshotTestJob job =
                SnapshotTestJob.over(READINGS)
                        .store(store)
                        .eventsPerSecond(60)
                        .setting("execution.checkpointing.unaligned.enabled", "" + unaligned);
        try (PointerWatch watch = PointerWatch.start(store, 1, READINGS.windowMillis())) {
            JobClient running = job.start();
            JobID id = running.getJobID();
            for (int parallelism : new int[] {4, 2}) {
                awaitPointerMoved(watch);
                rescale(client, id, parallelism);
            }
            running.getJobExecutionResult().get(3, TimeUnit.MINUTES);

            SnapshotSinkITCase.assertPublishedExactlyOnce(store, READINGS, job.bucketCount(), 1);
            assertThat(watch.violations(READINGS.reference(job.bucketCount()).keySet()))
                    .as("moments the pointer was ahead of the data")
                    .isEmpty();
        }
    }

    /** A team that sets {@code pipeline.auto-generate-uids: false} names its own operators only. */
    @ParameterizedTest(name = "{0}")
    @EnumSource(Bucketing.class)
    void aJobWithoutGeneratedUidsRuns(Bucketing bucketing) throws Exception {
        StoreSpec store = StoreKind.FILESYSTEM.fresh();
        SnapshotTestJob job =
                SnapshotTestJob.over(READINGS)
                        .store(store)
                        .bucketing(bucketing)
                        .setting(PipelineOptions.AUTO_GENERATE_UIDS.key(), "false");

        job.run();

        SnapshotSinkITCase.assertPublishedExactlyOnce(
                store,
                READINGS,
                bucketing == Bucketing.HASH
                        ? READINGS.reference(key -> Buckets.of(key, job.bucketCount()))
                        : READINGS.reference(job.bucketCount()),
                1);
    }

    /** Without checkpoints an unbounded job would never publish: it is refused as it is built. */
    @Test
    void anUnboundedJobWithoutCheckpointsIsRefusedSayingWhatToSet(@TempDir Path input)
            throws Exception {
        Files.writeString(input.resolve("keys.txt"), "a\nb\n");
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setParallelism(2);
        CanonicalSnapshotSink<KeyTotal> sink =
                CanonicalSnapshotSink.<KeyTotal>builder()
                        .pipeline(SnapshotTestJob.PIPELINE)
                        .jobVersion(1)
                        .bucketCount(4)
                        .windowLength(Duration.ofMinutes(1))
                        .store(StoreKind.FILESYSTEM.fresh())
                        .rowFormat(new KeyTotal.Format())
                        .build();
        var totals =
                env.fromSource(
                                FileSource.forRecordStreamFormat(
                                                new TextLineInputFormat(),
                                                new org.apache.flink.core.fs.Path(input.toUri()))
                                        .monitorContinuously(Duration.ofSeconds(1))
                                        .build(),
                                WatermarkStrategy.noWatermarks(),
                                "keys")
                        .map(k -> new KeyTotal(k, 0, 1, 1))
                        .keyBy(t -> t.key)
                        .window(TumblingEventTimeWindows.of(Duration.ofMinutes(1)))
                        .reduce((a, b) -> a);

        assertThatThrownBy(() -> sink.writeWindows(totals))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("execution.checkpointing.interval");
        assertThatThrownBy(() -> sink.assemble(totals))
                .hasMessageContaining("execution.checkpointing.interval");
    }

    private static void awaitPointerMoved(PointerWatch watch) throws InterruptedException {
        long seen = watch.distinctPointers();
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(2);
        while (watch.distinctPointers() <= seen + 1 && System.nanoTime() < deadline) {
            Thread.sleep(50);
        }
    }

    /**
     * Asks the adaptive scheduler for {@code parallelism} on every vertex but the source and the
     * pointer, as {@code PUT /jobs/:id/resource-requirements} does, and waits until it runs so.
     */
    private static void rescale(RestClusterClient<?> client, JobID id, int parallelism)
            throws Exception {
        JobResourceRequirements.Builder requirements = JobResourceRequirements.newBuilder();
        Map<JobVertexID, Integer> wanted = new HashMap<>();
        for (JobDetailsInfo.JobVertexDetailsInfo v :
                client.getJobDetails(id).get().getJobVertexInfos()) {
            int p =
                    v.getMaxParallelism() == 1 || v.getName().contains("readings")
                            ? 1
                            : parallelism;
            wanted.put(v.getJobVertexID(), p);
            requirements.setParallelismForJobVertex(v.getJobVertexID(), 1, p);
        }
        client.updateJobResourceRequirements(id, requirements.build()).get();
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(2);
        while (System.nanoTime() < deadline) {
            boolean rescaled =
                    client.getJobDetails(id).get().getJobVertexInfos().stream()
                            .allMatch(
                                    v ->
                                            v.getParallelism() == wanted.get(v.getJobVertexID())
                                                    && v.getExecutionState()
                                                            == ExecutionState.RUNNING);
            if (rescaled) {
                return;
            }
            Thread.sleep(100);
        }
        throw new AssertionError(
                "the job did not run at parallelism " + parallelism + " within 2 minutes");
    }
}
