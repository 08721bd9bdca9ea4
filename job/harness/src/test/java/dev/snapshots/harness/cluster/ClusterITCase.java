package dev.snapshots.harness.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import dev.snapshots.cli.Audit;
import dev.snapshots.cli.deploy.FlinkRest;
import dev.snapshots.cli.deploy.JobLifecycle;
import dev.snapshots.harness.JobOutput;
import dev.snapshots.harness.Snapshots;
import dev.snapshots.harness.chaos.Chaos;
import dev.snapshots.harness.testutils.ObjectHashes;
import dev.snapshots.job.Sources;
import dev.snapshots.job.config.JobConfig;
import dev.snapshots.store.ObjectStore;
import dev.snapshots.store.StoreSpec;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The shaded job jar on a real multi-process Flink cluster (`snapshots cluster up`): uploaded and
 * run over REST, one TaskManager killed with SIGKILL mid-run and replaced, as ECS replaces a task.
 * Afterwards the audit is clean and the output equals the reference.
 */
class ClusterITCase {
    /**
     * v1's parts, without its pointer (which a replay's restored committables may still advance).
     */
    private static final String V1_PARTS = "telemetry/v=1/schema=1/";

    private static LocalCluster cluster;

    @BeforeAll
    static void up() throws Exception {
        cluster = new LocalCluster(Path.of(System.getProperty("snapshots.root")));
        cluster.down(
                new PrintStream(new ByteArrayOutputStream())); // a cluster left by an aborted run
        cluster.up(2, System.out);
    }

    @AfterAll
    static void down() throws Exception {
        cluster.down(System.out);
    }

    @Test
    void aTaskManagerKilledMidRunIsReplacedAndTheOutputIsStillExactlyOnce() throws Exception {
        Map<String, String> endpoints = cluster.endpoints();
        FlinkRest rest = new FlinkRest(endpoints.get("rest"));
        StoreSpec store =
                StoreSpec.parse("s3://" + LocalCluster.BUCKET + "/run-" + UUID.randomUUID())
                        .withEndpoint(endpoints.get("s3"));
        List<String> args =
                List.of(
                        "--store",
                        store.uri().toString(),
                        "--endpoint",
                        endpoints.get("s3"),
                        "--windows",
                        "16",
                        "--events-per-window",
                        "300",
                        "--events-per-second",
                        "300",
                        "--checkpoint-interval",
                        "1s");
        JobConfig config = JobConfig.parse(args.toArray(new String[0]));

        String jobId =
                rest.run(
                        rest.upload(Path.of(System.getProperty("snapshots.root"), Chaos.JOB_JAR)),
                        args,
                        null,
                        null);
        awaitParts(store, 8);
        cluster.kill("taskmanager-1"); // SIGKILL: no clean shutdown
        cluster.startTaskManager(3);
        String state = rest.awaitTerminal(jobId, Duration.ofMinutes(4));

        assertThat(state).isEqualTo("FINISHED");
        int restarts = rest.restarts(jobId);
        assertThat(restarts).as("the kill was noticed and recovered from").isPositive();
        try (ObjectStore s = store.open()) {
            assertThat(Audit.findings(s, Optional.empty())).as("audit findings").isEmpty();
            JobOutput published = JobOutput.published(s, 1, Long.MAX_VALUE);
            JobOutput expected =
                    JobOutput.expected(
                            Sources.generatorFunction(config),
                            Sources.generatorCount(config),
                            config.windowLength().toMillis(),
                            config.buckets());
            assertThat(published.differences(expected)).isEmpty();
            assertThat(published.parts).isEqualTo(expected.parts);
            assertThat(published.deadLetterReasons).isEqualTo(expected.deadLetterReasons);
            System.out.printf(
                    "FIGURES cluster: parts=%d events=%d dead-letters=%d restarts=%d%n",
                    published.parts.size(),
                    published.goodEvents,
                    published.deadLetterReasons.values().stream().mapToLong(Long::longValue).sum(),
                    restarts);
        }
    }

    /**
     * Operating the job the way ECS runs it, on the real cluster: the JobManager is SIGKILLed and
     * started again with the same command (no HA) and 'submit' resumes the job from its newest
     * checkpoint; 'upgrade' passes the audit gate, stops with a savepoint and rolls the JobManager;
     * 'replay' recomputes into v2 from that savepoint without touching v1; 'promote' switches
     * readers to v2 only once it has caught up.
     */
    @Test
    void theJobSurvivesAJobManagerRestartAnUpgradeAReplayAndAPromotion() throws Exception {
        Map<String, String> endpoints = cluster.endpoints();
        String rest = endpoints.get("rest");
        StoreSpec store =
                StoreSpec.parse("s3://" + LocalCluster.BUCKET + "/ops-" + UUID.randomUUID())
                        .withEndpoint(endpoints.get("s3"));
        List<String> job =
                List.of(
                        "--store",
                        store.uri().toString(),
                        "--endpoint",
                        endpoints.get("s3"),
                        "--windows",
                        "20",
                        "--events-per-window",
                        "200",
                        "--events-per-second",
                        "100",
                        "--checkpoint-interval",
                        "1s");
        List<String> onCluster =
                List.of(
                        "--rest",
                        rest,
                        "--jar",
                        Path.of(System.getProperty("snapshots.root"), Chaos.JOB_JAR).toString());
        String v1 = JobLifecycle.jobId("telemetry", 1);

        assertThat(cli("submit", onCluster, job)).contains("job " + v1, "from the start");
        awaitParts(store, 12);
        cluster.restartJobManager(System.out);
        assertThat(new FlinkRest(rest).get("/jobs/overview").path("jobs").size())
                .as("without HA the job is gone")
                .isZero();
        assertThat(cli("submit", onCluster, job))
                .contains("resuming from s3://snapshots/flink/checkpoints/" + v1 + "/chk-");

        awaitParts(store, 32);
        String upgrade = cli("upgrade", List.of("--roll", "local"), onCluster, job);
        assertThat(upgrade)
                .contains(
                        "audit gate: clean",
                        "stopped with savepoint",
                        "resuming from s3://snapshots/flink/checkpoints/"
                                + v1
                                + "/savepoints/savepoint-");
        String savepoint = upgrade.replaceAll("(?s).*stopped with savepoint (\\S+).*", "$1");
        assertThat(new FlinkRest(rest).awaitTerminal(v1, Duration.ofMinutes(3)))
                .isEqualTo("FINISHED");

        JobConfig config = JobConfig.parse(job.toArray(new String[0]));
        JobOutput expected =
                JobOutput.expected(
                        Sources.generatorFunction(config),
                        Sources.generatorCount(config),
                        config.windowLength().toMillis(),
                        config.buckets());
        Map<String, String> v1Objects;
        try (ObjectStore s = store.open()) {
            assertThat(Chaos.violations(s, expected, JobOutput.published(s, 1, Long.MAX_VALUE)))
                    .as("v1 after all that")
                    .isEmpty();
            v1Objects = ObjectHashes.of(s, V1_PARTS);
        }

        List<String> v2Flags = new ArrayList<>(job);
        v2Flags.addAll(List.of("--job-version", "2"));
        assertThat(cli("replay", List.of("--from-savepoint", savepoint), onCluster, v2Flags))
                .contains("replaying telemetry into v=2");
        assertThat(
                        cli(
                                "promote",
                                List.of(
                                        store.uri().toString(),
                                        "--endpoint",
                                        endpoints.get("s3"),
                                        "--job-version",
                                        "3")))
                .contains("promotion refused: v=3 has no complete window yet");
        assertThat(
                        new FlinkRest(rest)
                                .awaitTerminal(
                                        JobLifecycle.jobId("telemetry", 2), Duration.ofMinutes(3)))
                .isEqualTo("FINISHED");
        assertThat(
                        cli(
                                "promote",
                                List.of(
                                        store.uri().toString(),
                                        "--endpoint",
                                        endpoints.get("s3"),
                                        "--job-version",
                                        "2")))
                .contains("promoted: v=2 is current");

        try (ObjectStore s = store.open()) {
            assertThat(ObjectHashes.of(s, V1_PARTS))
                    .as("v1 untouched by the replay, byte for byte")
                    .isEqualTo(v1Objects);
            JobOutput replayed = JobOutput.published(s, 2, Long.MAX_VALUE);
            JobOutput first = JobOutput.published(s, 1, Long.MAX_VALUE);
            assertThat(replayed.parts)
                    .as("v2 recomputed the windows after the savepoint")
                    .isNotEmpty();
            replayed.parts.forEach(
                    (part, rows) ->
                            assertThat(rows)
                                    .as("v2 part %s equals v1's", part)
                                    .isEqualTo(first.parts.get(part)));
            assertThat(replayed.objects).allSatisfy((part, n) -> assertThat(n).isOne());
            Map<String, Object> audit =
                    Audit.scan(s, Optional.empty(), Optional.empty(), Duration.ofDays(1));
            assertThat((List<?>) audit.get("findings")).as("audit of both versions").isEmpty();
            assertThat(audit.get("currentVersions")).isEqualTo(Map.of("telemetry", 2));
        }
        assertThat(
                        cli(
                                "inspect",
                                List.of(store.uri().toString(), "--endpoint", endpoints.get("s3"))))
                .contains("v2 current");
    }

    @SafeVarargs
    private static String cli(String command, List<String>... args) {
        List<String> all = new ArrayList<>(List.of(command));
        for (List<String> a : args) {
            all.addAll(a);
        }
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        int code =
                Snapshots.run(
                        all.toArray(new String[0]),
                        new PrintStream(out, true, StandardCharsets.UTF_8),
                        System.err);
        String said = out.toString(StandardCharsets.UTF_8);
        System.out.print("snapshots " + command + ": " + said);
        assertThat(code)
                .as("snapshots %s exit code; it said: %s", command, said)
                .isEqualTo(said.contains("refused") ? 1 : 0);
        return said;
    }

    private static void awaitParts(StoreSpec store, int parts) throws Exception {
        long deadline = System.nanoTime() + Duration.ofMinutes(2).toNanos();
        try (ObjectStore s = store.open()) {
            while (true) {
                int[] n = {0};
                s.list("telemetry/v=1/", o -> n[0] += o.key().endsWith(".parquet") ? 1 : 0);
                if (n[0] >= parts) {
                    return;
                }
                assertThat(System.nanoTime()).as("%s parts appeared", parts).isLessThan(deadline);
                Thread.sleep(200);
            }
        }
    }
}
