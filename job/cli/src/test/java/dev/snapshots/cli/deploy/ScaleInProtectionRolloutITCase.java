package dev.snapshots.cli.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import dev.snapshots.cli.testutils.EcsControlPlane;
import dev.snapshots.cli.testutils.EcsControlPlane.RunningTask;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import org.apache.flink.client.program.ClusterClient;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.flink.test.junit5.InjectClusterClient;
import org.apache.flink.test.junit5.InjectMiniCluster;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The sidecar in a service that ECS deploys and scales: a stand-in ECS control plane ({@link
 * EcsControlPlane}, the one part here that is not real) starts each task as a real TaskManager of a
 * Flink MiniCluster with the real sidecar beside it, and stops a task as ECS does (the sidecar
 * first, as the task definition's {@code dependsOn} makes ECS do, then the TaskManager). The job
 * runs on two TaskManagers of one slot each; the service runs a third, the spare, as the Terraform
 * module does ({@code taskmanager_count + spare_taskmanagers}).
 *
 * <p>Time is compressed: the sidecar renews every second and hands over after 8 s of protection
 * where production waits 10 minutes; the control plane acts every 100 ms.
 */
class ScaleInProtectionRolloutITCase {
    /** Two TaskManagers run the job (parallelism 2, one slot each), one is the spare. */
    private static final int SERVICE_TASKS = 3;

    private static final ScaleInProtection.Timing TIMING =
            new ScaleInProtection.Timing(
                    10,
                    Duration.ofSeconds(1),
                    Duration.ofMillis(200),
                    Duration.ofSeconds(8),
                    Duration.ofSeconds(2));

    /** A hand-over's first line, by its cause: the end of a stretch, or SIGTERM. */
    private static final Pattern HAND_OVER =
            Pattern.compile(
                    "^(SIGTERM|protected for \\d+ s)[^\\n]*: checkpointing", Pattern.MULTILINE);

    /** A hand-over's checkpoint, by its id (two hand-overs at once may share one). */
    private static final Pattern CHECKPOINTED =
            Pattern.compile("^checkpoint (\\d+) of job \\w+ completed$", Pattern.MULTILINE);

    // Its own TaskManagers are stopped before the tests: the service's tasks start theirs, and
    // each test stops its own. Two, because a MiniCluster of one TaskManager connects its tasks
    // locally only, and the service's TaskManagers exchange data over the network.
    @RegisterExtension
    static final MiniClusterExtension CLUSTER =
            new MiniClusterExtension(
                    new MiniClusterResourceConfiguration.Builder()
                            .setNumberTaskManagers(2)
                            .setNumberSlotsPerTaskManager(1)
                            .build());

    /** The MiniCluster's TaskManagers in the order they started, over all tests of the class. */
    private static int taskManagersStarted = 2;

    /** This test's TaskManagers, by their index in the MiniCluster. */
    private final List<Integer> taskManagers = new ArrayList<>();

    private final ExecutorService sidecars = Executors.newCachedThreadPool();
    private final List<ByteArrayOutputStream> sidecarLogs = new ArrayList<>();
    private MiniCluster miniCluster;
    private FlinkRest rest;
    private String restUrl;
    private EcsControlPlane ecs;

    @BeforeAll
    static void stopTheClustersOwnTaskManager(@InjectMiniCluster MiniCluster miniCluster)
            throws Exception {
        for (int index = 0; index < taskManagersStarted; index++) {
            miniCluster.terminateTaskManager(index).get(1, TimeUnit.MINUTES);
        }
    }

    @BeforeEach
    void startService(
            @InjectMiniCluster MiniCluster miniCluster,
            @InjectClusterClient ClusterClient<?> client)
            throws Exception {
        this.miniCluster = miniCluster;
        this.restUrl = client.getWebInterfaceURL();
        this.rest = new FlinkRest(restUrl);
        ecs = new EcsControlPlane(this::startTask, 0.15, 21);
        ecs.createService(SERVICE_TASKS);
        ecs.awaitSteady(Duration.ofMinutes(1));
    }

    @AfterEach
    void stopService() throws Exception {
        ecs.close();
        sidecars.shutdownNow();
        for (int index : taskManagers) {
            miniCluster.terminateTaskManager(index).get(1, TimeUnit.MINUTES);
        }
    }

    /**
     * A TaskManager-only rollout (new memory or slots, a new agent image, a forced deployment): ECS
     * starts three new tasks beside the three old ones and takes the spare at once; each
     * TaskManager that runs the job goes within one stretch of protection, once its sidecar has
     * checkpointed and let go. The job ends up running on the new tasks.
     */
    @Test
    void aTaskManagerRolloutCompletesWhileTheJobRuns() throws Exception {
        JobClient job = runJobUntilProtected();
        String jobId = job.getJobID().toHexString();
        long checkpointsBefore = completedCheckpoints(jobId);
        List<String> before = ecs.tasks(EcsControlPlane.Status.RUNNING);

        ecs.deploy();
        Duration converged = ecs.awaitSteady(Duration.ofSeconds(90));
        awaitRunning(jobId);

        Map<String, Integer> handOvers = sidecarLines(HAND_OVER);
        int checkpointed = sidecarLines(CHECKPOINTED).size();
        System.out.printf(
                "TaskManager rollout of %d tasks converged in %.1f s; hand-overs %s, waiting for %d"
                        + " checkpoints (%d checkpoints completed in all); %d job restarts;"
                        + " agent answers %s%n%s%n",
                SERVICE_TASKS,
                converged.toMillis() / 1000.0,
                handOvers,
                checkpointed,
                completedCheckpoints(jobId) - checkpointsBefore,
                rest.restarts(jobId),
                List.of(
                        "ThrottlingException=" + ecs.answered("ThrottlingException"),
                        "TASK_STOPPING_OR_STOPPED=" + ecs.answered("TASK_STOPPING_OR_STOPPED"),
                        "DEPLOYMENT_BLOCKED=" + ecs.answered("DEPLOYMENT_BLOCKED")),
                ecs.describe());
        assertThat(ecs.tasks(EcsControlPlane.Status.RUNNING))
                .as("only new tasks run")
                .hasSize(SERVICE_TASKS)
                .doesNotContainAnyElementsOf(before);
        assertThat(handOvers.values().stream().mapToInt(Integer::intValue).sum())
                .as("each TaskManager that ran the job checkpointed before it let go")
                .isGreaterThanOrEqualTo(2);
        assertThat(ecs.answered("ThrottlingException")).as("throttled now and then").isPositive();
        job.cancel().get();
    }

    /**
     * A scale-in takes the idle spare at once: the TaskManagers that run the job are protected, so
     * the job is not disturbed.
     */
    @Test
    void aScaleInTakesTheSpareAndLeavesTheJobAlone() throws Exception {
        JobClient job = runJobUntilProtected();
        String jobId = job.getJobID().toHexString();
        List<String> working = ecs.protectedTasks();

        ecs.scale(SERVICE_TASKS - 1);
        Duration converged = ecs.awaitSteady(Duration.ofSeconds(30));

        System.out.printf(
                "scale-in from %d to %d tasks converged in %.1f s, %d job restarts%n%s%n",
                SERVICE_TASKS,
                SERVICE_TASKS - 1,
                converged.toMillis() / 1000.0,
                rest.restarts(jobId),
                ecs.describe());
        assertThat(ecs.tasks(EcsControlPlane.Status.RUNNING))
                .as("the TaskManagers that run the job stay")
                .containsExactlyInAnyOrderElementsOf(working);
        assertThat(rest.restarts(jobId)).as("the job did not restart").isZero();
        assertThat(rest.state(jobId)).isEqualTo("RUNNING");
        job.cancel().get();
    }

    /** Starts the job and waits until both TaskManagers that run it are protected. */
    private JobClient runJobUntilProtected() throws Exception {
        JobClient job = ScaleInProtectionITCase.startJob();
        awaitRunning(job.getJobID().toHexString());
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (ecs.protectedTasks().size() < 2) {
            assertThat(System.nanoTime())
                    .as("both working TaskManagers protected: %s", ecs.describe())
                    .isLessThan(deadline);
            Thread.sleep(50);
        }
        return job;
    }

    /**
     * A task as ECS runs it: a TaskManager, then the sidecar (it depends on the TaskManager, so
     * starts after it and stops before it).
     */
    private RunningTask startTask(String taskId, String agentUri) throws Exception {
        int index;
        String taskManager;
        synchronized (this) { // one at a time: the TaskManager that registers is the one started
            Set<String> registered = taskManagerIds();
            index = taskManagersStarted++;
            miniCluster.startTaskManager();
            taskManagers.add(index);
            taskManager = awaitNewTaskManager(registered);
        }
        ByteArrayOutputStream log = new ByteArrayOutputStream();
        synchronized (sidecarLogs) {
            sidecarLogs.add(log);
        }
        ScaleInProtection sidecar = sidecar(agentUri, taskManager, log);
        Future<?> loop =
                sidecars.submit(
                        () -> {
                            sidecar.loop();
                            return null;
                        });
        return stopTimeout -> {
            // SIGTERM to the sidecar: its JVM's shutdown hook hands over; then it exits.
            sidecar.terminate();
            loop.get(stopTimeout.toMillis(), TimeUnit.MILLISECONDS);
            miniCluster
                    .terminateTaskManager(index)
                    .get(stopTimeout.toMillis(), TimeUnit.MILLISECONDS);
        };
    }

    private ScaleInProtection sidecar(
            String agentUri, String taskManager, ByteArrayOutputStream log) {
        return new ScaleInProtection(
                agentUri,
                restUrl,
                taskManager,
                TIMING,
                new PrintStream(log, true, StandardCharsets.UTF_8));
    }

    private Set<String> taskManagerIds() throws Exception {
        Set<String> ids = new HashSet<>();
        for (JsonNode tm : rest.get("/taskmanagers").path("taskmanagers")) {
            ids.add(tm.path("id").asText());
        }
        return ids;
    }

    private String awaitNewTaskManager(Set<String> registered) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (true) {
            Set<String> now = taskManagerIds();
            now.removeAll(registered);
            if (!now.isEmpty()) {
                return now.iterator().next();
            }
            assertThat(System.nanoTime()).as("the TaskManager registered").isLessThan(deadline);
            Thread.sleep(50);
        }
    }

    /** How many of the sidecars' log lines match, by the pattern's first group. */
    private Map<String, Integer> sidecarLines(Pattern pattern) {
        Map<String, Integer> counts = new TreeMap<>();
        synchronized (sidecarLogs) {
            for (ByteArrayOutputStream log : sidecarLogs) {
                pattern.matcher(log.toString(StandardCharsets.UTF_8))
                        .results()
                        .forEach(m -> counts.merge(m.group(1), 1, Integer::sum));
            }
        }
        return counts;
    }

    private long completedCheckpoints(String jobId) throws Exception {
        return rest.get("/jobs/" + jobId + "/checkpoints")
                .path("counts")
                .path("completed")
                .asLong();
    }

    private void awaitRunning(String jobId) throws Exception {
        long deadline = System.nanoTime() + Duration.ofMinutes(1).toNanos();
        while (!rest.allTasksRunning(jobId)) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError(
                        "job "
                                + jobId
                                + " not running: "
                                + rest.get("/jobs/" + jobId)
                                + "\n"
                                + rest.get("/taskmanagers")
                                + "\n"
                                + rest.get("/jobs/" + jobId + "/exceptions")
                                + "\n"
                                + ecs.describe());
            }
            Thread.sleep(100);
        }
    }
}
