package dev.snapshots.job;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.snapshots.format.PartEncoding;
import dev.snapshots.harness.JobOutput;
import dev.snapshots.harness.Snapshots;
import dev.snapshots.harness.testutils.ObjectHashes;
import dev.snapshots.job.config.JobConfig;
import dev.snapshots.job.source.TelemetryGenerator;
import dev.snapshots.key.ObjectKeys;
import dev.snapshots.key.PartKind;
import dev.snapshots.key.WorkIdentity;
import dev.snapshots.progress.CompletionPointer;
import dev.snapshots.store.ObjectStore;
import dev.snapshots.store.StoreSpec;
import dev.snapshots.testkit.StoreKind;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import org.apache.avro.generic.GenericRecord;
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
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The snapshot job end to end on a Flink MiniCluster: generated telemetry (with malformed and late
 * records) in, snapshots and dead letters out, checked against a reference computed from the
 * generator's truth; then the operations a deployment goes through: stop-with-savepoint and resume,
 * a job-version bump, a rescale.
 */
class SnapshotJobITCase {
    @RegisterExtension
    static final MiniClusterExtension CLUSTER =
            new MiniClusterExtension(
                    new MiniClusterResourceConfiguration.Builder()
                            .setNumberTaskManagers(2)
                            .setNumberSlotsPerTaskManager(4)
                            .build());

    private static final int WINDOWS = 16;

    @TempDir Path tmp;

    @ParameterizedTest(name = "{0}")
    @EnumSource(
            value = StoreKind.class,
            names = {"S3_INLINE", "FILESYSTEM"})
    void generatedTelemetryBecomesOneSnapshotPerWindowAndBucketEqualToTheReference(StoreKind kind)
            throws Exception {
        JobConfig config = config(kind.fresh(), "--parallelism", "2");

        run(config, null);

        assertMatchesReference(config);
    }

    @Test
    void stopWithSavepointAndResumeLeavesNoWindowDuplicatedOrMissing() throws Exception {
        JobConfig config = config(StoreKind.FILESYSTEM.fresh(), "--events-per-second", "1500");

        String savepoint = stopWithSavepointAfter(config, 4);
        run(config, savepoint);

        assertMatchesReference(config);
    }

    @Test
    void resumingWithTheNextJobVersionWritesItsOwnNamespaceAndLeavesTheOldOneByteForByte()
            throws Exception {
        StoreSpec store = StoreKind.FILESYSTEM.fresh();
        JobConfig v1 = config(store, "--events-per-second", "1500");
        String savepoint = stopWithSavepointAfter(v1, 4);
        run(v1, savepoint);
        Map<String, String> v1Objects = hashes(store, ObjectKeys.versionPrefix(v1.pipeline(), 1));

        JobConfig v2 = config(store, "--job-version", "2");
        run(v2, savepoint);

        assertThat(hashes(store, ObjectKeys.versionPrefix(v1.pipeline(), 1)))
                .as("v1, byte for byte")
                .isEqualTo(v1Objects);
        Map<String, String> v2Objects = hashes(store, ObjectKeys.versionPrefix(v2.pipeline(), 2));
        assertThat(v2Objects).as("v2 wrote its own namespace").isNotEmpty();
        assertThat(v2Objects.keySet()).allSatisfy(k -> assertThat(k).startsWith("telemetry/v=2/"));
    }

    /**
     * Tried as a new user would: a schema bump over a version written with the old schema is
     * refused before submitting.
     */
    @Test
    void aNewSchemaInAJobVersionAlreadyWrittenIsRefusedWithTheFix() throws Exception {
        StoreSpec store = StoreKind.FILESYSTEM.fresh();
        run(config(store, "--windows", "2"), null);

        assertThatThrownBy(
                        () -> start(config(store, "--windows", "2", "--schema-version", "2"), null))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("schema version 1 (recorded), 2 (this run)")
                .hasMessageContaining("--job-version 2");
        JobConfig bumped =
                config(store, "--windows", "2", "--schema-version", "2", "--job-version", "2");
        run(bumped, null);
        try (ObjectStore s = store.open()) {
            assertThat(CompletionPointer.schemaVersion(s, PartKind.SNAPSHOT, "telemetry", 2))
                    .contains(2);
            assertThat(keys(s, ObjectKeys.versionPrefix("telemetry", 1)))
                    .noneMatch(k -> k.contains("/schema=2/"));
        }
    }

    @Test
    void rescalingFromTwoToFourFromASavepointKeepsEveryKey() throws Exception {
        StoreSpec store = StoreKind.FILESYSTEM.fresh();
        JobConfig two = config(store, "--parallelism", "2", "--events-per-second", "1500");
        String savepoint = stopWithSavepointAfter(two, 4);

        JobConfig four = config(store, "--parallelism", "4");
        run(four, savepoint);

        assertMatchesReference(
                four); // same identity, same keys: the reference's (window, bucket) set
    }

    @Test
    void aFuzzedReplayAccountsForEveryRecordOnceEitherInASnapshotOrAsADeadLetter()
            throws Exception {
        Path file = tmp.resolve("fuzz.jsonl");
        Random random = new Random(11);
        TelemetryGenerator generator =
                new TelemetryGenerator(
                        TelemetryGenerator.START_MILLIS, 3, 30, 300_000, 200, 0, 0, 10_000, 65_536);
        List<byte[]> lines = new ArrayList<>();
        int valid = 0;
        int invalid = 0;
        for (int i = 0; i < 4000; i++) {
            byte[] line;
            if (random.nextInt(3) == 0) {
                line = new byte[1 + random.nextInt(200)];
                random.nextBytes(line);
                for (int b = 0; b < line.length; b++) {
                    if (line[b] == '\n' || line[b] == '\r') {
                        line[b] = '#';
                    }
                }
                if (line[0] == '{') {
                    line[0] = '~'; // never valid JSON by accident
                }
                invalid++;
            } else {
                line = generator.map((long) i).payload;
                valid++;
            }
            lines.add(line);
        }
        ByteArrayOutputStream content = new ByteArrayOutputStream();
        for (byte[] line : lines) {
            content.write(line);
            content.write('\n');
        }
        Files.write(file, content.toByteArray());
        StoreSpec store = StoreKind.FILESYSTEM.fresh();
        JobConfig config =
                JobConfig.parse(
                        new String[] {
                            "--store",
                            store.uri().toString(),
                            "--source",
                            "file",
                            "--file",
                            file.toString(),
                            "--checkpoint-interval",
                            "500ms"
                        });

        run(config, null);

        long snapshotEvents = 0;
        long deadLetters = 0;
        Set<String> deadOrigins = new TreeSet<>();
        try (ObjectStore s = store.open()) {
            for (String key : keys(s, "")) {
                ObjectKeys.PartKey p = ObjectKeys.parse(key).orElse(null);
                if (p == null) {
                    continue;
                }
                for (GenericRecord r :
                        PartEncoding.decode(
                                p.kind(),
                                s.get(key).orElseThrow().content(),
                                p.kind() == PartKind.SNAPSHOT
                                        ? WindowAggregate.SCHEMA
                                        : DeadLetter.SCHEMA)) {
                    if (p.kind() == PartKind.SNAPSHOT) {
                        snapshotEvents += (Long) r.get("count");
                    } else {
                        deadLetters++;
                        deadOrigins.add(r.get("origin").toString());
                    }
                }
            }
        }
        assertThat(snapshotEvents)
                .as("every valid line counted once in a snapshot")
                .isEqualTo(valid);
        assertThat(deadLetters).as("every junk line a dead letter").isEqualTo(invalid);
        assertThat(deadOrigins).as("no line dead-lettered twice").hasSize(invalid);
    }

    @Test
    void theDemoPrintsOneLinePerWindowAndASecondRunCollapsesIntoTheFirst() throws Exception {
        String out = tmp.resolve("demo").toString();
        String first =
                cli(
                        "demo",
                        "--out",
                        out,
                        "--fresh",
                        "--windows",
                        "6",
                        "--events-per-second",
                        "6000");
        String second = cli("demo", "--out", out, "--windows", "6", "--events-per-second", "6000");

        List<String> windowLines =
                first.lines().filter(l -> l.matches("2026-11-30 \\d\\d:\\d\\d .*")).toList();
        assertThat(windowLines).as(first).hasSizeGreaterThanOrEqualTo(6);
        assertThat(windowLines.subList(0, 6))
                .allSatisfy(l -> assertThat(l.trim().split("\\s+")[2]).as(l).isEqualTo("4"));
        assertThat(first).contains("created, 0 collapsed into earlier objects, 0 divergent");
        String parts = first.replaceAll("(?s).*windows, (\\d+) parts.*", "$1");
        assertThat(second)
                .as(second)
                .contains(parts + " parts")
                .contains("0 created, " + parts + " collapsed");
    }

    private static String cli(String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        int code =
                Snapshots.run(args, new PrintStream(out, true, StandardCharsets.UTF_8), System.err);
        assertThat(code).as(out.toString(StandardCharsets.UTF_8)).isZero();
        return out.toString(StandardCharsets.UTF_8);
    }

    private JobConfig config(StoreSpec store, String... more) {
        List<String> args =
                new ArrayList<>(
                        List.of(
                                "--store",
                                store.uri().toString(),
                                "--windows",
                                Integer.toString(WINDOWS),
                                "--events-per-window",
                                "300",
                                "--events-per-second",
                                "20000",
                                "--keys",
                                "40",
                                "--bad-every",
                                "23",
                                "--late-every",
                                "61",
                                "--checkpoint-interval",
                                "300ms"));
        store.endpoint().ifPresent(e -> args.addAll(List.of("--endpoint", e)));
        args.addAll(List.of(more));
        return JobConfig.parse(args.toArray(new String[0]));
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

    /**
     * Runs until the completion pointer covers {@code windows} windows, then stops with a
     * savepoint.
     */
    private String stopWithSavepointAfter(JobConfig config, int windows) throws Exception {
        JobClient job = start(config, null);
        long target = TelemetryGenerator.START_MILLIS + windows * config.windowLength().toMillis();
        try (ObjectStore store = config.store().open()) {
            long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(2);
            while (CompletionPointer.read(
                                    store,
                                    PartKind.SNAPSHOT,
                                    config.pipeline(),
                                    config.jobVersion())
                            .orElse(0L)
                    < target) {
                assertThat(System.nanoTime())
                        .as("pointer reached %s windows", windows)
                        .isLessThan(deadline);
                Thread.sleep(50);
            }
        }
        String savepoint =
                job.stopWithSavepoint(
                                false,
                                tmp.resolve("savepoints").toUri().toString(),
                                SavepointFormatType.CANONICAL)
                        .get(2, TimeUnit.MINUTES);
        assertThat(
                        CompletionPointer.read(
                                        config.store().open(),
                                        PartKind.SNAPSHOT,
                                        config.pipeline(),
                                        config.jobVersion())
                                .orElseThrow())
                .as("stopped before the end")
                .isLessThan(
                        TelemetryGenerator.START_MILLIS
                                + WINDOWS * config.windowLength().toMillis());
        return savepoint;
    }

    /**
     * One object per (window, bucket), rows equal to the reference, dead letters with the right
     * reasons.
     */
    private static void assertMatchesReference(JobConfig config) throws Exception {
        JobOutput ref = JobOutput.expected(config);
        JobOutput published;
        try (ObjectStore store = config.store().open()) {
            published = JobOutput.published(store, config.jobVersion(), Long.MAX_VALUE);
            for (String part : published.parts.keySet()) {
                long window = Long.parseLong(part.substring(0, part.indexOf('/')));
                int bucket = Integer.parseInt(part.substring(part.indexOf('/') + 1));
                String key =
                        ObjectKeys.partKey(
                                new WorkIdentity(
                                        config.pipeline(),
                                        window,
                                        config.windowLength().toMillis(),
                                        config.jobVersion(),
                                        config.schemaVersion(),
                                        bucket,
                                        config.buckets(),
                                        ""));
                assertThat(store.head(key))
                        .as("the part's key is a function of its identity: %s", key)
                        .isPresent();
            }
        }
        assertThat(published.objects)
                .as("objects per part")
                .allSatisfy((part, n) -> assertThat(n).isOne());
        assertThat(published.parts).as("snapshot rows per part").isEqualTo(ref.parts);
        assertThat(published.deadLetterReasons)
                .as("dead letters by reason")
                .isEqualTo(ref.deadLetterReasons);
    }

    private static List<String> keys(ObjectStore store, String prefix) throws Exception {
        List<String> keys = new ArrayList<>();
        store.list(prefix, o -> keys.add(o.key()));
        return keys;
    }

    private static Map<String, String> hashes(StoreSpec spec, String prefix) throws Exception {
        try (ObjectStore store = spec.open()) {
            return ObjectHashes.of(store, prefix);
        }
    }
}
