package dev.snapshots.sink;

import static dev.snapshots.sink.KeyGroupBucketsITCase.fingerprints;
import static dev.snapshots.sink.SnapshotSinkITCase.assertPublishedExactlyOnce;
import static dev.snapshots.sink.SnapshotSinkITCase.awaitParts;
import static org.assertj.core.api.Assertions.assertThat;

import dev.snapshots.store.StoreSpec;
import dev.snapshots.testkit.StoreKind;
import dev.snapshots.testutils.Metrics;
import dev.snapshots.testutils.Readings;
import dev.snapshots.testutils.SnapshotTestJob;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.flink.api.common.JobID;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.runtime.testutils.InMemoryReporter;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@code writeWindows} at a user's parallelism, whatever it is, with the job's default B (4) over
 * 128 key groups: 8 (a laptop's cores) and 16 are above B, 3 does not divide it; each splits the
 * buckets, so the window's rows go by their key to writers at 4, 4 and 2. What a user sees is what
 * parallelism 2 (the writer chained to the window) publishes: one object per (window, bucket), the
 * rows of a reference computed without Flink, the same fingerprints; a second run at another
 * parallelism collapses into the first; a savepoint of either path restores on the other.
 */
class AnyParallelismITCase {
    private static final InMemoryReporter REPORTER = InMemoryReporter.createWithRetainedMetrics();

    @RegisterExtension
    static final MiniClusterExtension CLUSTER =
            new MiniClusterExtension(
                    new MiniClusterResourceConfiguration.Builder()
                            .setNumberTaskManagers(1)
                            .setNumberSlotsPerTaskManager(16)
                            .setConfiguration(REPORTER.addToConfiguration(new Configuration()))
                            .build());

    private static final Readings READINGS = Readings.of(16, 60_000, 60, 40);
    private static final int BUCKETS = 4;

    /** Keys and fingerprints of the parts published at parallelism 2, chained. */
    private static Map<String, String> chained;

    private static SnapshotTestJob job(StoreSpec store, int parallelism) {
        return SnapshotTestJob.over(READINGS)
                .store(store)
                .bucketCount(BUCKETS)
                .parallelism(parallelism);
    }

    @BeforeAll
    static void publishAtParallelismTwo() throws Exception {
        StoreSpec store = StoreKind.FILESYSTEM.fresh();
        job(store, 2).run();
        assertPublishedExactlyOnce(store, READINGS, BUCKETS, 1);
        chained = fingerprints(store);
    }

    @ParameterizedTest(name = "parallelism {0}")
    @ValueSource(ints = {8, 16, 3})
    void aWindowAtAParallelismThatSplitsBucketsPublishesWhatTheChainedWriterDoes(int parallelism)
            throws Exception {
        StoreSpec store = StoreKind.FILESYSTEM.fresh();

        job(store, parallelism).run();

        assertPublishedExactlyOnce(store, READINGS, BUCKETS, 1);
        assertThat(fingerprints(store))
                .as("keys and fingerprints vs parallelism 2")
                .isEqualTo(chained);
    }

    @ParameterizedTest(name = "{0}, then {1}")
    @CsvSource({"8, 2", "3, 16"})
    void aSecondRunAtAnotherParallelismAddsNoObjectAndReportsNoDivergence(int first, int second)
            throws Exception {
        StoreSpec store = StoreKind.FILESYSTEM.fresh();
        job(store, first).run();
        Map<String, String> parts = fingerprints(store);

        JobID again = job(store, second).run();

        assertThat(fingerprints(store)).as("parts after the second run").isEqualTo(parts);
        assertPublishedExactlyOnce(store, READINGS, BUCKETS, 1);
        assertThat(Metrics.sum(REPORTER, again, "partsCreated")).isZero();
        assertThat(Metrics.sum(REPORTER, again, "partsDivergent")).isZero();
        assertThat(Metrics.sum(REPORTER, again, "partsCollapsed")).isEqualTo(parts.size());
    }

    @ParameterizedTest(name = "{0} to {1}")
    @CsvSource({"2, 8", "8, 2", "8, 3"})
    void aRescaleThroughASavepointPublishesEachPartOnceAndWhole(
            int from, int to, @TempDir Path savepoints) throws Exception {
        StoreSpec store = StoreKind.FILESYSTEM.fresh();
        JobClient first = job(store, from).eventsPerSecond(300).start();
        awaitParts(store, 10);
        String savepoint =
                first.stopWithSavepoint(
                                false, savepoints.toUri().toString(), SavepointFormatType.CANONICAL)
                        .get(2, TimeUnit.MINUTES);

        JobID restored = job(store, to).fromSavepoint(savepoint).run();

        assertPublishedExactlyOnce(store, READINGS, BUCKETS, 1);
        assertThat(fingerprints(store)).isEqualTo(chained);
        assertThat(Metrics.sum(REPORTER, first.getJobID(), "partsDivergent")).isZero();
        assertThat(Metrics.sum(REPORTER, restored, "partsDivergent")).isZero();
    }
}
