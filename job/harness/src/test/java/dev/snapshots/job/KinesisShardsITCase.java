package dev.snapshots.job;

import static org.assertj.core.api.Assertions.assertThat;

import dev.snapshots.harness.JobOutput;
import dev.snapshots.harness.testutils.KinesaliteServer;
import dev.snapshots.job.config.JobConfig;
import dev.snapshots.job.ingest.Rejection;
import dev.snapshots.job.source.TelemetryGenerator;
import dev.snapshots.job.testutils.KplEncoder;
import dev.snapshots.key.ObjectKeys;
import dev.snapshots.key.PartKind;
import dev.snapshots.key.PartMetadata;
import dev.snapshots.progress.CompletionPointer;
import dev.snapshots.store.ObjectStore;
import dev.snapshots.store.StoreSpec;
import dev.snapshots.testkit.StoreKind;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.StateRecoveryOptions;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Kinesis at production shape, on kinesalite: more shards than subtasks, densities that differ
 * tenfold, a backlog loaded before the job starts (a catch-up), shards split and merged, KPL
 * aggregates. Every run must dead-letter exactly the records that are late in their own shard and
 * publish every window equal to the reference, whatever the assignment of shards to subtasks.
 */
class KinesisShardsITCase {
    @RegisterExtension
    static final MiniClusterExtension CLUSTER =
            new MiniClusterExtension(
                    new MiniClusterResourceConfiguration.Builder()
                            .setNumberTaskManagers(2)
                            .setNumberSlotsPerTaskManager(2)
                            .build());

    private static final int WINDOWS = 12;
    private static final long WINDOW_MILLIS = 300_000;

    /**
     * Event time ends about half an hour from now: Kinesis stamps arrival with the wall clock, and
     * the horizons are judged by it.
     */
    private static final long START =
            System.currentTimeMillis() / WINDOW_MILLIS * WINDOW_MILLIS
                    - WINDOWS / 2 * WINDOW_MILLIS;

    private static final int[] DENSITIES = {20, 200, 50, 120, 35, 80};

    @TempDir Path tmp;

    /** A run of the job: the config it ran with, the store it wrote. */
    private record Run(JobConfig config, StoreSpec store) {}

    @Test
    void aBacklogOfMoreShardsThanSubtasksGivesTheSameSnapshotsWhateverReadsWhichShard()
            throws Exception {
        ShardedStream stream = ShardedStream.create(KinesaliteServer.get(), lanes(), DENSITIES);
        stream.produce(0, WINDOWS);
        long closing = stream.produceClosing(WINDOWS, START);

        Map<String, String> first = null;
        for (long[] shape : new long[][] {{2, 0}, {3, 7}, {1, 3}}) { // parallelism, assignment seed
            Run run = run(stream, (int) shape[0], shape[1], null, closing);
            assertPublishedEqualsReference(run, stream, closing);
            Map<String, String> fingerprints = fingerprints(run, closing);
            if (first == null) {
                first = fingerprints;
            }
            assertThat(fingerprints)
                    .as("fingerprints at parallelism %d, seed %d", shape[0], shape[1])
                    .isEqualTo(first);
        }
    }

    @Test
    void aRescaleAndAReplayFromASavepointTakenInTheMiddleOfACatchUpGiveTheLiveAnswer()
            throws Exception {
        ShardedStream stream = ShardedStream.create(KinesaliteServer.get(), lanes(), DENSITIES);
        stream.produce(0, WINDOWS / 2);
        StoreSpec store = StoreKind.S3_INLINE.fresh();
        JobConfig v1 = config(stream, store, 2, 1);
        JobClient job = start(v1, 5, null);
        awaitPointer(v1, START + 4 * WINDOW_MILLIS);
        String savepoint =
                job.stopWithSavepoint(
                                false,
                                tmp.resolve("savepoints").toUri().toString(),
                                SavepointFormatType.CANONICAL)
                        .get(2, TimeUnit.MINUTES);
        stream.produce(WINDOWS / 2, WINDOWS);
        long closing = stream.produceClosing(WINDOWS, START);

        Run rescaled = finish(new Run(config(stream, store, 3, 1), store), 11, savepoint, closing);
        assertPublishedEqualsReference(rescaled, stream, closing);

        Run replay = finish(new Run(config(stream, store, 1, 2), store), 0, savepoint, closing);
        Map<String, String> live = fingerprints(rescaled, closing);
        Map<String, String> replayed = fingerprints(replay, closing);
        assertThat(replayed).as("the replay's windows").isNotEmpty();
        replayed.forEach(
                (part, fp) ->
                        assertThat(fp).as("v2's %s against v1's", part).isEqualTo(live.get(part)));
    }

    @Test
    void splittingAndMergingShardsDuringACatchUpAndWhileLiveLosesNothing() throws Exception {
        int[] densities = {60, 20, 90, 30};
        ShardedStream stream = ShardedStream.create(KinesaliteServer.get(), lanes(), densities);
        stream.produce(0, 4);
        stream.split(0);
        stream.merge(2, 3);
        stream.produce(
                4, 8); // the job catches up through the reshard: parents before their children
        StoreSpec store = StoreKind.S3_INLINE.fresh();
        Run run = new Run(config(stream, store, 2, 1, "--shard-discovery", "1s"), store);
        JobClient job = start(run.config, 0, null);
        awaitPointer(run.config, START + 5 * WINDOW_MILLIS);
        stream.split(1); // and live
        stream.produce(8, WINDOWS);
        long closing = stream.produceClosing(WINDOWS, START);
        awaitPointer(run.config, closing);
        job.stopWithSavepoint(true, tmp.toUri().toString(), SavepointFormatType.CANONICAL)
                .get(2, TimeUnit.MINUTES);
        assertPublishedEqualsReference(run, stream, closing);
    }

    @Test
    void aggregatedRecordsCountAsTheirUserRecordsAndABrokenAggregateIsOneDeadLetter()
            throws Exception {
        ShardedStream stream =
                ShardedStream.create(KinesaliteServer.get(), lanes(), new int[] {120, 40});
        stream.produceAggregated(0, WINDOWS / 2, 37);
        byte[] broken =
                KplEncoder.aggregate(
                        "p",
                        List.of(
                                "{\"device\":\"lost\",\"ts\":1,\"value\":1}"
                                        .getBytes(StandardCharsets.UTF_8),
                                "{\"device\":\"lost\",\"ts\":2,\"value\":2}"
                                        .getBytes(StandardCharsets.UTF_8)));
        broken[broken.length - 3] ^= 0x40; // the digest no longer matches
        stream.putRaw(0, broken);
        stream.produce(WINDOWS / 2, WINDOWS); // plain records keep working beside aggregates
        long closing = stream.produceClosing(WINDOWS, START);

        Run run = run(stream, 2, 0, null, closing);
        JobOutput expected = stream.reference(run.config::bucketOf);
        expected.deadLetterReasons.merge(Rejection.BAD_AGGREGATE.code(), 1L, Long::sum);
        assertPublished(run, expected, closing);
    }

    @Test
    void aQuietShardStopsHoldingWindowsBackAndWhatItSendsAfterwardsIsJudgedByItsArrival()
            throws Exception {
        long minute = 60_000;
        long start = System.currentTimeMillis() / minute * minute;
        JobConfig lanes =
                JobConfig.parse(
                        new String[] {
                            "--start",
                            Instant.ofEpochMilli(start).toString(),
                            "--store",
                            "file:///unused",
                            "--window",
                            "1m",
                            "--out-of-orderness",
                            "1s",
                            "--windows",
                            "10",
                            "--keys",
                            "10",
                            "--bad-every",
                            "0",
                            "--late-every",
                            "0"
                        });
        ShardedStream stream =
                ShardedStream.create(KinesaliteServer.get(), lanes, new int[] {60, 60, 60});
        TelemetryGenerator quiet = stream.lanes.get(2).generator();
        StoreSpec store = StoreKind.S3_INLINE.fresh();
        Run run =
                new Run(
                        config(
                                stream,
                                store,
                                2,
                                1,
                                "--window",
                                "1m",
                                "--out-of-orderness",
                                "1s",
                                "--idleness",
                                "3s"),
                        store);
        JobClient job = start(run.config, 0, null);

        // Lanes 0 and 1 produce at the pace their event time says, one record a second; lane 2
        // sends three records and goes quiet. Without idleness lane 2 would hold the first window
        // open.
        stream.produce(2, 0, 3);
        long[] produced = {0, 0};
        long deadline = System.currentTimeMillis() + 150_000;
        try (ObjectStore s = store.open()) {
            while (CompletionPointer.read(s, PartKind.SNAPSHOT, run.config.pipeline(), 1).orElse(0L)
                    < start + minute) {
                assertThat(System.currentTimeMillis())
                        .as("the first window closes while lane 2 is quiet")
                        .isLessThan(deadline);
                for (int lane = 0; lane < 2; lane++) {
                    long from = produced[lane];
                    while (stream.lanes.get(lane).generator().arrival(produced[lane])
                            <= System.currentTimeMillis()) {
                        produced[lane]++;
                    }
                    stream.produce(lane, from, produced[lane]);
                }
                Thread.sleep(200);
            }
        }
        // Lane 2 comes back: a record from the window that closed meanwhile is late by its arrival;
        // records of event time now count.
        stream.produce(2, 30, 31);
        long now = (System.currentTimeMillis() - start - 1_000) / 1_000 + 2;
        stream.produce(2, now, now + 3);
        long closing = stream.produceClosing(System.currentTimeMillis() + 2 * minute);
        awaitPointer(run.config, closing);
        job.stopWithSavepoint(true, tmp.toUri().toString(), SavepointFormatType.CANONICAL)
                .get(2, TimeUnit.MINUTES);

        JobOutput expected =
                JobOutput.expected(
                        List.of(
                                new JobOutput.Lane(stream.lanes.get(0).generator(), 0, produced[0]),
                                new JobOutput.Lane(stream.lanes.get(1).generator(), 0, produced[1]),
                                new JobOutput.Lane(quiet, 0, 3),
                                new JobOutput.Lane(quiet, now, now + 3)),
                        minute,
                        run.config::bucketOf);
        expected.deadLetterReasons.merge(Rejection.LATE.code(), 1L, Long::sum);
        assertPublished(run, expected, closing);
    }

    private Run run(
            ShardedStream stream, int parallelism, long seed, String savepoint, long closing)
            throws Exception {
        StoreSpec store = StoreKind.S3_INLINE.fresh();
        return finish(
                new Run(config(stream, store, parallelism, 1), store), seed, savepoint, closing);
    }

    /** Runs until the pointer passes the closing window, then drains: every window is published. */
    private Run finish(Run run, long seed, String savepoint, long closing) throws Exception {
        JobClient job = start(run.config, seed, savepoint);
        awaitPointer(run.config, closing);
        job.stopWithSavepoint(true, tmp.toUri().toString(), SavepointFormatType.CANONICAL)
                .get(2, TimeUnit.MINUTES);
        return run;
    }

    private static JobClient start(JobConfig config, long seed, String savepoint) throws Exception {
        Configuration conf = new Configuration();
        if (savepoint != null) {
            conf.set(StateRecoveryOptions.SAVEPOINT_PATH, savepoint);
        }
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
        SnapshotJob.environment(env, config);
        SnapshotPipeline.build(env, config, Sources.kinesis(env, config, seed));
        return env.executeAsync(SnapshotJob.name(config));
    }

    private static void awaitPointer(JobConfig config, long window) throws Exception {
        try (ObjectStore s = config.store().open()) {
            long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(3);
            while (CompletionPointer.read(
                                    s, PartKind.SNAPSHOT, config.pipeline(), config.jobVersion())
                            .orElse(0L)
                    < window) {
                assertThat(System.nanoTime())
                        .as("the pointer passes %s", Instant.ofEpochMilli(window))
                        .isLessThan(deadline);
                Thread.sleep(100);
            }
        }
    }

    private static void assertPublishedEqualsReference(Run run, ShardedStream stream, long closing)
            throws Exception {
        assertPublished(run, stream.reference(run.config::bucketOf), closing);
    }

    private static void assertPublished(Run run, JobOutput expected, long closing)
            throws Exception {
        JobOutput published;
        try (ObjectStore s = run.store.open()) {
            published = JobOutput.published(s, run.config.jobVersion(), closing);
        }
        System.out.printf(
                "FIGURES kinesis shards (parallelism %d): good events %d, published %d, dead letters %s%n",
                run.config.parallelism().orElse(-1),
                expected.goodEvents,
                published.goodEvents,
                published.deadLetterReasons);
        assertThat(published.differences(expected)).isEmpty();
    }

    /** Each published window's parts by "window/bucket": their content fingerprints. */
    private static Map<String, String> fingerprints(Run run, long before) throws Exception {
        Map<String, String> out = new TreeMap<>();
        try (ObjectStore s = run.store.open()) {
            List<String> keys = new ArrayList<>();
            s.list(
                    ObjectKeys.versionPrefix(run.config.pipeline(), run.config.jobVersion()),
                    o -> keys.add(o.key()));
            for (String key : keys) {
                ObjectKeys.PartKey p = ObjectKeys.parse(key).orElse(null);
                if (p != null && p.kind() == PartKind.SNAPSHOT && p.windowStartMillis() < before) {
                    out.put(
                            p.windowStartMillis() + "/" + p.bucket(),
                            s.head(key).orElseThrow().metadata().get(PartMetadata.FINGERPRINT));
                }
            }
        }
        return out;
    }

    /** The lanes' generator settings. */
    private static JobConfig lanes() {
        return JobConfig.parse(
                new String[] {
                    "--start",
                    Instant.ofEpochMilli(START).toString(),
                    "--store",
                    "file:///unused",
                    "--windows",
                    Integer.toString(WINDOWS),
                    "--keys",
                    "40",
                    "--bad-every",
                    "53",
                    "--late-every",
                    "89"
                });
    }

    private static JobConfig config(
            ShardedStream stream,
            StoreSpec store,
            int parallelism,
            int jobVersion,
            String... more) {
        List<String> args =
                new ArrayList<>(
                        List.of(
                                "--source",
                                "kinesis",
                                "--stream-arn",
                                stream.arn,
                                "--kinesis-endpoint",
                                KinesaliteServer.get().endpoint(),
                                "--store",
                                store.uri().toString(),
                                "--parallelism",
                                Integer.toString(parallelism),
                                "--job-version",
                                Integer.toString(jobVersion),
                                "--checkpoint-interval",
                                "500ms"));
        store.endpoint().ifPresent(e -> args.addAll(List.of("--endpoint", e)));
        args.addAll(List.of(more));
        return JobConfig.parse(args.toArray(new String[0]));
    }
}
