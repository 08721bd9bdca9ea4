package dev.snapshots.job;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.snapshots.job.config.JobConfig;
import dev.snapshots.job.source.TelemetryGenerator;
import dev.snapshots.key.ObjectKeys;
import dev.snapshots.key.PartKind;
import dev.snapshots.key.PartMetadata;
import dev.snapshots.progress.CompletionPointer;
import dev.snapshots.store.ObjectStore;
import dev.snapshots.store.StoreSpec;
import dev.snapshots.testkit.EarlierStore;
import dev.snapshots.testkit.StoreKind;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.StateRecoveryOptions;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.core.type.TypeReference;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.SerializationFeature;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Savepoints taken by earlier releases (with their job and input: the generator flags below)
 * restore in this one, and the job then publishes exactly the parts, keys and fingerprints, that
 * the release that took it published from it. Each fixture is written once with {@code
 * -Dgolden.write=true}, by the release it stands for, and never again:
 *
 * <ul>
 *   <li>{@code generator-before-modules}: the first release, whose job versions keep hash bucketing
 *       ({@code --bucketing hash}: the assembling window and its state);
 *   <li>{@code generator-key-groups}: the release that chained the sink to the window.
 * </ul>
 *
 * <p>Each fixture's {@code store/} holds the identity records its release left in the store (no
 * fingerprint scheme in them), which the restored job finds as it would in production: see {@link
 * EarlierStore}.
 */
class SavepointFixtureITCase {
    @RegisterExtension
    static final MiniClusterExtension CLUSTER =
            new MiniClusterExtension(
                    new MiniClusterResourceConfiguration.Builder()
                            .setNumberTaskManagers(1)
                            .setNumberSlotsPerTaskManager(4)
                            .build());

    private static final Path FIXTURES = Path.of("src/test/resources/savepoints");
    private static final ObjectMapper JSON =
            new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

    @TempDir Path tmp;

    @ParameterizedTest(name = "{0} --bucketing {1}")
    @CsvSource({"generator-before-modules, hash", "generator-key-groups, key_groups"})
    void aSavepointOfAnEarlierReleaseRestoresAndPublishesWhatThatReleasePublishedFromIt(
            String fixture, String bucketing) throws Exception {
        Path dir = FIXTURES.resolve(fixture);
        Path published = dir.resolve("published-after-restore.json");
        if (!Files.exists(published) && Boolean.getBoolean("golden.write")) {
            writeFixture(dir, bucketing);
        }
        Map<String, String> expected =
                JSON.readValue(published.toFile(), new TypeReference<TreeMap<String, String>>() {});

        StoreSpec store = StoreKind.FILESYSTEM.fresh();
        EarlierStore.putInto(dir.resolve("store"), store);
        run(
                config(store, "20000", bucketing),
                dir.resolve("savepoint").toAbsolutePath().toUri().toString());

        assertThat(expected)
                .as("the fixture holds parts published after the restore")
                .hasSizeGreaterThan(10);
        assertThat(fingerprints(store)).isEqualTo(expected);
    }

    /**
     * A job version the first release started keeps its hash bucketing: with key groups, the
     * restore finds the assembling window's rows with no operator to take them, and Flink refuses
     * it rather than drop them.
     */
    @Test
    void theFirstReleasesSavepointWithKeyGroupBucketingIsRefusedNotDropped() {
        StoreSpec store = StoreKind.FILESYSTEM.fresh();
        String savepoint =
                FIXTURES.resolve("generator-before-modules/savepoint")
                        .toAbsolutePath()
                        .toUri()
                        .toString();

        assertThatThrownBy(() -> run(config(store, "20000", "key_groups"), savepoint))
                .hasStackTraceContaining("Cannot map checkpoint/savepoint state")
                .hasStackTraceContaining("not available in the new program");
    }

    /**
     * Runs the job until two windows are complete, stops it with a savepoint, restores that and
     * records what it publishes.
     */
    private void writeFixture(Path dir, String bucketing) throws Exception {
        StoreSpec first = StoreKind.FILESYSTEM.fresh();
        JobConfig slow = config(first, "1500", bucketing);
        JobClient job = start(slow, null);
        long target = TelemetryGenerator.START_MILLIS + 2 * slow.windowLength().toMillis();
        try (ObjectStore s = first.open()) {
            while (CompletionPointer.read(s, PartKind.SNAPSHOT, slow.pipeline(), slow.jobVersion())
                            .orElse(0L)
                    < target) {
                Thread.sleep(50);
            }
        }
        Path savepoint =
                Path.of(
                        URI.create(
                                job.stopWithSavepoint(
                                                false,
                                                tmp.toUri().toString(),
                                                SavepointFormatType.CANONICAL)
                                        .get(2, TimeUnit.MINUTES)));
        Path copy = dir.resolve("savepoint");
        Files.createDirectories(copy);
        try (Stream<Path> files = Files.list(savepoint)) {
            for (Path f : files.toList()) {
                Files.copy(f, copy.resolve(f.getFileName()));
            }
        }
        StoreSpec restored = StoreKind.FILESYSTEM.fresh();
        run(config(restored, "20000", bucketing), copy.toAbsolutePath().toUri().toString());
        JSON.writeValue(
                dir.resolve("published-after-restore.json").toFile(), fingerprints(restored));
    }

    private static JobConfig config(StoreSpec store, String eventsPerSecond, String bucketing) {
        return JobConfig.parse(
                new String[] {
                    "--store",
                    store.uri().toString(),
                    "--windows",
                    "6",
                    "--events-per-window",
                    "300",
                    "--keys",
                    "40",
                    "--bad-every",
                    "23",
                    "--late-every",
                    "61",
                    "--parallelism",
                    "2",
                    "--checkpoint-interval",
                    "300ms",
                    "--events-per-second",
                    eventsPerSecond,
                    "--bucketing",
                    bucketing
                });
    }

    private static void run(JobConfig config, String savepoint) throws Exception {
        start(config, savepoint).getJobExecutionResult().get(3, TimeUnit.MINUTES);
    }

    private static JobClient start(JobConfig config, String savepoint) throws Exception {
        Configuration conf = new Configuration();
        if (savepoint != null) {
            conf.set(StateRecoveryOptions.SAVEPOINT_PATH, savepoint);
        }
        return SnapshotJob.start(StreamExecutionEnvironment.getExecutionEnvironment(conf), config);
    }

    /** Every part's key and its content fingerprint: snapshots and dead letters. */
    private static Map<String, String> fingerprints(StoreSpec spec) throws Exception {
        Map<String, String> out = new TreeMap<>();
        try (ObjectStore store = spec.open()) {
            List<String> keys = new ArrayList<>();
            store.list("", o -> keys.add(o.key()));
            for (String key : keys) {
                if (ObjectKeys.parse(key).isPresent()) {
                    out.put(
                            key,
                            store.head(key).orElseThrow().metadata().get(PartMetadata.FINGERPRINT));
                }
            }
        }
        return out;
    }
}
