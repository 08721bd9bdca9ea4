package dev.snapshots.harness.chaos;

import static dev.snapshots.harness.chaos.ChaosReport.ordered;

import dev.snapshots.cli.deploy.FlinkRest;
import dev.snapshots.harness.chaos.ChaosPlan.Action;
import dev.snapshots.harness.cluster.LocalCluster;
import dev.snapshots.store.StoreSpec;
import dev.snapshots.store.s3.S3ObjectStore;
import dev.snapshots.testkit.FaultProxy;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;

/**
 * Does to the cluster what ECS and an operator would: SIGKILLs TaskManagers and starts their
 * replacements, takes savepoints, runs a second instance of the job beside the first, rolls an
 * update through stop-with-savepoint, takes S3 down, and waits for the jobs to recover after each.
 */
final class Deployer {
    private static final Duration RECOVERY_TIMEOUT = Duration.ofMinutes(3);

    private final ChaosPlan plan;
    private final LocalCluster cluster;
    private final FlinkRest rest;
    private final FaultProxy proxy;
    private final Producer producer;

    /** The running instances, oldest first. */
    private final List<String> jobs;

    private final ChaosReport report;
    private final Progress progress;

    /** Chooses the victims, after the plan has drawn the kill moments from it. */
    private final Random random;

    private String jarId;
    private List<String> jobArgs;
    private int nextTaskManager;

    /** Taken {@code catchUp} windows before the overlap; the second instance starts from it. */
    private String olderSavepoint;

    private double overlapFrom;

    Deployer(
            ChaosPlan plan,
            LocalCluster cluster,
            FaultProxy proxy,
            Producer producer,
            List<String> jobs,
            ChaosReport report,
            Progress progress,
            Random random)
            throws IOException {
        this.plan = plan;
        this.cluster = cluster;
        this.rest = new FlinkRest(cluster.endpoints().get("rest"));
        this.proxy = proxy;
        this.producer = producer;
        this.jobs = jobs;
        this.report = report;
        this.progress = progress;
        this.random = random;
        this.nextTaskManager = plan.taskManagers + 1;
    }

    /** Uploads the job and runs its first instance. */
    void start(Path jobJar, List<String> jobArgs) throws Exception {
        this.jarId = rest.upload(jobJar);
        this.jobArgs = jobArgs;
        jobs.add(submit(null));
    }

    void act(Action a) throws Exception {
        switch (a.what()) {
            case "kill":
                {
                    String victim = victim();
                    long at = System.currentTimeMillis();
                    cluster.kill(victim);
                    String replacement = "taskmanager-" + nextTaskManager;
                    cluster.startTaskManager(nextTaskManager++);
                    double window = producer.windowsProduced();
                    progress.say(
                            "at window %.1f: SIGKILL %s, started %s", window, victim, replacement);
                    long recovered = awaitRecovery(at);
                    progress.say(
                            "recovered %.1f s after the kill of %s",
                            (recovered - at) / 1000.0, victim);
                    report.kill(
                            ordered(
                                    "window",
                                    window,
                                    "killed",
                                    victim,
                                    "replacement",
                                    replacement,
                                    "recoverySeconds",
                                    (recovered - at) / 1000.0));
                    break;
                }
            case "older-savepoint":
                {
                    olderSavepoint =
                            retry(
                                    "savepoint",
                                    () -> rest.savepoint(jobs.get(0), Duration.ofMinutes(2)));
                    progress.say(
                            "at window %.1f: savepoint %s, for an instance that will start %d windows behind",
                            producer.windowsProduced(), olderSavepoint, plan.catchUp);
                    break;
                }
            case "overlap-start":
                {
                    String savepoint;
                    producer.hold();
                    try {
                        savepoint =
                                olderSavepoint != null
                                        ? olderSavepoint
                                        : retry(
                                                "savepoint",
                                                () ->
                                                        rest.savepoint(
                                                                jobs.get(0),
                                                                Duration.ofMinutes(2)));
                        jobs.add(submit(savepoint));
                    } finally {
                        producer.resume();
                    }
                    overlapFrom = producer.windowsProduced();
                    progress.say(
                            "at window %.1f: second instance %s started from %s%s; %d jobs run the same work",
                            overlapFrom,
                            jobs.get(1),
                            savepoint,
                            olderSavepoint != null
                                    ? " (" + plan.catchUp + " windows behind: it catches up)"
                                    : "",
                            jobs.size());
                    break;
                }
            case "overlap-end":
                {
                    // W windows side by side, however late it started
                    producer.awaitProduced((long) ((overlapFrom + plan.overlap) * plan.perWindow));
                    String old = jobs.remove(0);
                    rest.cancel(old);
                    double sideBySide =
                            Math.round((producer.windowsProduced() - overlapFrom) * 10) / 10.0;
                    progress.say(
                            "at window %.1f: old instance %s cancelled (%s) after %.1f windows side by side",
                            producer.windowsProduced(),
                            old,
                            rest.awaitTerminal(old, Duration.ofMinutes(1)),
                            sideBySide);
                    if (sideBySide < plan.overlap - 0.05) {
                        report.violation(
                                String.format(
                                        "the two instances ran side by side for only %.1f windows, not %d: production"
                                                + " ended first; give each window more --window-seconds",
                                        sideBySide, plan.overlap));
                    }
                    report.put(
                            "overlap",
                            ordered(
                                    "windowsSideBySide",
                                    sideBySide,
                                    "fromWindow",
                                    overlapFrom,
                                    "old",
                                    old,
                                    "new",
                                    jobs.get(0)));
                    break;
                }
            case "s3-outage":
                {
                    long at = System.currentTimeMillis();
                    double window = producer.windowsProduced();
                    progress.say(
                            "at window %.1f: S3 down for %d s; incomplete uploads aborted meanwhile, as a lifecycle rule would",
                            window, plan.outageSeconds);
                    proxy.outage(Duration.ofSeconds(plan.outageSeconds));
                    int aborted = 0;
                    try (S3ObjectStore direct =
                            (S3ObjectStore)
                                    StoreSpec.parse(ChaosPlan.STORE_URI)
                                            .withEndpoint(cluster.endpoints().get("s3"))
                                            .open()) {
                        while (System.currentTimeMillis() < at + plan.outageSeconds * 1000L) {
                            aborted += direct.abortIncompleteUploads();
                            Thread.sleep(500);
                        }
                    }
                    long back = System.currentTimeMillis();
                    double seconds = (awaitRecovery(back) - back) / 1000.0;
                    progress.say(
                            "S3 back after %d s (%d uploads aborted); the jobs recovered %.1f s later",
                            plan.outageSeconds, aborted, seconds);
                    report.put(
                            "s3Outage",
                            ordered(
                                    "window",
                                    window,
                                    "seconds",
                                    plan.outageSeconds,
                                    "uploadsAborted",
                                    aborted,
                                    "recoverySeconds",
                                    seconds));
                    break;
                }
            default:
                { // rolling-update
                    long at = System.currentTimeMillis();
                    String old = jobs.remove(0);
                    String savepoint;
                    producer.hold();
                    try {
                        savepoint =
                                retry(
                                        "stop-with-savepoint",
                                        () ->
                                                rest.stopWithSavepoint(
                                                        old, false, Duration.ofMinutes(2)));
                        jobs.add(submit(savepoint));
                    } finally {
                        producer.resume();
                    }
                    double seconds = (awaitRecovery(at) - at) / 1000.0;
                    progress.say(
                            "at window %.1f: rolling update %s -> %s through %s, %.1f s",
                            producer.windowsProduced(), old, jobs.get(0), savepoint, seconds);
                    report.put(
                            "rollingUpdate",
                            ordered(
                                    "window",
                                    producer.windowsProduced(),
                                    "from",
                                    old,
                                    "to",
                                    jobs.get(0),
                                    "savepoint",
                                    savepoint,
                                    "seconds",
                                    seconds));
                }
        }
    }

    /**
     * Stops {@code job} with a final savepoint, draining it so the dead letters are published too;
     * its end state.
     */
    String drain(String job) throws Exception {
        retry("drain", () -> rest.stopWithSavepoint(job, true, Duration.ofMinutes(3)));
        return rest.awaitTerminal(job, Duration.ofMinutes(2));
    }

    /** A TaskManager that runs tasks, when one does: killing an idle one would prove nothing. */
    private String victim() throws IOException {
        List<String> alive =
                cluster.pids().keySet().stream()
                        .filter(n -> n.startsWith("taskmanager-"))
                        .sorted()
                        .toList();
        List<String> busy = new ArrayList<>();
        for (var tm : rest.get("/taskmanagers").path("taskmanagers")) {
            if (tm.path("freeSlots").asInt() < tm.path("slotsNumber").asInt()
                    && alive.contains(tm.path("id").asText())) {
                busy.add(tm.path("id").asText());
            }
        }
        List<String> candidates = busy.isEmpty() ? alive : busy.stream().sorted().toList();
        return candidates.get(random.nextInt(candidates.size()));
    }

    private String submit(String savepoint) throws Exception {
        String id = rest.run(jarId, jobArgs, savepoint, null);
        awaitRecovery(0);
        return id;
    }

    /**
     * Until every running job has all tasks running and a checkpoint triggered after {@code since};
     * returns when.
     */
    private long awaitRecovery(long since) throws Exception {
        long deadline = System.nanoTime() + RECOVERY_TIMEOUT.toNanos();
        while (System.nanoTime() < deadline) {
            List<String> running =
                    rest.jobStates().entrySet().stream()
                            .filter(j -> !FlinkRest.TERMINAL.contains(j.getValue()))
                            .map(Map.Entry::getKey)
                            .toList();
            boolean ready = !running.isEmpty();
            for (String id : running) {
                ready &= rest.allTasksRunning(id) && rest.latestCheckpointMillis(id) > since;
            }
            if (ready) {
                return System.currentTimeMillis();
            }
            Thread.sleep(100);
        }
        throw new IOException(
                "the jobs did not recover (all tasks running, a new checkpoint) within "
                        + RECOVERY_TIMEOUT);
    }

    private interface Call {
        String call() throws IOException;
    }

    /**
     * A savepoint can fail while a checkpoint is declined (a task just restarted): try again, a few
     * times.
     */
    private String retry(String what, Call call) throws Exception {
        for (int attempt = 1; ; attempt++) {
            try {
                return call.call();
            } catch (IOException e) {
                if (attempt == 5) {
                    throw e;
                }
                progress.say(
                        "%s failed (%s); again in 2 s",
                        what, e.getMessage().lines().findFirst().orElse(""));
                awaitRecovery(0);
                Thread.sleep(2000);
            }
        }
    }
}
