package dev.snapshots.harness.chaos;

import dev.snapshots.job.config.JobConfig;
import dev.snapshots.job.Sources;
import dev.snapshots.job.ingest.Event;
import dev.snapshots.job.source.TelemetryGenerator;
import dev.snapshots.cli.Audit;
import dev.snapshots.cli.Flags;
import dev.snapshots.cli.deploy.FlinkRest;
import dev.snapshots.harness.Reference;
import dev.snapshots.harness.cluster.LocalCluster;
import dev.snapshots.harness.cluster.Kinesalite;
import dev.snapshots.harness.cluster.Directories;
import dev.snapshots.key.PartKind;
import dev.snapshots.progress.CompletionPointer;
import dev.snapshots.store.ObjectStore;
import dev.snapshots.store.s3.S3ObjectStore;
import dev.snapshots.store.StoreSpec;
import dev.snapshots.testkit.FaultProxy;
import dev.snapshots.testkit.FaultProxy.Fault;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.SerializationFeature;
import software.amazon.awssdk.core.SdkBytes;
import software.amazon.awssdk.services.kinesis.KinesisClient;
import software.amazon.awssdk.services.kinesis.model.PutRecordsRequestEntry;

/**
 * {@code snapshots chaos}: the promise under real faults. Brings up a local multi-process cluster,
 * produces a known stream into kinesalite at a steady pace and, while the job runs, SIGKILLs
 * TaskManagers (replacing each, as ECS does), runs a second instance of the job from a savepoint
 * beside the first for W windows (a deployment at maximumPercent 200), does one stop-with-savepoint
 * rolling update, and injects S3 faults through a proxy. Then it drains the job and checks the
 * store: a clean audit, exactly one object per (window, bucket), rows equal to a reference computed
 * from the generator's truth, and every injected bad or late record dead-lettered.
 */
public final class Chaos {
    public static final String JOB_JAR = "job/pipeline/target/snapshots-pipeline-0.1.0-SNAPSHOT-job.jar";
    /**
     * About the median snapshot part here (5.1-5.4 KB between the quartiles, at 200 records a window
     * over 4 buckets): so both the inline and the staged path run.
     */
    private static final String DEFAULT_INLINE_THRESHOLD = "5200";
    public static final String USAGE = String.join("\n",
            "usage: snapshots chaos [--windows N] [--kills K] [--overlap W] [--catch-up C] [--s3-faults RATE] [--s3-outage SECONDS]",
            "                       [--inline-threshold BYTES] [--seed S] [--shards H] [--taskmanagers T] [--events-per-window E]",
            "                       [--window-seconds P] [--keep-cluster] [--json]",
            "",
            "  --windows N            windows of event time to produce [12]",
            "  --kills K              TaskManagers to SIGKILL at random moments, each replaced [2]",
            "  --overlap W            windows during which a second instance runs beside the first [3]",
            "  --catch-up C           the second instance starts from a savepoint taken C windows earlier, and catches up [2]",
            "  --s3-faults RATE       fraction of S3 requests answered with 409, 503, latency or a dropped connection [0.05]",
            "  --s3-outage SECONDS    S3 down for this long, past the committer's retries, with every incomplete upload aborted",
            "                         meanwhile (what a lifecycle rule does); 0: none [0]",
            "  --inline-threshold BYTES  the job's: parts above it are staged in the store first; low enough here that both",
            "                         paths run [" + DEFAULT_INLINE_THRESHOLD + "]",
            "  --seed S               seeds the stream, the kill moments and the faults [1]",
            "  --shards H             shards of the stream, of uneven density (1:2:4:...), read by 2 subtasks [4]",
            "  --taskmanagers T       TaskManagers in the cluster (2 slots each) [2]",
            "  --events-per-window E  records produced per window [200]",
            "  --window-seconds P     wall-clock seconds over which one window's records are produced [10]",
            "  --keep-cluster         leave the cluster up afterwards (snapshots cluster down stops it)",
            "  --json                 print report.json instead of report.md at the end",
            "",
            "Writes target/chaos/report.json and target/chaos/report.md; exit 0 when every check passed, 1 on any",
            "violation, 2 on bad flags.");

    private static final String[][] FLAGS = {
        {"windows", "12"}, {"kills", "2"}, {"overlap", "3"}, {"catch-up", "2"}, {"s3-faults", "0.05"}, {"s3-outage", "0"},
        {"inline-threshold", DEFAULT_INLINE_THRESHOLD}, {"seed", "1"},
        {"shards", "4"}, {"taskmanagers", "2"}, {"events-per-window", "200"}, {"window-seconds", "10"},
    };
    private static final long WINDOW_MILLIS = Duration.ofMinutes(5).toMillis();
    /** The job's subtasks: fewer than the shards, as in production. */
    private static final int PARALLELISM = 2;
    private static final Duration RECOVERY_TIMEOUT = Duration.ofMinutes(3);
    private static final int SLICES = 10;
    private static final String STORE_URI = "s3://" + LocalCluster.BUCKET + "/chaos";

    /** What happens at a moment of the production timeline: in window {@code window}, {@code at} of the way through. */
    record Action(int window, double at, String what) {}

    private final Path root;
    private final Path out;
    private final Map<String, String> flags;
    private final int windows;
    private final int kills;
    private final int overlap;
    private final int catchUp;
    private final int shards;
    /** The starting hash key of each shard: where its records are pinned. */
    private List<String> hashKeys;
    /** Taken {@code catchUp} windows before the overlap; the second instance starts from it. */
    private String olderSavepoint;
    private final double faultRate;
    private final int outageSeconds;
    /** Between the sink and S3Proxy; set while the run lasts. */
    private FaultProxy proxy;
    private final long seed;
    private final Random random;
    private final PrintStream progress;
    private final long startNanos = System.nanoTime();
    private final Map<String, Object> report = new LinkedHashMap<>();
    private final List<String> violations = new java.util.concurrent.CopyOnWriteArrayList<>();
    private final List<Map<String, Object>> killed = new java.util.concurrent.CopyOnWriteArrayList<>();
    /** The running instances, oldest first; read by the producer's progress lines. */
    private final List<String> jobs = new java.util.concurrent.CopyOnWriteArrayList<>();
    private final AtomicLong produced = new AtomicLong();
    private final int perWindow;
    private final int taskManagers;
    private final int windowSeconds;
    private double overlapFrom;
    /** Set while a deployment brings up a new instance: the producer holds until it runs. */
    private volatile boolean holding;
    private LocalCluster cluster;
    private FlinkRest rest;
    private String jarId;
    private List<String> jobArgs;
    private int nextTaskManager;

    private Chaos(Path root, Map<String, String> flags, PrintStream progress) {
        this.root = root;
        this.out = root.resolve("target/chaos");
        this.flags = flags;
        this.windows = positive("windows", 1);
        this.kills = positive("kills", 0);
        this.overlap = positive("overlap", 0);
        this.catchUp = positive("catch-up", 0);
        this.shards = positive("shards", 1);
        this.seed = positive("seed", 0);
        this.random = new Random(seed);
        this.progress = progress;
        try {
            faultRate = Double.parseDouble(flags.get("s3-faults"));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("--s3-faults must be a fraction between 0 and 0.5, got '" + flags.get("s3-faults") + "'");
        }
        if (!(faultRate >= 0 && faultRate <= 0.5)) {
            throw new IllegalArgumentException("--s3-faults must be a fraction between 0 and 0.5, got " + faultRate);
        }
        if (windows < overlap + catchUp + 6 || windows > 1000) {
            throw new IllegalArgumentException("--windows must be between --overlap + --catch-up + 6 (" + (overlap + catchUp + 6)
                    + ": a start, the catch-up, the overlap, a rolling update and a tail) and 1000, got " + windows);
        }
        this.outageSeconds = positive("s3-outage", 0);
        positive("inline-threshold", 0);
        this.taskManagers = positive("taskmanagers", 1);
        this.perWindow = positive("events-per-window", 20);
        this.windowSeconds = positive("window-seconds", 1);
    }

    public static int run(String[] args, PrintStream stdout) throws Exception {
        Map<String, String> flags = Flags.parse(args, FLAGS, Set.of("keep-cluster", "json"));
        boolean json = flags.containsKey("json");
        // With --json, stdout carries the report only; progress goes to stderr.
        Chaos chaos = new Chaos(Path.of(System.getProperty("snapshots.root", ".")), flags, json ? System.err : stdout);
        boolean passed = chaos.execute();
        stdout.println(json ? Files.readString(chaos.out.resolve("report.json")) : Files.readString(chaos.out.resolve("report.md")));
        return passed ? 0 : 1;
    }

    private boolean execute() throws Exception {
        Directories.deleteRecursively(out);
        Files.createDirectories(out);
        cluster = new LocalCluster(root, out.resolve("cluster"));
        cluster.down(new PrintStream(new ByteArrayOutputStream())); // processes left by an aborted run
        nextTaskManager = taskManagers + 1;
        say("bringing up the cluster (%d TaskManagers, S3Proxy, kinesalite) in %s", taskManagers, out.resolve("cluster"));
        cluster.up(taskManagers, new PrintStream(new ByteArrayOutputStream()));
        Map<String, String> endpoints = cluster.endpoints();
        rest = new FlinkRest(endpoints.get("rest"));
        try (FaultProxy faults = new FaultProxy(endpoints.get("s3"), seed);
                KinesisClient kinesis = Kinesalite.client(endpoints.get("kinesis"));
                // The checks read S3Proxy directly, bypassing the faults.
                ObjectStore store = StoreSpec.parse(STORE_URI).withEndpoint(endpoints.get("s3")).open()) {
            proxy = faults;
            proxy.inject(faultRate, EnumSet.of(Fault.CONFLICT_409, Fault.SLOW_DOWN_503, Fault.LATENCY, Fault.DROP_AFTER_FORWARD));
            String arn = Kinesalite.createStream(kinesis, "chaos-" + seed, shards);
            hashKeys = kinesis.listShards(b -> b.streamARN(arn)).shards().stream().map(sh -> sh.hashKeyRange().startingHashKey()).toList();
            // Event time lies in the recent past, so Kinesis arrival times (now) judge it as on time.
            long start = System.currentTimeMillis() / WINDOW_MILLIS * WINDOW_MILLIS - (windows + 3) * WINDOW_MILLIS;
            // Event time runs 30 times faster than the clock here (a window per --window-seconds), and the
            // stream holds while a deployment starts: idleness, judged by arrival time, would mean nothing.
            jobArgs = List.of("--source", "kinesis", "--stream-arn", arn, "--kinesis-endpoint", endpoints.get("kinesis"),
                    "--start", Instant.ofEpochMilli(start).toString(), "--windows", Integer.toString(windows),
                    "--events-per-window", flags.get("events-per-window"), "--seed", Long.toString(seed), "--idleness", "0s",
                    "--store", STORE_URI, "--endpoint", proxy.endpoint(), "--checkpoint-interval", "1s",
                    "--inline-threshold", flags.get("inline-threshold"),
                    "--parallelism", Integer.toString(PARALLELISM));
            report.put("shards", ordered("count", shards, "subtasks", PARALLELISM));
            JobConfig config = JobConfig.parse(jobArgs.toArray(new String[0]));

            List<Action> plan = plan();
            say("plan: %s", report.get("plan"));
            jarId = rest.upload(root.resolve(JOB_JAR));
            jobs.add(submit(null));
            long closingWindow = produce(kinesis, arn, config, plan, store);
            finish(store, closingWindow);
            report.put("faultsInjected", ordered("conflict409", proxy.injected(Fault.CONFLICT_409),
                    "slowDown503", proxy.injected(Fault.SLOW_DOWN_503), "latency", proxy.injected(Fault.LATENCY),
                    "droppedConnections", proxy.injected(Fault.DROP_AFTER_FORWARD), "requestsForwarded", proxy.forwarded()));
            verify(store, config, closingWindow);
        } catch (Exception e) {
            violations.add("the run did not complete: " + e);
            say("FAILED: %s", e);
        } finally {
            report.putAll(fromLogs());
            report.put("elapsedSeconds", elapsedSeconds());
            report.put("violations", violations);
            if (!flags.containsKey("keep-cluster")) {
                cluster.down(new PrintStream(new ByteArrayOutputStream()));
            }
        }
        write();
        say("%s: %d violations; report in %s", violations.isEmpty() ? "PASSED" : "FAILED", violations.size(), out);
        return violations.isEmpty();
    }

    /** Kill moments at random; the overlap early, the rolling update between the overlap and the end. */
    private List<Action> plan() {
        List<Action> plan = new ArrayList<>();
        int overlapStart = catchUp + Math.max(1, (windows - overlap - catchUp) / 6);
        int overlapEnd = overlapStart + overlap;
        if (overlap > 0) {
            if (catchUp > 0) {
                plan.add(new Action(overlapStart - catchUp, 0.5, "older-savepoint"));
            }
            plan.add(new Action(overlapStart, 0.5, "overlap-start"));
            plan.add(new Action(overlapEnd, 0.5, "overlap-end"));
        }
        plan.add(new Action(overlapEnd + Math.max(1, (windows - overlapEnd) / 2), 0.5, "rolling-update"));
        if (outageSeconds > 0) { // after the overlap; the rolling update waits for it to end
            plan.add(new Action(overlapEnd + Math.max(1, (windows - overlapEnd) / 4), 0.2, "s3-outage"));
        }
        for (int k = 0; k < kills; k++) {
            plan.add(new Action(1 + random.nextInt(windows - 2), 0.1 + 0.8 * random.nextDouble(), "kill"));
        }
        plan.sort(Comparator.comparingInt(Action::window).thenComparingDouble(Action::at));
        report.put("plan", plan.stream().map(a -> a.what() + "@" + a.window() + String.format(Locale.ROOT, "+%.2f", a.at())).toList());
        return plan;
    }

    /**
     * Produces every window's records at the configured pace on its own thread, as a stream keeps
     * flowing whatever the job is doing, and carries out the plan on this one as production
     * reaches each action's moment. Returns the closing window.
     */
    private long produce(KinesisClient kinesis, String arn, JobConfig config, List<Action> plan, ObjectStore store) throws Exception {
        TelemetryGenerator generator = Sources.generatorFunction(config);
        long paceNanos = Duration.ofSeconds(windowSeconds).toNanos();
        ExecutorService thread = Executors.newFixedThreadPool(2);
        Future<?> producer = thread.submit(() -> {
            long t0 = System.nanoTime();
            for (int w = 0; w < windows; w++) {
                for (int slice = 1; slice <= SLICES; slice++) { // evenly over the window's wall-clock time
                    // While a deployment brings up a new instance the stream holds, then goes on at its pace (no burst):
                    // so the overlap and the rolling update fall inside the run however slowly a job starts.
                    long heldSince = System.nanoTime();
                    while (holding) {
                        Thread.sleep(50);
                    }
                    t0 += System.nanoTime() - heldSince;
                    long to = (long) w * perWindow + (long) perWindow * slice / SLICES;
                    put(kinesis, arn, generator, produced.get(), to);
                    produced.set(to);
                    long wait = t0 + w * paceNanos + paceNanos * slice / SLICES - System.nanoTime();
                    if (wait > 0) {
                        Thread.sleep(wait / 1_000_000);
                    }
                }
                say("window %d/%d produced; complete through %s; running %s", w + 1, windows,
                        CompletionPointer.read(store, PartKind.SNAPSHOT, config.pipeline(), 1).map(Instant::ofEpochMilli)
                                .map(Object::toString).orElse("-"), jobs);
            }
            return null;
        });
        // Kills follow their own clock, as ECS replaces tasks whatever a deployment is doing.
        Future<?> killer = thread.submit(() -> {
            for (Action a : plan.stream().filter(a -> a.what().equals("kill")).toList()) {
                awaitProduced(producer, (long) ((a.window() + a.at()) * perWindow));
                act(a, producer);
            }
            return null;
        });
        try {
            for (Action a : plan.stream().filter(a -> !a.what().equals("kill")).toList()) {
                awaitProduced(producer, (long) ((a.window() + a.at()) * perWindow));
                act(a, producer);
            }
            killer.get();
            producer.get();
        } finally {
            thread.shutdownNow();
        }
        // A closing event per shard, one window past the end, moves every watermark past the last window.
        long closing = config.start().toEpochMilli() + (windows + 1) * WINDOW_MILLIS + 60_000;
        for (int shard = 0; shard < shards; shard++) {
            send(kinesis, arn, shard, List.of(("{\"device\":\"closing\",\"ts\":" + closing + ",\"value\":0}").getBytes(StandardCharsets.UTF_8)));
        }
        report.put("records", (long) windows * perWindow);
        return closing - closing % WINDOW_MILLIS;
    }

    /** Until {@code records} are produced, or production has ended. */
    private void awaitProduced(Future<?> producer, long records) throws Exception {
        while (produced.get() < records && !producer.isDone()) {
            Thread.sleep(50);
        }
        if (producer.isDone()) {
            producer.get(); // a producer failure surfaces here
        }
    }

    private double windowsProduced() {
        return Math.round(produced.get() * 10.0 / perWindow) / 10.0;
    }

    /**
     * Records [from, to) of the generator's stream, each to a shard drawn by its index with weights
     * 1, 2, 4, ... (densities that differ), in order within each shard.
     */
    private void put(KinesisClient kinesis, String arn, TelemetryGenerator generator, long from, long to) {
        List<List<byte[]>> perShard = new ArrayList<>();
        for (int shard = 0; shard < shards; shard++) {
            perShard.add(new ArrayList<>());
        }
        long weights = (1L << shards) - 1;
        for (long i = from; i < to; i++) {
            long draw = Math.floorMod(i * 0x9E3779B97F4A7C15L >>> 11, weights);
            perShard.get(63 - Long.numberOfLeadingZeros(draw + 1)).add(generator.map(i).payload);
        }
        for (int shard = 0; shard < shards; shard++) {
            send(kinesis, arn, shard, perShard.get(shard));
        }
    }

    private void send(KinesisClient kinesis, String arn, int shard, List<byte[]> payloads) {
        // Explicit hash keys at the start of each shard's range pin every record to its shard.
        String hashKey = hashKeys.get(shard);
        for (int from = 0; from < payloads.size(); from += 500) {
            List<PutRecordsRequestEntry> batch = payloads.subList(from, Math.min(payloads.size(), from + 500)).stream()
                    .map(p -> PutRecordsRequestEntry.builder().data(SdkBytes.fromByteArray(p)).partitionKey("p")
                            .explicitHashKey(hashKey).build())
                    .toList();
            int failed = kinesis.putRecords(r -> r.streamARN(arn).streamName(arn.substring(arn.indexOf('/') + 1))
                    .records(batch)).failedRecordCount();
            if (failed > 0) {
                throw new IllegalStateException(failed + " records were refused by Kinesis");
            }
        }
    }

    private void act(Action a, Future<?> producer) throws Exception {
        switch (a.what()) {
            case "kill": {
                String victim = victim();
                long at = System.currentTimeMillis();
                cluster.kill(victim);
                String replacement = "taskmanager-" + nextTaskManager;
                cluster.startTaskManager(nextTaskManager++);
                double window = windowsProduced();
                say("at window %.1f: SIGKILL %s, started %s", window, victim, replacement);
                long recovered = awaitRecovery(at);
                say("recovered %.1f s after the kill of %s", (recovered - at) / 1000.0, victim);
                killed.add(ordered("window", window, "killed", victim, "replacement", replacement,
                        "recoverySeconds", (recovered - at) / 1000.0));
                break;
            }
            case "older-savepoint": {
                olderSavepoint = retry("savepoint", () -> rest.savepoint(jobs.get(0), Duration.ofMinutes(2)));
                say("at window %.1f: savepoint %s, for an instance that will start %d windows behind", windowsProduced(),
                        olderSavepoint, catchUp);
                break;
            }
            case "overlap-start": {
                String savepoint;
                holding = true;
                try {
                    savepoint = olderSavepoint != null ? olderSavepoint : retry("savepoint", () -> rest.savepoint(jobs.get(0), Duration.ofMinutes(2)));
                    jobs.add(submit(savepoint));
                } finally {
                    holding = false;
                }
                overlapFrom = windowsProduced();
                say("at window %.1f: second instance %s started from %s%s; %d jobs run the same work", overlapFrom, jobs.get(1),
                        savepoint, olderSavepoint != null ? " (" + catchUp + " windows behind: it catches up)" : "", jobs.size());
                break;
            }
            case "overlap-end": {
                awaitProduced(producer, (long) ((overlapFrom + overlap) * perWindow)); // W windows side by side, however late it started
                String old = jobs.remove(0);
                rest.cancel(old);
                double sideBySide = Math.round((windowsProduced() - overlapFrom) * 10) / 10.0;
                say("at window %.1f: old instance %s cancelled (%s) after %.1f windows side by side", windowsProduced(), old,
                        rest.awaitTerminal(old, Duration.ofMinutes(1)), sideBySide);
                if (sideBySide < overlap - 0.05) {
                    violations.add(String.format("the two instances ran side by side for only %.1f windows, not %d: production"
                            + " ended first; give each window more --window-seconds", sideBySide, overlap));
                }
                report.put("overlap", ordered("windowsSideBySide", sideBySide, "fromWindow", overlapFrom, "old", old,
                        "new", jobs.get(0)));
                break;
            }
            case "s3-outage": {
                long at = System.currentTimeMillis();
                double window = windowsProduced();
                say("at window %.1f: S3 down for %d s; incomplete uploads aborted meanwhile, as a lifecycle rule would", window,
                        outageSeconds);
                proxy.outage(Duration.ofSeconds(outageSeconds));
                int aborted = 0;
                try (S3ObjectStore direct = (S3ObjectStore) StoreSpec.parse(STORE_URI).withEndpoint(cluster.endpoints().get("s3")).open()) {
                    while (System.currentTimeMillis() < at + outageSeconds * 1000L) {
                        aborted += direct.abortIncompleteUploads();
                        Thread.sleep(500);
                    }
                }
                long back = System.currentTimeMillis();
                double seconds = (awaitRecovery(back) - back) / 1000.0;
                say("S3 back after %d s (%d uploads aborted); the jobs recovered %.1f s later", outageSeconds, aborted, seconds);
                report.put("s3Outage", ordered("window", window, "seconds", outageSeconds, "uploadsAborted", aborted,
                        "recoverySeconds", seconds));
                break;
            }
            default: { // rolling-update
                long at = System.currentTimeMillis();
                String old = jobs.remove(0);
                String savepoint;
                holding = true;
                try {
                    savepoint = retry("stop-with-savepoint", () -> rest.stopWithSavepoint(old, false, Duration.ofMinutes(2)));
                    jobs.add(submit(savepoint));
                } finally {
                    holding = false;
                }
                double seconds = (awaitRecovery(at) - at) / 1000.0;
                say("at window %.1f: rolling update %s -> %s through %s, %.1f s", windowsProduced(), old, jobs.get(0), savepoint, seconds);
                report.put("rollingUpdate", ordered("window", windowsProduced(), "from", old, "to", jobs.get(0), "savepoint", savepoint,
                        "seconds", seconds));
            }
        }
    }

    /** A TaskManager that runs tasks, when one does: killing an idle one would prove nothing. */
    private String victim() throws IOException {
        List<String> alive = cluster.pids().keySet().stream().filter(n -> n.startsWith("taskmanager-")).sorted().toList();
        List<String> busy = new ArrayList<>();
        for (var tm : rest.get("/taskmanagers").path("taskmanagers")) {
            if (tm.path("freeSlots").asInt() < tm.path("slotsNumber").asInt() && alive.contains(tm.path("id").asText())) {
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

    /** Until every running job has all tasks running and a checkpoint triggered after {@code since}; returns when. */
    private long awaitRecovery(long since) throws Exception {
        long deadline = System.nanoTime() + RECOVERY_TIMEOUT.toNanos();
        while (System.nanoTime() < deadline) {
            List<String> running = rest.jobStates().entrySet().stream()
                    .filter(j -> !FlinkRest.TERMINAL.contains(j.getValue())).map(Map.Entry::getKey).toList();
            boolean ready = !running.isEmpty();
            for (String id : running) {
                ready &= rest.allTasksRunning(id) && rest.latestCheckpointMillis(id) > since;
            }
            if (ready) {
                return System.currentTimeMillis();
            }
            Thread.sleep(100);
        }
        throw new IOException("the jobs did not recover (all tasks running, a new checkpoint) within " + RECOVERY_TIMEOUT);
    }

    private interface Call {
        String call() throws IOException;
    }

    /** A savepoint can fail while a checkpoint is declined (a task just restarted): try again, a few times. */
    private String retry(String what, Call call) throws Exception {
        for (int attempt = 1; ; attempt++) {
            try {
                return call.call();
            } catch (IOException e) {
                if (attempt == 5) {
                    throw e;
                }
                say("%s failed (%s); again in 2 s", what, e.getMessage().lines().findFirst().orElse(""));
                awaitRecovery(0);
                Thread.sleep(2000);
            }
        }
    }

    /** Waits for the pointer to pass the last window, then drains the job so the dead letters are published too. */
    private void finish(ObjectStore store, long closingWindow) throws Exception {
        say("all %d windows produced; waiting for the completion pointer to reach %s", windows, Instant.ofEpochMilli(closingWindow));
        long deadline = System.nanoTime() + Duration.ofMinutes(5).toNanos();
        while (CompletionPointer.read(store, PartKind.SNAPSHOT, "telemetry", 1).orElse(0L) < closingWindow) {
            if (System.nanoTime() > deadline) {
                throw new IOException("the completion pointer did not reach " + Instant.ofEpochMilli(closingWindow) + " in 5 minutes");
            }
            Thread.sleep(250);
        }
        String last = jobs.get(0);
        retry("drain", () -> rest.stopWithSavepoint(last, true, Duration.ofMinutes(3)));
        String state = rest.awaitTerminal(last, Duration.ofMinutes(2));
        say("pointer passed the last window; job %s drained: %s", last, state);
        if (!state.equals("FINISHED")) {
            violations.add("the last job ended " + state + ", not FINISHED");
        }
    }

    private void verify(ObjectStore store, JobConfig config, long closingWindow) throws Exception {
        Reference expected = Reference.of(Sources.generatorFunction(config), Sources.generatorCount(config), WINDOW_MILLIS,
                config.buckets());
        Reference published = Reference.published(store, 1, closingWindow);
        List<String> found = violations(store, expected, published);
        violations.addAll(found);
        report.put("windows", windows);
        report.put("parts", ordered("expected", expected.parts.size(), "published", published.parts.size(),
                "objects", published.objects.values().stream().mapToInt(Integer::intValue).sum()));
        report.put("events", ordered("expected", expected.goodEvents, "published", published.goodEvents));
        report.put("deadLetters", ordered("injected", expected.deadLetterReasons, "published", published.deadLetterReasons));
        report.put("storeViolations", found.size());
        say("verified: %d parts expected, %d violations", expected.parts.size(), violations.size());
    }

    /** The verifier: every audit finding, and every way the published parts differ from the reference. */
    public static List<String> violations(ObjectStore store, Reference expected, Reference published) throws IOException {
        List<String> out = new ArrayList<>();
        for (Audit.Finding f : Audit.findings(store, Optional.empty())) {
            out.add("audit " + f.kind() + ": " + f.where() + " (" + f.detail() + ")");
        }
        out.addAll(published.differences(expected));
        return out;
    }

    /** What the committers and retry loops did, counted from every TaskManager's log, killed ones included. */
    private Map<String, Object> fromLogs() throws IOException {
        Map<String, Pattern> patterns = new LinkedHashMap<>();
        patterns.put("partsCreated", Pattern.compile(" Created \\S+ \\("));
        patterns.put("partsCreatedStaged", Pattern.compile(" Created \\S+ \\(.*, staged\\)"));
        patterns.put("partsCreatedInline", Pattern.compile(" Created \\S+ \\(.*, inline\\)"));
        patterns.put("republishedFromStagedCopy", Pattern.compile(" The upload for \\S+ is gone; publishing from its staged copy"));
        patterns.put("duplicatesCollapsed", Pattern.compile(" Collapsed \\S+ into the existing object"));
        patterns.put("divergences", Pattern.compile(" DIVERGENCE at "));
        patterns.put("storeRetries", Pattern.compile(" Attempt \\d+ to .* failed .*, retrying"));
        patterns.put("storeGiveUps", Pattern.compile(" Giving up on "));
        patterns.put("lateAtWindow", Pattern.compile(" reached the window operator after its window closed"));
        Map<String, Object> counts = new LinkedHashMap<>();
        patterns.keySet().forEach(k -> counts.put(k, 0L));
        Path logs = out.resolve("cluster/logs");
        if (Files.isDirectory(logs)) {
            try (Stream<Path> files = Files.list(logs)) {
                for (Path log : files.filter(p -> p.getFileName().toString().matches("taskmanager-\\d+\\.log")).toList()) {
                    for (String line : Files.readAllLines(log)) {
                        patterns.forEach((k, p) -> {
                            if (p.matcher(line).find()) {
                                counts.merge(k, 1L, (x, y) -> (Long) x + (Long) y);
                            }
                        });
                    }
                }
            }
        }
        if ((Long) counts.get("divergences") > 0) {
            violations.add(counts.get("divergences") + " divergences logged by the committers");
        }
        counts.put("kills", killed);
        return counts;
    }

    private void write() throws IOException {
        ObjectMapper json = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);
        Files.writeString(out.resolve("report.json"), json.writeValueAsString(report) + "\n");
        StringBuilder md = new StringBuilder();
        md.append("# Chaos run: ").append(violations.isEmpty() ? "PASSED" : "FAILED").append("\n\n");
        md.append("Command: `./snapshots chaos");
        flags.forEach((k, v) -> md.append(" --").append(k).append(v.equals("true") ? "" : " " + v));
        md.append("`  \nMachine: ").append(Runtime.getRuntime().availableProcessors()).append(" cores, Java ")
                .append(System.getProperty("java.version")).append(", finished ").append(Instant.now()).append("  \n");
        md.append("Plan (action@window+fraction): ").append(flat(report.get("plan"))).append("\n\n| figure | value |\n|---|---|\n");
        report.forEach((k, v) -> {
            if (!List.of("plan", "kills", "violations", "deadLetters").contains(k)) {
                md.append("| ").append(k).append(" | ").append(flat(v)).append(" |\n");
            }
        });
        md.append("\n## Kills\n\n| at window | killed | replacement | recovery (s) |\n|---|---|---|---|\n");
        for (Map<String, Object> k : killed) {
            md.append(String.format("| %s | %s | %s | %.1f |%n", k.get("window"), k.get("killed"), k.get("replacement"),
                    (Double) k.get("recoverySeconds")));
        }
        if (report.get("deadLetters") instanceof Map<?, ?> dead) {
            md.append("\n## Dead letters by reason\n\n| reason | injected | published |\n|---|---|---|\n");
            Map<?, ?> injected = (Map<?, ?>) dead.get("injected");
            Map<?, ?> published = (Map<?, ?>) dead.get("published");
            injected.forEach((reason, n) -> md.append("| ").append(reason).append(" | ").append(n).append(" | ")
                    .append(published.get(reason) == null ? 0 : published.get(reason)).append(" |\n"));
        }
        md.append("\n## Violations\n\n");
        md.append(violations.isEmpty() ? "None: the audit is clean, every (window, bucket) has exactly one object, every part's"
                + " rows equal the reference, and the dead letters equal what was injected.\n" : "");
        violations.forEach(v -> md.append("- ").append(v).append('\n'));
        Files.writeString(out.resolve("report.md"), md.toString());
    }

    /** A figure as one table cell: maps as "key value, ...", lists joined. */
    private static String flat(Object v) {
        if (v instanceof Map<?, ?> m) {
            return String.join(", ", m.entrySet().stream().map(e -> e.getKey() + " " + flat(e.getValue())).toList());
        }
        if (v instanceof List<?> l) {
            return String.join(" ", l.stream().map(Chaos::flat).toList());
        }
        return String.valueOf(v).replace("|", "\\|");
    }

    private static Map<String, Object> ordered(Object... keysAndValues) {
        Map<String, Object> m = new LinkedHashMap<>();
        for (int i = 0; i < keysAndValues.length; i += 2) {
            m.put((String) keysAndValues[i], keysAndValues[i + 1]);
        }
        return m;
    }

    private int positive(String flag, int min) {
        try {
            int v = Integer.parseInt(flags.get(flag));
            if (v >= min) {
                return v;
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        throw new IllegalArgumentException("--" + flag + " must be a whole number >= " + min + ", got '" + flags.get(flag) + "'");
    }

    private double elapsedSeconds() {
        return Math.round((System.nanoTime() - startNanos) / 1e8) / 10.0;
    }

    private void say(String format, Object... args) {
        progress.printf("[%6.1fs] %s%n", elapsedSeconds(), String.format(format, args));
    }
}
