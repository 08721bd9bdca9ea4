package dev.snapshots.harness.chaos;

import static dev.snapshots.harness.chaos.ChaosReport.ordered;

import dev.snapshots.cli.deploy.FlinkRest;
import dev.snapshots.cli.deploy.JobLifecycle;
import dev.snapshots.harness.chaos.ChaosPlan.Action;
import dev.snapshots.harness.cluster.LocalCluster;
import dev.snapshots.job.config.JobConfig;
import dev.snapshots.store.StoreSpec;
import dev.snapshots.store.s3.S3ObjectStore;
import dev.snapshots.testkit.FaultProxy;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.FutureTask;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Does to the cluster what ECS and an operator would: SIGKILLs TaskManagers and starts their
 * replacements, SIGKILLs the JobManager and starts a new one, starts a second JobManager beside the
 * first and stops the first, takes savepoints, runs a second instance of the job beside the first,
 * rolls an update through stop-with-savepoint and a new JobManager, takes S3 down, and waits for
 * the jobs to recover after each.
 *
 * <p>The job runs under its fixed id (pipeline, job version), started and resumed by {@code
 * snapshots submit} on each JobManager's own REST API, as the image's entrypoint does; only the
 * second instance of the overlap, a deployment beside this one, runs under an id of its own.
 */
final class Deployer {
    private static final Duration RECOVERY_TIMEOUT = Duration.ofMinutes(3);
    private static final Duration SIDE_BY_SIDE = Duration.ofSeconds(30);

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

    private Path jobJar;
    private List<String> jobArgs;

    /** The job's fixed id, which every JobManager's submit resumes. */
    private String jobId;

    private int nextTaskManager;

    /** Taken {@code catchUp} windows before the overlap; the second instance starts from it. */
    private String olderSavepoint;

    private double overlapFrom;

    /**
     * A deployment of the JobManager service at 200 %: the old deployment's JobManager and the new
     * one's side by side until the old one is stopped. The address names the one that serves the
     * job; the other waits, its entrypoint's submit running. A JobManager killed meanwhile is
     * replaced in its role, as ECS may start a task for a dead one while the deployment is under
     * way; the deployment's end stops the old role's JobManager whichever it is by then.
     */
    record JobManagerOverlap(String old, String successor, double from, long since) {
        /** The JobManager beside {@code serving}: the one that takes the job over if it dies. */
        String beside(String serving) {
            if (serving.equals(old)) {
                return successor;
            }
            if (serving.equals(successor)) {
                return old;
            }
            throw new IllegalStateException(
                    serving + " is neither " + old + " nor " + successor + " of the overlap");
        }

        /** The overlap once {@code killed} has been replaced by {@code replacement}. */
        JobManagerOverlap replace(String killed, String replacement) {
            beside(killed); // one of the two
            return killed.equals(old)
                    ? new JobManagerOverlap(replacement, successor, from, since)
                    : new JobManagerOverlap(old, replacement, from, since);
        }
    }

    private JobManagerOverlap jobManagerOverlap;

    /**
     * A JobManager's entrypoint: its submit, in the background as the image runs it. The submit of
     * a JobManager started beside a running job waits until that job's checkpoints stop.
     */
    private record Entrypoint(FutureTask<String> submit, Thread thread) {
        /**
         * What the entrypoint's SIGTERM handler does first, and what dies with a SIGKILLed task:
         * the submit ends, if it still runs.
         */
        void stop() throws InterruptedException {
            submit.cancel(true);
            thread.join(Duration.ofMinutes(1).toMillis());
        }
    }

    /** The entrypoints whose submit started in the background, by JobManager. */
    private final Map<String, Entrypoint> entrypoints = new HashMap<>();

    /**
     * JobManagers started in place of one killed beside another: their submit may resume the job
     * while the other's resumed job has not checkpointed yet (its restore outlasts the quiet wait),
     * which is not a fault of the deployment.
     */
    private final Set<String> replacementsInOverlap = new HashSet<>();

    /** When the kill thread last SIGKILLed a TaskManager, for the main thread's verdicts. */
    private volatile long lastTaskManagerKill;

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

    /** Runs the job under its fixed id, as the first JobManager's entrypoint does. */
    void start(Path jobJar, List<String> jobArgs) throws Exception {
        this.jobJar = jobJar;
        this.jobArgs = jobArgs;
        JobConfig config = JobConfig.parse(jobArgs.toArray(new String[0]));
        this.jobId = JobLifecycle.jobId(config.pipeline(), config.jobVersion());
        submitOn(cluster.currentJobManager());
        jobs.add(jobId);
        awaitRecovery(0);
    }

    void act(Action a) throws Exception {
        switch (a.what()) {
            case "jobmanager-kill":
                killJobManager();
                break;
            case "jobmanager-overlap-start":
                startSecondJobManager();
                break;
            case "jobmanager-overlap-end":
                retireFirstJobManager();
                break;
            case "kill":
                {
                    String victim = victim();
                    Predicate<String> interrupted = runningNow();
                    long at = System.currentTimeMillis();
                    cluster.kill(victim);
                    lastTaskManagerKill = at;
                    String replacement = "taskmanager-" + nextTaskManager;
                    cluster.startTaskManager(nextTaskManager++);
                    double window = producer.windowsProduced();
                    progress.say(
                            "at window %.1f: SIGKILL %s, started %s", window, victim, replacement);
                    long recovered = awaitRecovery(at, interrupted);
                    progress.say(
                            "recovered %.1f s after the kill of %s",
                            (recovered - at) / 1000.0, victim);
                    report.kill(
                            measured(
                                    ordered(
                                            "window",
                                            window,
                                            "killed",
                                            victim,
                                            "replacement",
                                            replacement,
                                            "recoverySeconds",
                                            (recovered - at) / 1000.0),
                                    at,
                                    recovered,
                                    interrupted));
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
                        // On the JobManager there now: the one the job started on may be gone,
                        // and its uploads with it.
                        jobs.add(rest.uploadAndRun(jobJar, null, jobArgs, savepoint, null));
                        awaitRecovery(0);
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
                    // W windows side by side, however late it started. The second instance stops:
                    // the job runs on under its fixed id, which the JobManager steps resume.
                    producer.awaitProduced((long) ((overlapFrom + plan.overlap) * plan.perWindow));
                    String second = jobs.remove(1);
                    rest.cancel(second);
                    double sideBySide =
                            Math.round((producer.windowsProduced() - overlapFrom) * 10) / 10.0;
                    progress.say(
                            "at window %.1f: second instance %s cancelled (%s) after %.1f windows side by side",
                            producer.windowsProduced(),
                            second,
                            rest.awaitTerminal(second, Duration.ofMinutes(1)),
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
                                    "kept",
                                    jobs.get(0),
                                    "cancelled",
                                    second));
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
                                    seconds,
                                    "fromMillis",
                                    at,
                                    "untilMillis",
                                    back + (long) (seconds * 1000)));
                    break;
                }
            default:
                rollingUpdate();
        }
    }

    /**
     * What {@code snapshots upgrade} does, without its audit gate (the audit reads the store
     * directly here, bypassing the faults, at the end): stop-with-savepoint into the job's own
     * directory, a new JobManager in place of the old (a deployment at 0 % / 100 %), whose submit
     * resumes from that savepoint.
     */
    private void rollingUpdate() throws Exception {
        long at = System.currentTimeMillis();
        String old = cluster.currentJobManager();
        String savepoint;
        String said;
        producer.hold();
        try {
            String directory = rest.config("state.checkpoints.dir").orElseThrow() + "/" + jobId;
            savepoint =
                    retry(
                            "stop-with-savepoint",
                            () ->
                                    rest.stopWithSavepoint(
                                            jobId,
                                            false,
                                            directory + "/savepoints",
                                            Duration.ofMinutes(2)));
            cluster.rollJobManager(new PrintStream(OutputStream.nullOutputStream()));
            said = submitOn(cluster.currentJobManager());
        } finally {
            producer.resume();
        }
        if (!said.contains("resuming from " + savepoint)) {
            report.violation(
                    "after the rolling update the job did not resume from its savepoint "
                            + savepoint
                            + ": "
                            + said);
        }
        double seconds = (awaitRecovery(at) - at) / 1000.0;
        progress.say(
                "at window %.1f: rolling update: stopped with savepoint %s, %s replaced by %s, resumed; %.1f s",
                producer.windowsProduced(), savepoint, old, cluster.currentJobManager(), seconds);
        report.put(
                "rollingUpdate",
                ordered(
                        "window",
                        producer.windowsProduced(),
                        "savepoint",
                        savepoint,
                        "jobManagers",
                        old + " -> " + cluster.currentJobManager(),
                        "seconds",
                        seconds));
    }

    /**
     * SIGKILLs the JobManager and starts a new one, as ECS replaces a task that died; the new one's
     * entrypoint resumes the job. The stream goes on meanwhile, as Kinesis would.
     */
    private void killJobManager() throws Exception {
        if (jobManagerOverlap != null) {
            killJobManagerBesideAnother();
            return;
        }
        long at = System.currentTimeMillis();
        double window = producer.windowsProduced();
        String old = cluster.currentJobManager();
        cluster.kill(old);
        String successor = cluster.startJobManager();
        cluster.pointAddressAt(successor);
        progress.say("at window %.1f: SIGKILL %s, started %s", window, old, successor);
        String said = submitOn(successor);
        reportResumed(
                at,
                successor,
                said,
                old,
                "window",
                window,
                "killed",
                old,
                "replacement",
                successor);
    }

    /**
     * The JobManager that runs the job SIGKILLed during a deployment at 200 % (on ECS, the old task
     * dying while the new one waits beside it): the one waiting beside takes the job over, its
     * submit having seen the checkpoints stop, and the address names it at once, as service
     * discovery drops a dead task. A replacement starts in the dead one's role, its submit in the
     * background, waiting while the job checkpoints on the other; the deployment's end stops the
     * old role's JobManager. Handled as a kill outside the overlap (seed 13), the replacement took
     * the address and the job, and the overlap's end then stopped a JobManager already dead
     * (ConnectException) and handed the address to the one that had waited, beside the job.
     */
    private void killJobManagerBesideAnother() throws Exception {
        long at = System.currentTimeMillis();
        double window = producer.windowsProduced();
        String killed = cluster.currentJobManager();
        String takesOver = jobManagerOverlap.beside(killed);
        cluster.kill(killed);
        stopEntrypoint(killed);
        cluster.pointAddressAt(takesOver);
        String replacement = cluster.startJobManager();
        startEntrypoint(replacement);
        replacementsInOverlap.add(replacement);
        jobManagerOverlap = jobManagerOverlap.replace(killed, replacement);
        progress.say(
                "at window %.1f: SIGKILL %s during the JobManager overlap; %s, waiting beside it, takes the job over;"
                        + " started %s in its place, its submit waiting",
                window, killed, takesOver, replacement);
        String said = entrypoints.get(takesOver).submit().get(5, TimeUnit.MINUTES);
        reportResumed(
                at,
                takesOver,
                said,
                killed,
                "window",
                window,
                "killed",
                killed,
                "replacement",
                replacement,
                "takenOverBy",
                takesOver);
    }

    /**
     * Waits until every task of the job that {@code resumer}'s submit resumed runs again after the
     * kill of {@code killed} at {@code at}, says so, and reports the kill: {@code fields}, then
     * where the job resumed from and the seconds it took, with the recovery's parts.
     */
    private void reportResumed(
            long at, String resumer, String said, String killed, Object... fields)
            throws Exception {
        long recovered = awaitRecovery(at);
        double seconds = (recovered - at) / 1000.0;
        progress.say(
                "%s resumed the job from %s; recovered %.1f s after the kill of %s",
                resumer, resumedFrom(said), seconds, killed);
        Map<String, Object> kill = ordered(fields);
        kill.put("resumedFrom", resumedFrom(said));
        kill.put("recoverySeconds", seconds);
        report.kill(measured(kill, at, recovered, id -> true));
    }

    /**
     * A deployment of the JobManager service at 200 %: a second JobManager starts while the first
     * runs the job, and its entrypoint's submit starts at once, in the background.
     */
    private void startSecondJobManager() throws Exception {
        String old = cluster.currentJobManager();
        String successor = cluster.startJobManager();
        startEntrypoint(successor);
        jobManagerOverlap =
                new JobManagerOverlap(
                        old, successor, producer.windowsProduced(), System.currentTimeMillis());
        progress.say(
                "at window %.1f: %s started beside %s, as a deployment at 200 %% does; its submit waits while %s runs the job",
                jobManagerOverlap.from(), successor, old, old);
    }

    /**
     * After W windows side by side: the one waiting must not have taken the job over yet. Then the
     * old one is stopped (its submit, if it still waits, then SIGTERM), the successor's submit
     * resumes the job if the successor does not run it already, and exactly one job runs.
     */
    private void retireFirstJobManager() throws Exception {
        JobManagerOverlap o = jobManagerOverlap;
        producer.awaitProduced((long) ((o.from() + plan.jobManagerOverlap) * plan.perWindow));
        // However late in the run the overlap falls, the successor gets several of its quiet waits
        // (10 s at the chaos checkpoint interval) in which it could wrongly take the job over.
        Thread.sleep(Math.max(0, o.since() + SIDE_BY_SIDE.toMillis() - System.currentTimeMillis()));
        double sideBySide = Math.round((producer.windowsProduced() - o.from()) * 10) / 10.0;
        String serving = cluster.currentJobManager();
        String waiting = o.beside(serving);
        // Asked of the JobManager: a submit that has resumed the job returns only once the job has
        // checkpointed, and one without TaskManagers never does (seed 13's replacement ran it 20 s
        // while its submit still waited for that).
        boolean resumedBeside =
                new FlinkRest(cluster.jobManagerRest(waiting)).unfinishedJobs().contains(jobId);
        if (resumedBeside && !replacementsInOverlap.contains(waiting)) {
            // The submit's quiet wait (three checkpoint intervals, at least 10 s) is all that
            // tells a job restarting after a TaskManager's loss from one that has stopped.
            report.violation(
                    waiting
                            + " took the job over while "
                            + serving
                            + " still ran it"
                            + (lastTaskManagerKill > o.since()
                                    ? " (a TaskManager was killed meanwhile: its job's restart may have"
                                            + " outlasted the submit's quiet wait)"
                                    : "")
                            + ": it runs job "
                            + jobId);
        }
        long at = System.currentTimeMillis();
        stopEntrypoint(o.old());
        ByteArrayOutputStream released = new ByteArrayOutputStream();
        cluster.retireJobManager(
                o.old(), o.successor(), new PrintStream(released, true, StandardCharsets.UTF_8));
        String said = entrypoints.get(o.successor()).submit().get(5, TimeUnit.MINUTES);
        long recovered = awaitRecovery(at);
        jobManagerOverlap = null;
        List<String> running = rest.unfinishedJobs();
        if (!running.equals(List.of(jobId))) {
            report.violation(
                    "after the JobManager overlap "
                            + o.successor()
                            + " runs "
                            + running
                            + ", not exactly the job "
                            + jobId);
        }
        entrypoints.remove(o.successor());
        // Or resumed between that question and its stop, which cancelled it.
        resumedBeside |=
                waiting.equals(o.old())
                        && released.toString(StandardCharsets.UTF_8).contains("cancelled");
        // A replacement whose submit resumed the job beside the one that had taken it over, before
        // that one's job checkpointed: two jobs until the old one's stop, one without TaskManagers
        // (the address names the other). Cancelled with the old one, or on the successor resumed
        // from an older checkpoint, which republishes windows that collapse.
        String beside =
                !resumedBeside
                        ? "none"
                        : waiting
                                + " resumed the job beside "
                                + serving
                                + (waiting.equals(o.old())
                                        ? "; at its stop: "
                                                + released.toString(StandardCharsets.UTF_8).trim()
                                        : "; its job ran on once " + o.old() + " stopped");
        progress.say(
                "at window %.1f: %s stopped after %.1f windows beside %s, which %s the job from %s; recovered %.1f s"
                        + " after the stop%s",
                producer.windowsProduced(),
                o.old(),
                sideBySide,
                o.successor(),
                serving.equals(o.old()) ? "resumed" : "already ran",
                resumedFrom(said),
                (recovered - at) / 1000.0,
                resumedBeside ? "; " + beside : "");
        report.put(
                "jobManagerOverlap",
                ordered(
                        "fromWindow",
                        o.from(),
                        "windowsSideBySide",
                        sideBySide,
                        "old",
                        o.old(),
                        "successor",
                        o.successor(),
                        "takenOver",
                        serving.equals(o.old())
                                ? "when " + o.old() + " stopped"
                                : "when " + serving + "'s predecessor was killed",
                        "successorWaitedSeconds",
                        (at - o.since()) / 1000.0,
                        "resumedFrom",
                        resumedFrom(said),
                        "resumedBeside",
                        beside,
                        "recoverySeconds",
                        (recovered - at) / 1000.0));
    }

    /** Runs {@code jobManager}'s submit in the background, as its entrypoint does. */
    private void startEntrypoint(String jobManager) {
        FutureTask<String> submit = new FutureTask<>(() -> submitOn(jobManager));
        Thread thread = new Thread(submit, jobManager + "-submit");
        thread.setDaemon(true);
        thread.start();
        entrypoints.put(jobManager, new Entrypoint(submit, thread));
    }

    private void stopEntrypoint(String jobManager) throws InterruptedException {
        Entrypoint e = entrypoints.remove(jobManager);
        if (e != null) {
            e.stop();
        }
    }

    /**
     * {@code snapshots submit} on a JobManager's own REST API, as its entrypoint runs it; what it
     * said.
     */
    private String submitOn(String jobManager) throws Exception {
        List<String> args =
                new ArrayList<>(
                        List.of(
                                "--rest",
                                cluster.jobManagerRest(jobManager),
                                "--jar",
                                jobJar.toString()));
        args.addAll(jobArgs);
        ByteArrayOutputStream said = new ByteArrayOutputStream();
        int code =
                JobLifecycle.run(
                        "submit",
                        args.toArray(new String[0]),
                        new PrintStream(said, true, StandardCharsets.UTF_8),
                        Map.of());
        String text = said.toString(StandardCharsets.UTF_8).trim();
        if (code != 0) {
            throw new IOException(
                    "snapshots submit on " + jobManager + " exited " + code + ": " + text);
        }
        return text;
    }

    /** The checkpoint or savepoint a submit resumed from, as it said. */
    private static String resumedFrom(String said) {
        Matcher m = Pattern.compile("resuming from (\\S+)").matcher(said);
        return m.find() ? m.group(1) : "nothing: " + said;
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
        List<String> candidates;
        try {
            candidates = cluster.busyTaskManagers();
        } catch (IOException jobManagerAway) {
            candidates = List.of(); // replaced right now: any TaskManager will do
        }
        if (candidates.isEmpty()) {
            candidates = cluster.aliveTaskManagers();
        }
        return candidates.get(random.nextInt(candidates.size()));
    }

    /**
     * The jobs running now: what a TaskManager kill interrupts. A job started after it (an
     * overlap's second instance, catching up from an older savepoint) makes its own start, which
     * seed 23 counted into a kill's recovery (66.3 s, of which the kill's job took 22 s). Any job,
     * if the JobManager cannot say, or runs none: a JobManager just started in place of another has
     * not resumed the job yet, and counting none waited for nothing until the timeout (seed 13, a
     * kill 12 s after a JobManager's).
     */
    private Predicate<String> runningNow() {
        try {
            List<String> running = rest.unfinishedJobs();
            return running.isEmpty() ? id -> true : Set.copyOf(running)::contains;
        } catch (IOException jobManagerAway) {
            return id -> true;
        }
    }

    /**
     * {@code kill}, a kill's figures, with when it happened and recovered (for the report's verdict
     * on whether it overlapped the S3 outage) and the parts of its recovery, asked at once: the
     * REST API keeps only each task's latest attempt, and a later kill would replace it.
     */
    private Map<String, Object> measured(
            Map<String, Object> kill, long at, long recovered, Predicate<String> counted) {
        kill.put("atMillis", at);
        kill.put("recoveredMillis", recovered);
        List<String> running;
        try {
            running = rest.unfinishedJobs().stream().filter(counted).toList();
        } catch (IOException jobManagerAway) {
            running = List.of();
        }
        kill.putAll(RecoveryParts.measure(rest, cluster.logsDirectory(), running, at));
        return kill;
    }

    /**
     * Until every running job has all tasks running and a checkpoint triggered after {@code since};
     * returns when.
     */
    private long awaitRecovery(long since) throws Exception {
        return awaitRecovery(since, id -> true);
    }

    /** As {@link #awaitRecovery(long)}, for the running jobs that {@code counted} accepts. */
    private long awaitRecovery(long since, Predicate<String> counted) throws Exception {
        long deadline = System.nanoTime() + RECOVERY_TIMEOUT.toNanos();
        while (System.nanoTime() < deadline) {
            try {
                List<String> running = rest.unfinishedJobs().stream().filter(counted).toList();
                boolean ready = !running.isEmpty();
                for (String id : running) {
                    ready &= rest.allTasksRunning(id) && rest.latestCheckpointMillis(id) > since;
                }
                if (ready) {
                    return System.currentTimeMillis();
                }
            } catch (IOException jobManagerAway) {
                // being replaced: ask its successor
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
     * A savepoint can fail while a checkpoint is declined (a task just restarted): try again once
     * the jobs have recovered and completed a checkpoint since the failure. Each wait alone was not
     * enough: TaskManager kills, which come from their own thread as ECS replaces tasks whatever a
     * deployment does, landed twice during one rolling update (seed 11), and five tries 2 s apart
     * after "all tasks running" all met a job that was restarting again.
     */
    private String retry(String what, Call call) throws Exception {
        for (int attempt = 1; ; attempt++) {
            try {
                return call.call();
            } catch (IOException e) {
                if (attempt == 8) {
                    throw e;
                }
                progress.say(
                        "%s failed (%s); again once the jobs have checkpointed since",
                        what, e.getMessage().lines().findFirst().orElse(""));
                awaitRecovery(System.currentTimeMillis());
            }
        }
    }
}
