package dev.snapshots.sink;

import static dev.snapshots.sink.SnapshotSinkITCase.assertPublishedExactlyOnce;
import static dev.snapshots.sink.SnapshotSinkITCase.awaitParts;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.snapshots.key.PartMetadata;
import dev.snapshots.store.ObjectStore;
import dev.snapshots.store.StoreSpec;
import dev.snapshots.testkit.StoreKind;
import dev.snapshots.testutils.KeyTotal;
import dev.snapshots.testutils.PartRef;
import dev.snapshots.testutils.Readings;
import dev.snapshots.testutils.SnapshotTestJob;
import dev.snapshots.testutils.StoreContents;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.connector.source.util.ratelimit.RateLimiterStrategy;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.RestartStrategyOptions;
import org.apache.flink.connector.datagen.source.DataGeneratorSource;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Key-group buckets, with the sink chained to the window: the same parts at every parallelism (one
 * that splits a bucket writes through fewer writers) and across a rescale from a savepoint; a clear
 * refusal of every setting that would let a bucket's rows come from two subtasks or a checkpoint
 * fall inside a window's rows.
 */
class KeyGroupBucketsITCase {
    @RegisterExtension
    static final MiniClusterExtension CLUSTER =
            new MiniClusterExtension(
                    new MiniClusterResourceConfiguration.Builder()
                            .setNumberTaskManagers(1)
                            .setNumberSlotsPerTaskManager(4)
                            .build());

    private static final Readings READINGS = Readings.of(16, 60_000, 60, 40);

    /** 6 buckets of 4 key groups each: whole at parallelism 1, 2, 3 and 6, split at 4. */
    private static final int BUCKETS = 6;

    private static final int MAX_PARALLELISM = 24;

    private static final Map<PartRef, Set<KeyTotal>> REFERENCE =
            READINGS.reference(Readings.keyGroupBuckets(BUCKETS, MAX_PARALLELISM));

    private static SnapshotTestJob job(StoreSpec store, int parallelism) {
        return SnapshotTestJob.over(READINGS)
                .store(store)
                .bucketCount(BUCKETS)
                .maxParallelism(MAX_PARALLELISM)
                .parallelism(parallelism);
    }

    /** 4 splits the buckets: its window's rows go to 3 writers. */
    @Test
    void parallelismOneTwoThreeAndFourPublishTheSamePartsWithTheSameContent() throws Exception {
        Map<String, String> firstFingerprints = null;
        for (int parallelism : List.of(1, 2, 3, 4)) {
            StoreSpec store = StoreKind.FILESYSTEM.fresh();
            job(store, parallelism).run();

            StoreContents contents = assertPublishedExactlyOnce(store, READINGS, REFERENCE, 1);
            Map<String, String> fingerprints = fingerprints(store);
            assertThat(fingerprints).as("parts at parallelism %d", parallelism).isNotEmpty();
            if (firstFingerprints == null) {
                firstFingerprints = fingerprints;
            } else {
                assertThat(fingerprints)
                        .as("keys and fingerprints at parallelism %d vs 1", parallelism)
                        .isEqualTo(firstFingerprints);
            }
            assertThat(contents.rows.keySet()).isEqualTo(REFERENCE.keySet());
        }
    }

    @Test
    void aRescaleFromTwoToThreeThroughASavepointPublishesEachPartOnceAndWhole(
            @TempDir Path savepoints) throws Exception {
        StoreSpec store = StoreKind.FILESYSTEM.fresh();
        JobClient first = job(store, 2).eventsPerSecond(300).start();
        awaitParts(store, 10);
        String savepoint =
                first.stopWithSavepoint(
                                false, savepoints.toUri().toString(), SavepointFormatType.CANONICAL)
                        .get(2, TimeUnit.MINUTES);

        job(store, 3).fromSavepoint(savepoint).run();

        assertPublishedExactlyOnce(store, READINGS, REFERENCE, 1);
    }

    /** Only an in-place rescale of the writers' task asks for one: each writer refuses it. */
    @Test
    void aWriterParallelismThatSplitsABucketIsRefusedWithTheParallelismsThatFit() {
        assertThatThrownBy(
                        () -> Bucketing.KEY_GROUPS.requireWholeBuckets(BUCKETS, MAX_PARALLELISM, 4))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("parallelism 4 splits bucket 1 of 6")
                .hasMessageContaining("1, 2, 3, 6");
    }

    @Test
    void aBucketCountThatIsNotWholeKeyGroupsIsRefusedByTheBuilder() {
        assertThatThrownBy(
                        () ->
                                CanonicalSnapshotSink.<KeyTotal>builder()
                                        .pipeline("p")
                                        .jobVersion(1)
                                        .bucketCount(5)
                                        .maxParallelism(128)
                                        .store(StoreKind.FILESYSTEM.fresh())
                                        .rowFormat(new KeyTotal.Format())
                                        .build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(
                        "5 buckets cannot each be whole key groups of max parallelism 128")
                .hasMessageContaining("1, 2, 4, 8, 16, 32, 64, 128");
    }

    @Test
    void interruptibleTimersAreRefused() {
        Configuration conf = new Configuration();
        conf.set(CheckpointingOptions.ENABLE_UNALIGNED, true);
        conf.set(CheckpointingOptions.ENABLE_UNALIGNED_INTERRUPTIBLE_TIMERS, true);
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
        env.enableCheckpointing(100);
        DataStream<KeyTotal> rows = env.fromData(new KeyTotal("a", 0, 1, 1));

        assertThatThrownBy(() -> sink(1).writeWindows(rows))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(
                        CheckpointingOptions.ENABLE_UNALIGNED_INTERRUPTIBLE_TIMERS.key());
    }

    /**
     * Rows that no window closed (their watermark never came) are open when a checkpoint barrier
     * arrives: the writer fails the checkpoint rather than lose them, and says why.
     */
    @Test
    void rowsStillOpenAtACheckpointFailTheJobWithTheReason() {
        Configuration conf = new Configuration();
        conf.set(RestartStrategyOptions.RESTART_STRATEGY, "none");
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
        env.setParallelism(1);
        env.setMaxParallelism(MAX_PARALLELISM);
        env.enableCheckpointing(50);
        DataStream<KeyTotal> rows =
                env.fromSource(
                                new DataGeneratorSource<>(
                                        i -> new KeyTotal("a", 0, 1, 1),
                                        Long.MAX_VALUE,
                                        RateLimiterStrategy.perSecond(20),
                                        TypeInformation.of(KeyTotal.class)),
                                WatermarkStrategy.<KeyTotal>noWatermarks()
                                        .withTimestampAssigner((r, ts) -> 59_999L),
                                "rows without a watermark")
                        .keyBy(r -> r.key)
                        .map(r -> r)
                        .returns(KeyTotal.class);
        sink(BUCKETS).writeWindows(rows);

        assertThatThrownBy(() -> env.execute("open rows"))
                .hasStackTraceContaining("checkpoint barrier arrived between the rows");
    }

    private static CanonicalSnapshotSink<KeyTotal> sink(int buckets) {
        return CanonicalSnapshotSink.<KeyTotal>builder()
                .pipeline(SnapshotTestJob.PIPELINE)
                .jobVersion(1)
                .bucketCount(buckets)
                .maxParallelism(MAX_PARALLELISM)
                .windowLength(Duration.ofMinutes(1))
                .store(StoreKind.FILESYSTEM.fresh())
                .rowFormat(new KeyTotal.Format())
                .build();
    }

    /** Each part's key and the fingerprint in its metadata. */
    static Map<String, String> fingerprints(StoreSpec spec) throws Exception {
        Map<String, String> out = new TreeMap<>();
        try (ObjectStore store = spec.open()) {
            List<String> keys = new ArrayList<>();
            store.list(
                    SnapshotTestJob.PIPELINE + "/",
                    o -> {
                        if (o.key().endsWith(".parquet")) {
                            keys.add(o.key());
                        }
                    });
            for (String key : keys) {
                out.put(
                        key,
                        store.head(key).orElseThrow().metadata().get(PartMetadata.FINGERPRINT));
            }
        }
        return out;
    }
}
