package dev.snapshots.harness.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import dev.snapshots.cli.Audit;
import dev.snapshots.cli.deploy.FlinkRest;
import dev.snapshots.cli.deploy.JobLifecycle;
import dev.snapshots.harness.JobOutput;
import dev.snapshots.harness.Snapshots;
import dev.snapshots.harness.chaos.Chaos;
import dev.snapshots.harness.testutils.ObjectHashes;
import dev.snapshots.job.config.JobConfig;
import dev.snapshots.store.ObjectStore;
import dev.snapshots.store.StoreSpec;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The shaded job jar on a real multi-process Flink cluster (`snapshots cluster up`), run over REST
 * through what ECS does to it: a TaskManager SIGKILLed mid-run and replaced; the JobManager
 * SIGKILLed and replaced; a second JobManager started beside the first and taking over once the
 * first stops; an upgrade, a replay and a promotion. Afterwards the audit is clean and the output
 * equals the reference.
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
        assertThat(cluster.scratch("taskmanager-1").getParent())
                .as("what the cluster's Flink processes kept on disk, gone with them")
                .doesNotExist();
    }

    @Test
    void aTaskManagerKilledMidRunIsReplacedAndTheOutputIsStillExactlyOnce() throws Exception {
        FlinkRest rest = new FlinkRest(cluster.endpoints().get("rest"));
        StoreSpec store = newStore("run");
        List<String> args = job(store, "telemetry", 16, 300, 300);
        JobConfig config = JobConfig.parse(args.toArray(new String[0]));

        String jobId =
                rest.uploadAndRun(
                        Path.of(System.getProperty("snapshots.root"), Chaos.JOB_JAR),
                        null,
                        args,
                        null,
                        null);
        awaitParts(store, "telemetry/v=1/", 8);
        // One that runs tasks of the job: slots are spread, but a TaskManager can still hold none.
        List<String> busy = cluster.busyTaskManagers();
        assertThat(busy).as("TaskManagers running the job").isNotEmpty();
        // Its working directory (with a copy of the job's jar) is the cluster's, not in /tmp, where
        // such directories once filled the disk and were shared with any other cluster.
        assertThat(cluster.scratch(busy.get(0)).resolve("tm_" + busy.get(0))).isDirectory();
        cluster.kill(busy.get(0)); // SIGKILL: no clean shutdown
        assertThat(cluster.scratch(busy.get(0))).as("gone with its process").doesNotExist();
        cluster.startTaskManager(3);
        String state = rest.awaitTerminal(jobId, Duration.ofMinutes(4));

        assertThat(state).isEqualTo("FINISHED");
        theCheckpointsFileSystemWasMadeBeforeAnyTask();
        int restarts = rest.restarts(jobId);
        assertThat(restarts).as("the kill was noticed and recovered from").isPositive();
        try (ObjectStore s = store.open()) {
            assertThat(Audit.findings(s, Optional.empty())).as("audit findings").isEmpty();
            JobOutput published = JobOutput.published(s, 1, Long.MAX_VALUE);
            JobOutput expected = JobOutput.expected(config);
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
     * Every TaskManager, the replacement too, made the S3 file system as it started (the warm-up
     * plugin), so no first task of theirs made it while every task waited.
     */
    private static void theCheckpointsFileSystemWasMadeBeforeAnyTask() throws IOException {
        int ranTasks = 0;
        for (String taskManager : List.of("taskmanager-1", "taskmanager-2", "taskmanager-3")) {
            List<String> log =
                    Files.readAllLines(cluster.logsDirectory().resolve(taskManager + ".log"));
            int made = indexOf(log, "Made the file system of " + LocalCluster.CHECKPOINTS + " (");
            int firstTask = indexOf(log, "Received task ");
            assertThat(made).as("the warm-up's line in %s's log", taskManager).isNotNegative();
            if (firstTask >= 0) {
                ranTasks++;
                assertThat(made)
                        .as("%s made it before its first task arrived", taskManager)
                        .isLessThan(firstTask);
            }
        }
        assertThat(ranTasks).as("TaskManagers that ran tasks").isPositive();
    }

    private static int indexOf(List<String> lines, String text) {
        for (int i = 0; i < lines.size(); i++) {
            if (lines.get(i).contains(text)) {
                return i;
            }
        }
        return -1;
    }

    /**
     * A TaskManager whose process ends by itself (on a loaded machine one failed to start, "Could
     * not create actor system") is started again while the cluster waits for its TaskManagers, as
     * an ECS service replaces a task that stopped; its log is kept.
     */
    @Test
    void aTaskManagerThatEndsByItselfIsStartedAgain() throws Exception {
        String name = cluster.aliveTaskManagers().get(0);
        long pid = cluster.pids().get(name);
        ProcessHandle process = ProcessHandle.of(pid).orElseThrow();
        process.destroyForcibly();
        process.onExit().join();

        cluster.awaitTaskManagers(cluster.aliveTaskManagers().size(), Duration.ofSeconds(90));

        assertThat(cluster.pids().get(name)).as("a new process").isNotEqualTo(pid);
        assertThat(ProcessHandle.of(cluster.pids().get(name)).map(ProcessHandle::isAlive))
                .hasValue(true);
        try (Stream<Path> logs = Files.list(cluster.logsDirectory())) {
            assertThat(logs.map(p -> p.getFileName().toString()))
                    .anyMatch(f -> f.startsWith(name + ".exited-") && f.endsWith(".log"));
        }
    }

    /**
     * Operating the job the way ECS runs it, on the real cluster: the JobManager is SIGKILLed and
     * started again with the same command (no HA) and 'submit' resumes the job from its newest
     * checkpoint; 'upgrade' passes the audit gate, stops with a savepoint and rolls the JobManager;
     * 'replay' recomputes into v2 from that savepoint without touching v1; 'promote' refuses a
     * version with no complete window, and v2, which starts at the savepoint, until forced, naming
     * v1's windows readers would lose.
     */
    @Test
    void theJobSurvivesAJobManagerRestartAnUpgradeAReplayAndAPromotion() throws Exception {
        Map<String, String> endpoints = cluster.endpoints();
        String rest = endpoints.get("rest");
        StoreSpec store = newStore("ops");
        List<String> job = job(store, "telemetry", 20, 200, 100);
        List<String> onCluster =
                List.of(
                        "--rest",
                        rest,
                        "--jar",
                        Path.of(System.getProperty("snapshots.root"), Chaos.JOB_JAR).toString());
        String v1 = JobLifecycle.jobId("telemetry", 1);

        assertThat(cli("submit", onCluster, job)).contains("job " + v1, "from the start");
        awaitParts(store, "telemetry/v=1/", 12);
        String killed = cluster.currentJobManager();
        cluster.restartJobManager(System.out);
        assertThat(new FlinkRest(rest).get("/jobs/overview").path("jobs").size())
                .as("without HA the job is gone")
                .isZero();
        // Once its job has a checkpoint of its own, the killed JobManager's checkpoints go.
        assertThat(cli("submit", onCluster, job))
                .contains("resuming from " + checkpoints(killed) + "/" + v1 + "/chk-")
                .contains("JobManager incarnations started before jm-")
                .containsPattern(
                        "\\[[^\\]]*jm-" + killed.substring("jobmanager-".length()) + "[\\],]");

        awaitParts(store, "telemetry/v=1/", 32);
        String beforeUpgrade = cluster.currentJobManager();
        String upgrade = cli("upgrade", List.of("--roll", "local"), onCluster, job);
        assertThat(upgrade)
                .contains(
                        "audit gate: clean",
                        "stopped with savepoint",
                        "resuming from "
                                + checkpoints(beforeUpgrade)
                                + "/"
                                + v1
                                + "/savepoints/savepoint-");
        // Its job has a checkpoint of its own and prunes again; the killed JobManager's
        // checkpoints went at the submit above, and savepoints stay.
        assertThat(upgrade).contains("JobManager incarnations started before jm-");
        try (ObjectStore checkpoints =
                StoreSpec.parse(LocalCluster.CHECKPOINTS)
                        .withEndpoint(endpoints.get("s3"))
                        .open()) {
            assertThat(keys(checkpoints, relative(checkpoints(killed)) + "/" + v1 + "/")).isEmpty();
            assertThat(keys(checkpoints, relative(checkpoints(beforeUpgrade)) + "/" + v1 + "/"))
                    .anyMatch(k -> k.contains("/savepoints/"));
        }
        String savepoint = upgrade.replaceAll("(?s).*stopped with savepoint (\\S+).*", "$1");
        assertThat(new FlinkRest(rest).awaitTerminal(v1, Duration.ofMinutes(3)))
                .isEqualTo("FINISHED");

        JobConfig config = JobConfig.parse(job.toArray(new String[0]));
        JobOutput expected = JobOutput.expected(config);
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
        // The replay survives a JobManager restart: what ECS's entrypoint runs then, 'submit' with
        // the savepoint it was told to start from, resumes v2 from its own newest checkpoint.
        String v2 = JobLifecycle.jobId("telemetry", 2);
        awaitParts(store, "telemetry/v=2/", 8);
        String replaying = cluster.currentJobManager();
        cluster.restartJobManager(System.out);
        assertThat(cli("submit", List.of("--from-savepoint", savepoint), onCluster, v2Flags))
                .contains("resuming from " + checkpoints(replaying) + "/" + v2 + "/chk-");
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
        assertThat(new FlinkRest(rest).awaitTerminal(v2, Duration.ofMinutes(3)))
                .isEqualTo("FINISHED");
        List<String> promoteV2 =
                List.of(
                        store.uri().toString(),
                        "--endpoint",
                        endpoints.get("s3"),
                        "--job-version",
                        "2");
        // v2 starts at the savepoint: readers of v1 would lose its windows before that.
        assertThat(cli("promote", promoteV2))
                .contains("promotion refused: v=2 starts at", "readers would lose", "of v=1: ")
                .contains("--force promotes anyway");
        assertThat(cli("promote", promoteV2, List.of("--force")))
                .contains("promoted: v=2 is current", "forced although");

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

    /**
     * A deployment of the JobManager service at 200 %: a second JobManager starts while the first
     * runs the job, and its entrypoint runs 'submit' at once, as does the first's (again). The
     * second must not resume the job while the first still checkpoints, since the first deletes the
     * checkpoints it subsumes. Once the first has stopped, the second resumes from the newest one.
     * Afterwards exactly one job runs, it never restarted, the audit is clean and the output equals
     * the reference. Two minutes: tagged {@code long} (-Plong); every build's chaos run in .ci/run
     * overlaps two JobManagers the same way.
     */
    @Test
    @Tag("long")
    void aSecondJobManagerTakesTheJobOverOnlyOnceTheFirstHasStopped() throws Exception {
        StoreSpec store = newStore("overlap");
        // A pipeline of its own: a job id, and so checkpoints, no other test shares.
        List<String> job = job(store, "overlap", 40, 200, 100);
        String jar = Path.of(System.getProperty("snapshots.root"), Chaos.JOB_JAR).toString();
        String id = JobLifecycle.jobId("overlap", 1);
        String old = cluster.currentJobManager();
        List<String> onOld = List.of("--rest", cluster.jobManagerRest(old), "--jar", jar);
        assertThat(cli("submit", onOld, job)).contains("from the start");
        awaitParts(store, "overlap/v=1/", 8);

        String successor = cluster.startJobManager();
        List<String> onSuccessor =
                List.of("--rest", cluster.jobManagerRest(successor), "--jar", jar);
        ExecutorService entrypoint = Executors.newSingleThreadExecutor();
        try {
            Future<String> takeover = entrypoint.submit(() -> cli("submit", onSuccessor, job));
            assertThat(cli("submit", onOld, job)).contains("is already RUNNING");
            Thread.sleep(25_000);
            assertThat(takeover.isDone())
                    .as("the second JobManager waits while the first still checkpoints the job")
                    .isFalse();
            assertThat(new FlinkRest(cluster.jobManagerRest(successor)).jobStates()).isEmpty();

            cluster.retireJobManager(old, successor, System.out);
            assertThat(takeover.get(3, TimeUnit.MINUTES))
                    .contains("still checkpoints elsewhere", "resuming from " + checkpoints(old));
        } finally {
            entrypoint.shutdownNow();
        }
        FlinkRest rest = new FlinkRest(cluster.endpoints().get("rest"));
        assertThat(rest.jobStates()).as("exactly one job, on the successor").containsOnlyKeys(id);
        assertThat(rest.awaitTerminal(id, Duration.ofMinutes(4))).isEqualTo("FINISHED");
        assertThat(rest.restarts(id)).as("restarts of the resumed job").isZero();
        JobConfig config = JobConfig.parse(job.toArray(new String[0]));
        JobOutput expected = JobOutput.expected(config);
        try (ObjectStore s = store.open()) {
            assertThat(Chaos.violations(s, expected, JobOutput.published(s, 1, Long.MAX_VALUE)))
                    .isEmpty();
        }
    }

    /** A store of its own under the cluster's bucket. */
    private static StoreSpec newStore(String prefix) throws IOException {
        return StoreSpec.parse(
                        "s3://" + LocalCluster.BUCKET + "/" + prefix + "-" + UUID.randomUUID())
                .withEndpoint(cluster.endpoints().get("s3"));
    }

    /** The job's arguments: its generated source, paced, checkpointed every second. */
    private static List<String> job(
            StoreSpec store, String pipeline, int windows, int perWindow, int perSecond)
            throws IOException {
        return List.of(
                "--pipeline",
                pipeline,
                "--store",
                store.uri().toString(),
                "--endpoint",
                cluster.endpoints().get("s3"),
                "--windows",
                Integer.toString(windows),
                "--events-per-window",
                Integer.toString(perWindow),
                "--events-per-second",
                Integer.toString(perSecond),
                "--checkpoint-interval",
                "1s");
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

    /** A checkpoint directory relative to {@link LocalCluster#CHECKPOINTS}. */
    private static String relative(String directory) {
        return directory.substring(LocalCluster.CHECKPOINTS.length() + 1);
    }

    private static List<String> keys(ObjectStore store, String prefix) throws IOException {
        List<String> keys = new ArrayList<>();
        store.list(prefix, o -> keys.add(o.key()));
        return keys;
    }

    /** Where a JobManager incarnation of the local cluster keeps its checkpoints. */
    private static String checkpoints(String jobManager) {
        return LocalCluster.CHECKPOINTS + "/jm-" + jobManager.substring("jobmanager-".length());
    }

    private static void awaitParts(StoreSpec store, String prefix, int parts) throws Exception {
        long deadline = System.nanoTime() + Duration.ofMinutes(2).toNanos();
        try (ObjectStore s = store.open()) {
            while (true) {
                int[] n = {0};
                s.list(prefix, o -> n[0] += o.key().endsWith(".parquet") ? 1 : 0);
                if (n[0] >= parts) {
                    return;
                }
                assertThat(System.nanoTime()).as("%s parts appeared", parts).isLessThan(deadline);
                Thread.sleep(200);
            }
        }
    }
}
