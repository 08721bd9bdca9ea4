package dev.snapshots.harness.chaos;

import static dev.snapshots.harness.chaos.ChaosReport.ordered;

import dev.snapshots.cli.Audit;
import dev.snapshots.cli.page.StorePage;
import dev.snapshots.cli.page.StorePageHtml;
import dev.snapshots.harness.BuildVersion;
import dev.snapshots.harness.JobOutput;
import dev.snapshots.harness.chaos.ChaosPlan.Action;
import dev.snapshots.harness.cluster.FileTrees;
import dev.snapshots.harness.cluster.Kinesalite;
import dev.snapshots.harness.cluster.LocalCluster;
import dev.snapshots.job.config.JobConfig;
import dev.snapshots.store.ObjectStore;
import dev.snapshots.store.StoreSpec;
import dev.snapshots.testkit.FaultProxy;
import dev.snapshots.testkit.FaultProxy.Fault;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.apache.flink.annotation.Internal;
import software.amazon.awssdk.services.kinesis.KinesisClient;

/**
 * {@code snapshots chaos}: the promise under real faults. Brings up a local multi-process cluster,
 * produces a known stream into kinesalite at a steady pace and, while the job runs, SIGKILLs
 * TaskManagers (replacing each, as ECS does), SIGKILLs the JobManager (a new one resumes the job),
 * runs a second JobManager beside the first and then stops the first, runs a second instance of the
 * job from a savepoint beside the first for W windows (a deployment at maximumPercent 200), does
 * one rolling update (stop-with-savepoint, a new JobManager), and injects S3 faults through a
 * proxy. Then it drains the job and checks the store: a clean audit, exactly one object per
 * (window, bucket), rows equal to a reference computed from the generator's truth, and every
 * injected bad or late record dead-lettered.
 *
 * <p>The roles: {@link ChaosPlan} (flags and the moments of every action), {@link Producer} (the
 * stream), {@link Deployer} (kills, instances, savepoints, the outage), {@link Verifier} (the drain
 * and the checks) and {@link ChaosReport} (figures from the job's counters and the store).
 */
@Internal
public final class Chaos {
    public static final String JOB_JAR =
            BuildVersion.jar("job/pipeline", "snapshots-pipeline", "-job");

    /** The job with Iceberg inside: the local cluster's lib/ has none. */
    static final String JOB_ICEBERG_JAR =
            BuildVersion.jar("job/pipeline", "snapshots-pipeline", "-job-iceberg");

    public static final String USAGE =
            String.join(
                    "\n",
                    "usage: snapshots chaos [--windows N] [--kills K] [--jobmanager-kills K] [--overlap W] [--jobmanager-overlap W]",
                    "                       [--catch-up C] [--s3-faults RATE] [--s3-outage SECONDS] [--inline-threshold BYTES] [--seed S]",
                    "                       [--shards H] [--taskmanagers T] [--events-per-window E] [--window-seconds P] [--keep-cluster]",
                    "                       [--iceberg] [--json]",
                    "",
                    "  --windows N            windows of event time to produce [12]",
                    "  --kills K              TaskManagers to SIGKILL at random moments, each replaced [2]",
                    "  --jobmanager-kills K   JobManagers to SIGKILL at random moments outside the overlap, each replaced by a new",
                    "                         one whose 'snapshots submit' resumes the job [1]",
                    "  --overlap W            windows during which a second instance runs beside the first [3]",
                    "  --jobmanager-overlap W windows during which a second JobManager runs beside the first, as a deployment at",
                    "                         200 % does, its submit waiting; then the first stops and the second resumes the job [1]",
                    "  --catch-up C           the second instance starts from a savepoint taken C windows earlier, and catches up [2]",
                    "  --s3-faults RATE       fraction of S3 requests answered with 409, 503, latency or a dropped connection [0.05]",
                    "  --s3-outage SECONDS    S3 down for this long, past the committer's retries, with every incomplete upload aborted",
                    "                         meanwhile (what a lifecycle rule does); 0: none [0]",
                    "  --inline-threshold BYTES  the job's: parts above it are staged in the store first; low enough here that both",
                    "                         paths run ["
                            + ChaosPlan.DEFAULT_INLINE_THRESHOLD
                            + "]",
                    "  --seed S               seeds the stream, the kill moments and the faults [1]",
                    "  --shards H             shards of the stream, of uneven density (1:2:4:...), read by 2 subtasks [4]",
                    "  --taskmanagers T       TaskManagers in the cluster (2 slots each): the two instances need 2, the rest are",
                    "                         spares, whose free slots take a killed TaskManager's tasks at once [3]",
                    "  --events-per-window E  records produced per window [200]",
                    "  --window-seconds P     wall-clock seconds over which one window's records are produced [10]",
                    "  --keep-cluster         leave the cluster up afterwards (snapshots cluster down stops it)",
                    "  --iceberg              the job also keeps an Iceberg table (a JDBC catalog in SQLite beside the run), which a",
                    "                         reader polls throughout: every window it sees must be whole, each committed once",
                    "  --json                 print report.json instead of report.md at the end",
                    "",
                    "Writes target/chaos/report.json, report.md, report.html (the timeline beside the pointer's progress) and",
                    "store.html (the store the run left, as inspect --html draws it); exit 0 when every check passed, 1 on any",
                    "violation, 2 on bad flags.");

    private final Path root;
    private final Path out;
    private final ChaosPlan plan;
    private final Progress progress;
    private final ChaosReport report = new ChaosReport();

    /**
     * The running instances, oldest first: the deployer changes them, the producer's progress lines
     * show them.
     */
    private final List<String> jobs = new CopyOnWriteArrayList<>();

    private Chaos(Path root, ChaosPlan plan, Progress progress) {
        this.root = root;
        this.out = root.resolve("target/chaos");
        this.plan = plan;
        this.progress = progress;
    }

    public static int run(String[] args, PrintStream stdout) throws Exception {
        ChaosPlan plan = ChaosPlan.parse(args);
        // With --json, stdout carries the report only; progress goes to stderr.
        Chaos chaos =
                new Chaos(
                        Path.of(System.getProperty("snapshots.root", ".")),
                        plan,
                        new Progress(plan.json() ? System.err : stdout));
        boolean passed = chaos.execute();
        stdout.println(
                Files.readString(chaos.out.resolve(plan.json() ? "report.json" : "report.md")));
        return passed ? 0 : 1;
    }

    /**
     * Every audit finding, and every way the published parts differ from the reference: what the
     * {@link Verifier} checks.
     */
    public static List<String> violations(
            ObjectStore store, JobOutput expected, JobOutput published) throws IOException {
        List<String> out = new ArrayList<>();
        for (Audit.Finding f : Audit.findings(store, Optional.empty())) {
            out.add("audit " + f.kind() + ": " + f.where() + " (" + f.detail() + ")");
        }
        out.addAll(published.differences(expected));
        return out;
    }

    private boolean execute() throws Exception {
        LocalCluster cluster = new LocalCluster(root, out.resolve("cluster"));
        // Processes left by an aborted run, before their PID files go with the directory: deleted
        // first, they were left running beside the next runs.
        cluster.down(quiet());
        FileTrees.deleteRecursively(out);
        Files.createDirectories(out);
        progress.say(
                "bringing up the cluster (%d TaskManagers, S3Proxy, kinesalite) in %s",
                plan.taskManagers, out.resolve("cluster"));
        cluster.up(plan.taskManagers, quiet());
        // The checks read S3Proxy directly, bypassing the faults.
        try (ObjectStore store =
                StoreSpec.parse(ChaosPlan.STORE_URI)
                        .withEndpoint(cluster.endpoints().get("s3"))
                        .open()) {
            try {
                exercise(cluster, store);
            } catch (Exception e) {
                report.violation("the run did not complete: " + e);
                progress.say("FAILED: %s", e);
            }
            report.jobFigures(cluster.metricsDirectory(), store);
            try (ObjectStore checkpoints =
                    StoreSpec.parse(LocalCluster.CHECKPOINTS)
                            .withEndpoint(cluster.endpoints().get("s3"))
                            .open()) {
                report.checkpointsLeft(checkpoints, cluster.jobManagersStarted());
            }
            storePage(cluster, store);
        } finally {
            report.put("elapsedSeconds", progress.elapsedSeconds());
            if (!plan.keepCluster()) {
                cluster.down(quiet());
            }
        }
        report.write(out, plan);
        boolean passed = report.violations().isEmpty();
        progress.say(
                "%s: %d violations; report in %s",
                passed ? "PASSED" : "FAILED", report.violations().size(), out);
        return passed;
    }

    /**
     * The store the run left, drawn as an operator sees it ({@code inspect --html}), beside the
     * report: store.html.
     */
    private void storePage(LocalCluster cluster, ObjectStore store) {
        try {
            StoreSpec spec =
                    StoreSpec.parse(ChaosPlan.STORE_URI)
                            .withEndpoint(cluster.endpoints().get("s3"));
            StorePageHtml.write(
                    StorePage.read(
                            spec,
                            store,
                            Optional.empty(),
                            Optional.empty(),
                            Duration.ofDays(1),
                            true),
                    out.resolve("store.html"));
        } catch (IOException | RuntimeException e) {
            progress.say("could not draw the store's page: %s", e);
        }
    }

    /** Runs the job under the plan's faults, drains it and checks what it published. */
    private void exercise(LocalCluster cluster, ObjectStore store) throws Exception {
        Map<String, String> endpoints = cluster.endpoints();
        try (FaultProxy proxy = new FaultProxy(endpoints.get("s3"), plan.seed);
                KinesisClient kinesis = Kinesalite.client(endpoints.get("kinesis"))) {
            proxy.inject(
                    plan.faultRate,
                    EnumSet.of(
                            Fault.CONFLICT_409,
                            Fault.SLOW_DOWN_503,
                            Fault.LATENCY,
                            Fault.DROP_AFTER_FORWARD));
            String arn = Kinesalite.createStream(kinesis, "chaos-" + plan.seed, plan.shards);
            List<String> jobArgs =
                    new ArrayList<>(
                            plan.jobArgs(
                                    arn,
                                    endpoints.get("kinesis"),
                                    proxy.endpoint(),
                                    plan.startMillis()));
            String catalog = plan.iceberg() ? IcebergWatch.catalogFlag(out) : null;
            if (plan.iceberg()) {
                jobArgs.addAll(
                        List.of(
                                "--iceberg-table",
                                IcebergWatch.TABLE,
                                "--iceberg-catalog",
                                catalog));
            }
            report.put("shards", ordered("count", plan.shards, "subtasks", ChaosPlan.PARALLELISM));
            JobConfig config = JobConfig.parse(jobArgs.toArray(new String[0]));

            Random random = new Random(plan.seed);
            List<Action> actions = plan.actions(random);
            report.put("plan", actions.stream().map(Action::label).toList());
            progress.say("plan: %s", actions.stream().map(Action::label).toList());
            long closingWindow;
            try (Producer producer =
                    new Producer(plan, kinesis, arn, config, store, jobs, report, progress)) {
                Deployer deployer =
                        new Deployer(
                                plan, cluster, proxy, producer, jobs, report, progress, random);
                deployer.start(root.resolve(plan.iceberg() ? JOB_ICEBERG_JAR : JOB_JAR), jobArgs);
                producer.start();
                IcebergWatch iceberg =
                        plan.iceberg()
                                ? IcebergWatch.start(
                                        catalog,
                                        StoreSpec.parse(ChaosPlan.STORE_URI)
                                                .withEndpoint(endpoints.get("s3")),
                                        progress)
                                : null;
                carryOut(actions, producer, deployer);
                closingWindow = producer.finish();
                report.put("records", (long) plan.windows * plan.perWindow);
                Verifier verifier = new Verifier(plan, store, deployer, jobs, report, progress);
                verifier.drain(closingWindow);
                report.put(
                        "faultsInjected",
                        ordered(
                                "conflict409",
                                proxy.injected(Fault.CONFLICT_409),
                                "slowDown503",
                                proxy.injected(Fault.SLOW_DOWN_503),
                                "latency",
                                proxy.injected(Fault.LATENCY),
                                "droppedConnections",
                                proxy.injected(Fault.DROP_AFTER_FORWARD),
                                "requestsForwarded",
                                proxy.forwarded()));
                JobOutput expected = verifier.verify(config, closingWindow);
                if (iceberg != null) {
                    iceberg.verify(expected, closingWindow, report).forEach(report::violation);
                }
            }
        }
    }

    /**
     * Carries out the plan as production reaches each action's moment: kills on a thread of their
     * own, as ECS replaces tasks whatever a deployment is doing, the rest on this one.
     */
    private void carryOut(List<Action> actions, Producer producer, Deployer deployer)
            throws Exception {
        ExecutorService thread = Executors.newSingleThreadExecutor();
        Future<?> kills =
                thread.submit(
                        () -> {
                            inTurn(
                                    actions.stream().filter(a -> a.what().equals("kill")).toList(),
                                    producer,
                                    deployer);
                            return null;
                        });
        try {
            inTurn(
                    actions.stream().filter(a -> !a.what().equals("kill")).toList(),
                    producer,
                    deployer);
            kills.get();
        } finally {
            thread.shutdownNow();
        }
    }

    private void inTurn(List<Action> actions, Producer producer, Deployer deployer)
            throws Exception {
        for (Action a : actions) {
            producer.awaitProduced(plan.recordsBy(a));
            deployer.act(a);
        }
    }

    private static PrintStream quiet() {
        return new PrintStream(new ByteArrayOutputStream());
    }
}
