package dev.snapshots.cli.deploy;

import dev.snapshots.cli.Audit;
import dev.snapshots.cli.Flags;
import dev.snapshots.cli.StoreArgs;
import dev.snapshots.job.config.CommandLine;
import dev.snapshots.job.config.JobConfig;
import dev.snapshots.job.config.JobOptions;
import dev.snapshots.progress.CurrentVersion;
import dev.snapshots.progress.ReaderTable;
import dev.snapshots.store.ObjectStore;
import dev.snapshots.store.StoreSpec;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.flink.annotation.Internal;
import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.ConfigOptions;
import org.apache.flink.configuration.Configuration;

/**
 * Running the job on a Flink cluster without ZooKeeper: {@code submit} (start, or resume from the
 * latest retained checkpoint; what a JobManager container runs when it starts), {@code upgrade}
 * (audit gate, stop-with-savepoint, roll, resume), {@code replay} (a new job version from a
 * savepoint), {@code promote} (switch readers to a version whose history covers theirs) and {@code
 * release} (cancel a JobManager's jobs before it stops).
 *
 * <p>Each pipeline and job version runs under one fixed job id, derived from both, so its
 * checkpoints always land under {@code <checkpoints dir>/<job id>/} and a restarted JobManager
 * finds them there.
 */
@Internal
public final class JobLifecycle {
    public static final String USAGE =
            String.join(
                    "\n",
                    "usage: snapshots submit  --rest URL --jar JAR [--from-savepoint PATH] PROGRAM",
                    "       snapshots upgrade --rest URL --jar JAR --roll local|COMMAND PROGRAM",
                    "       snapshots replay  --rest URL --jar JAR --from-savepoint PATH PROGRAM (of job version N+1)",
                    "       snapshots promote STORE_URI --job-version N [--pipeline P] [--endpoint URL] [--force]",
                    "                         [--iceberg-table NS.T --iceberg-catalog K=V,...]",
                    "       snapshots release --rest URL",
                    "       snapshots savepoint --rest URL --job-version N [--pipeline P]",
                    "",
                    "  submit    start the job under its fixed id (pipeline, job version), resuming from the newest retained",
                    "            checkpoint or savepoint under any JobManager's checkpoint directory once it has stayed the newest",
                    "            for 3 checkpoint intervals (at least 10 s: another JobManager may still run the job); does",
                    "            nothing if the job runs here. Once a resumed job has a checkpoint of its own here, removes the",
                    "            checkpoints of the JobManagers started before this one that it does not name (never a savepoint).",
                    "            Stopped (SIGTERM) with its run in flight, it first waits up to 30 s for the JobManager's answer",
                    "  upgrade   the audit gate (findings block), stop-with-savepoint (a failure blocks; the job keeps running),",
                    "            then roll: 'local' (./snapshots only) restarts the local cluster's JobManager and submits JAR; any other value",
                    "            is a shell command that rolls the new image (e.g. aws ecs update-service ... --force-new-deployment),",
                    "            whose JobManager then resumes from that savepoint through 'submit'",
                    "  replay    recompute from a savepoint into job version N+1; version N is left untouched",
                    "  submit --from-savepoint PATH: start there if the job has no checkpoint of its own yet (a new job version on",
                    "            ECS: SNAPSHOTS_FROM_SAVEPOINT); once it has, a restart resumes from its own",
                    "  promote   the audit gate over every window of N (findings block, --force or not), then",
                    "            make N the version readers follow, only if readers lose no window: N must start no later and be",
                    "            complete no less far than the current version (with none current: than every other version);",
                    "            --force promotes anyway, naming the windows lost. Writes _current.json, then a record in",
                    "            {P}/promoted/ that the views of 'snapshots ddl' and the README's query read; with",
                    "            --iceberg-table, also moves the Iceberg table's main to branch vN, in one commit",
                    "  release   before a JobManager stops (its entrypoint on SIGTERM): cancel the jobs it runs, and those that",
                    "            appear meanwhile, and wait until they have ended; their checkpoints stay, and the next",
                    "            JobManager's 'submit' resumes from them",
                    "  savepoint take a savepoint of the running job version into the cluster's savepoint directory",
                    "            (state.savepoints.dir) and print its path; the job keeps running. The start of version N+1",
                    "            (submit --from-savepoint, SNAPSHOTS_FROM_SAVEPOINT, Terraform's from_savepoint)",
                    "",
                    "PROGRAM, one of:",
                    "  [job flags]  the bundled job (JAR: snapshots-job.jar), its flags as for 'snapshots run' (snapshots run --help)",
                    "  --sql FILE   a SQL script (JAR: snapshots-job.jar), as for 'snapshots run --sql'; the table its INSERT writes",
                    "               ('connector' = 'canonical-snapshots') names the pipeline, job version and store",
                    "  --pipeline P --job-version N --store URI [--endpoint URL] [--checkpoint-interval D] [--entry-class C] -- ARGS",
                    "               any job jar, with its own arguments after --; the flags before name what its sink writes",
                    "               (for the job id and the audit gate) and must be the sink's",
                    "exit status: 0 done, 1 refused or blocked (with the reason), 2 bad flags");

    private static final List<String> OWN_FLAGS =
            List.of("rest", "jar", "roll", "from-savepoint", "sql", "entry-class");

    /** What names any jar's job: the rest of its flags are its own, after {@code --}. */
    private static final List<ConfigOption<?>> JAR_FLAGS =
            List.of(
                    JobOptions.PIPELINE,
                    JobOptions.JOB_VERSION,
                    JobOptions.STORE,
                    JobOptions.ENDPOINT,
                    JobOptions.REGION,
                    JobOptions.CHECKPOINT_INTERVAL);

    private static final Duration SAVEPOINT_TIMEOUT = Duration.ofMinutes(5);

    /**
     * How long a stopping submit waits for its run's answer; the entrypoint waits 35 s for submit,
     * and ECS allows at most 120 s for the whole stop, release included.
     */
    private static final Duration RUN_ANSWER_PATIENCE = Duration.ofSeconds(30);

    /** How long release waits for the jobs it cancels to end. */
    private static final Duration RELEASE_TIMEOUT = Duration.ofSeconds(60);

    /** How long a checkpoint must stay the newest, at least, before a job resumes from it. */
    private static final Duration MIN_QUIET = Duration.ofSeconds(10);

    /**
     * How long, at least, 'submit' waits for a resumed job's first checkpoint before it removes
     * older JobManagers' checkpoints.
     */
    private static final Duration FIRST_CHECKPOINT_PATIENCE = Duration.ofMinutes(2);

    private final PrintStream out;
    private final Map<String, Roll> rolls;
    private final Map<String, String> own = new LinkedHashMap<>();
    private final Program program;

    private JobLifecycle(String command, String[] args, PrintStream out, Map<String, Roll> rolls)
            throws IOException {
        this.out = out;
        this.rolls = rolls;
        List<ConfigOption<?>> options = new ArrayList<>(JobOptions.ALL);
        for (String name : OWN_FLAGS) {
            options.add(ConfigOptions.key("operations." + name).stringType().noDefaultValue());
        }
        int dashes = List.of(args).indexOf("--");
        Configuration values =
                CommandLine.parse(
                                dashes < 0 ? args : Arrays.copyOfRange(args, 0, dashes),
                                options,
                                Set.of(),
                                0,
                                new Configuration())
                        .options();
        for (String name : OWN_FLAGS) {
            String value = values.getString("operations." + name, null);
            if (value != null) {
                own.put(name, value);
            }
        }
        for (String required :
                switch (command) {
                    case "upgrade" -> List.of("rest", "jar", "roll");
                    case "replay" -> List.of("rest", "jar", "from-savepoint");
                    default -> List.of("rest", "jar");
                }) {
            if (!own.containsKey(required)) {
                throw new IllegalArgumentException("--" + required + " is required for " + command);
            }
        }
        this.program =
                program(values, dashes < 0 ? null : List.of(args).subList(dashes + 1, args.length));
    }

    /** The program the flags name: see {@link Program}. */
    private Program program(Configuration values, List<String> theirs) throws IOException {
        Set<String> jobFlags = new TreeSet<>();
        for (ConfigOption<?> option : JobOptions.ALL) {
            if (values.containsKey(option.key())) {
                jobFlags.add(CommandLine.flag(option));
            }
        }
        if (own.containsKey("sql")) {
            if (theirs != null || !jobFlags.isEmpty()) {
                throw new IllegalArgumentException(
                        "with --sql the script is the whole job: no job flags"
                                + (jobFlags.isEmpty() ? "" : " (found " + jobFlags + ")")
                                + (theirs == null ? "" : " and no arguments after --"));
            }
            return Program.sql(Path.of(own.get("sql")));
        }
        if (theirs == null) {
            if (own.containsKey("entry-class")) {
                throw new IllegalArgumentException(
                        "--entry-class is for a jar with its own arguments (after --)");
            }
            return Program.bundled(JobConfig.of(values));
        }
        for (ConfigOption<?> required : JAR_FLAGS.subList(0, 3)) {
            if (!values.containsKey(required.key())) {
                throw new IllegalArgumentException(
                        CommandLine.flag(required)
                                + " is required for a jar with its own arguments: --pipeline,"
                                + " --job-version and --store name what its sink writes");
            }
        }
        for (ConfigOption<?> named : JAR_FLAGS) {
            jobFlags.remove(CommandLine.flag(named));
        }
        if (!jobFlags.isEmpty()) {
            throw new IllegalArgumentException(
                    jobFlags + " are the bundled job's flags; a jar's own arguments go after --");
        }
        JobConfig named = JobConfig.of(values);
        return new Program(
                own.get("entry-class"),
                theirs,
                named.pipeline(),
                named.jobVersion(),
                named.store(),
                named.get(JobOptions.CHECKPOINT_INTERVAL),
                null);
    }

    /**
     * A roll known by name ({@code --roll NAME}), which replaces the JobManager; {@code submit}
     * then resumes the job.
     */
    public interface Roll {
        void roll(PrintStream out) throws Exception;
    }

    /**
     * Runs {@code command}; an upgrade's {@code --roll} names one of {@code rolls}, or else is a
     * shell command.
     */
    public static int run(String command, String[] args, PrintStream out, Map<String, Roll> rolls)
            throws Exception {
        if (command.equals("promote")) {
            return promote(args, out);
        }
        if (command.equals("release")) {
            return release(args, out);
        }
        if (command.equals("savepoint")) {
            return savepoint(args, out);
        }
        JobLifecycle ops = new JobLifecycle(command, args, out, rolls);
        switch (command) {
            case "submit":
                ops.submit();
                return 0;
            case "upgrade":
                return ops.upgrade();
            default:
                return ops.replay();
        }
    }

    /** The job id of a pipeline and job version: the same on every submission, every JobManager. */
    public static String jobId(String pipeline, int jobVersion) {
        try {
            byte[] digest =
                    MessageDigest.getInstance("SHA-256")
                            .digest(
                                    ("snapshots|" + pipeline + "|v=" + jobVersion)
                                            .getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(digest, 0, 16);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    private String jobId() {
        return jobId(program.pipeline(), program.jobVersion());
    }

    /**
     * Starts the job, or resumes it from its newest retained state; a running job is left alone.
     */
    private String submit() throws Exception {
        FlinkRest rest = new FlinkRest(own.get("rest"));
        rest.awaitUp(Duration.ofMinutes(3));
        String id = jobId();
        String state = rest.jobStates().get(id);
        if (state != null && !FlinkRest.TERMINAL.contains(state)) {
            out.printf(
                    "job %s (%s v%d) is already %s%n",
                    id, program.pipeline(), program.jobVersion(), state);
            return id;
        }
        Optional<RetainedCheckpoints.Retained> from = settledRetained(rest, id);
        // A first start may be told where to begin (a new job version from the old one's savepoint,
        // on ECS); once the job has its own checkpoints, a restart resumes from them.
        String savepoint =
                from.map(RetainedCheckpoints.Retained::path).orElse(own.get("from-savepoint"));
        run(rest, savepoint, id);
        out.printf(
                "job %s (%s v%d) submitted, %s%n",
                id,
                program.pipeline(),
                program.jobVersion(),
                from.map(
                                r ->
                                        "resuming from "
                                                + r.path()
                                                + " (checkpoint "
                                                + r.checkpointId()
                                                + ")")
                        .orElse(
                                savepoint != null
                                        ? "from savepoint "
                                                + savepoint
                                                + " (it has no checkpoint of its own yet)"
                                        : "from the start: no retained checkpoint or savepoint"));
        if (from.isPresent()) {
            pruneOnceCheckpointed(rest, id);
        }
        return id;
    }

    private int upgrade() throws Exception {
        FlinkRest rest = new FlinkRest(own.get("rest"));
        String id = jobId();
        try (ObjectStore store = program.store().open()) {
            Optional<String> blocked =
                    Audit.gate(
                            store,
                            program.store(),
                            "upgrade",
                            Optional.empty(),
                            Optional.of(Instant.now().minus(Audit.GATE_PERIOD)),
                            " --since " + Audit.GATE_PERIOD.toDays() + "d");
            if (blocked.isPresent()) {
                out.println(blocked.get());
                return 1;
            }
        }
        out.println("audit gate: clean");
        if (!checked("upgrade", rest)) {
            return 1;
        }
        String savepoint;
        try {
            savepoint =
                    rest.stopWithSavepoint(
                            id, false, checkpointDir(rest, id) + "/savepoints", SAVEPOINT_TIMEOUT);
        } catch (IOException e) {
            // Timed out or failed as seen from here: the stop may still finish. Only the job's
            // state says whether it runs on.
            Optional<String> stopped = awaitStopOutcome(rest, id);
            if (stopped.isEmpty()) {
                return 1;
            }
            savepoint = stopped.get();
        }
        out.println("stopped with savepoint " + savepoint);
        String roll = own.get("roll");
        Roll named = rolls.get(roll);
        if (named != null) {
            named.roll(out);
            submit();
        } else {
            Process p = new ProcessBuilder("sh", "-c", roll).inheritIO().start();
            if (p.waitFor() != 0) {
                out.println(
                        "the roll command exited "
                                + p.exitValue()
                                + "; the job is stopped at "
                                + savepoint
                                + ": fix the roll and run 'snapshots submit' to resume from it");
                return 1;
            }
            out.println(
                    "rolled; the new JobManager resumes from "
                            + savepoint
                            + " through 'snapshots submit'");
        }
        return 0;
    }

    /**
     * The new version's store and identity, checked before the running version is touched: its job
     * would refuse them only after the old one had stopped.
     *
     * @return false, having said why, if the new version is refused
     */
    private boolean checked(String op, FlinkRest rest) throws IOException {
        try {
            program.check(rest, jar());
            return true;
        } catch (IllegalStateException | IllegalArgumentException e) {
            out.println(op + " refused: " + e.getMessage() + " Nothing was changed.");
            return false;
        }
    }

    /**
     * Runs the program as job {@code id}. A SIGTERM meanwhile (the entrypoint stopping, an
     * operator's Ctrl-C) holds this JVM until the JobManager has answered, at most {@link
     * #RUN_ANSWER_PATIENCE}: it runs the program (a SQL script compiles there) whether or not
     * anyone listens, and the job it then starts would escape a 'release' that read the job list
     * before the job was there. Answered, the job is in that list.
     */
    private void run(FlinkRest rest, String savepoint, String id) throws IOException {
        CountDownLatch answered = new CountDownLatch(1);
        Thread hold =
                new Thread(
                        () -> {
                            out.printf(
                                    "job %s: stopping with its run in flight; waiting up to %d s"
                                            + " for the JobManager's answer%n",
                                    id, RUN_ANSWER_PATIENCE.toSeconds());
                            try {
                                boolean done =
                                        answered.await(
                                                RUN_ANSWER_PATIENCE.toSeconds(), TimeUnit.SECONDS);
                                out.printf(
                                        done
                                                ? "job %s: the JobManager answered the run%n"
                                                : "job %s: no answer to the run yet; it may still"
                                                        + " start%n",
                                        id);
                            } catch (InterruptedException e) {
                                Thread.currentThread().interrupt();
                            }
                        });
        Runtime.getRuntime().addShutdownHook(hold);
        try {
            rest.uploadAndRun(jar(), program.entryClass(), program.args(), savepoint, id);
        } finally {
            answered.countDown();
            try {
                Runtime.getRuntime().removeShutdownHook(hold);
            } catch (IllegalStateException e) {
                // Shutting down: the hook runs, and now ends.
            }
        }
    }

    private Path jar() {
        return Path.of(own.get("jar"));
    }

    private int replay() throws Exception {
        FlinkRest rest = new FlinkRest(own.get("rest"));
        String id = jobId();
        if (rest.jobStates().containsKey(id)) {
            out.println(
                    "replay refused: job "
                            + id
                            + " ("
                            + program.pipeline()
                            + " v"
                            + program.jobVersion()
                            + ") already ran on this cluster; pick the next job version");
            return 1;
        }
        if (!checked("replay", rest)) {
            return 1;
        }
        String from = own.get("from-savepoint");
        run(rest, from, id);
        out.printf(
                "replaying %s into v=%d from %s as job %s; other versions are untouched. Promote it once it has caught up:"
                        + " snapshots promote %s%s --pipeline %s --job-version %d (it starts at the savepoint, so promote"
                        + " names the earlier windows readers would lose and asks for --force)%n",
                program.pipeline(),
                program.jobVersion(),
                from,
                id,
                program.store().uri(),
                program.store().endpoint().map(e -> " --endpoint " + e).orElse(""),
                program.pipeline(),
                program.jobVersion());
        return 0;
    }

    private static int promote(String[] args, PrintStream out) throws Exception {
        StoreArgs parsed =
                StoreArgs.parse(
                        args,
                        USAGE,
                        Set.of("force"),
                        "job-version",
                        "pipeline",
                        "iceberg-table",
                        "iceberg-catalog");
        String version = parsed.flags().get("job-version");
        if (version == null || !version.matches("\\d{1,9}")) {
            throw new IllegalArgumentException("--job-version N is required, a whole number");
        }
        String pipeline = parsed.flags().getOrDefault("pipeline", "telemetry");
        try (ObjectStore store = parsed.store().open()) {
            // Write, audit, publish: all of version N becomes visible at once, so all of it is
            // audited first.
            Optional<String> blocked =
                    Audit.gate(
                            store,
                            parsed.store(),
                            "promotion of v=" + version,
                            Optional.of(Integer.parseInt(version)),
                            Optional.empty(),
                            " --job-version " + version);
            if (blocked.isPresent()) {
                out.println(blocked.get());
                return 1;
            }
            out.println("audit gate: clean (every window of v=" + version + ")");
            CurrentVersion.Promotion p =
                    CurrentVersion.promote(
                            store,
                            pipeline,
                            Integer.parseInt(version),
                            parsed.switches().contains("force"));
            out.println(
                    (p.promoted() ? "promoted: " : "promotion refused: ")
                            + p.reason()
                            + p.before().map(v -> " (was v=" + v + ")").orElse(""));
            Optional<ReaderTable> iceberg =
                    JobConfig.icebergTable(
                            parsed.flags().get("iceberg-table"),
                            parsed.flags().get("iceberg-catalog"));
            if (p.promoted() && iceberg.isPresent()) {
                // After the same check: the table's readers lose no window either.
                iceberg.get().promote(parsed.store(), Integer.parseInt(version));
                out.println("promoted: " + iceberg.get() + " shows v=" + version + " on main");
            }
            return p.promoted() ? 0 : 1;
        }
    }

    /**
     * Before a JobManager stops: cancels every job it runs, jobs that appear meanwhile too, until a
     * read of its jobs finds every one ended (at most {@link #RELEASE_TIMEOUT}; then exit 1). A
     * JobManager that stops with a job running frees the job's slots while their tasks are still
     * cancelling, and Flink 1.20's TaskManager then never lets go of the job (the slot's second
     * free reports it as not yet freed): it keeps the job's classloader and refuses the job that
     * the next JobManager resumes under the same id, "The library registration references a
     * different set of library BLOBs", on every restart. Cancelled, the tasks end before the slots
     * are freed. The checkpoints stay (RETAIN_ON_CANCELLATION) for the next 'submit'.
     */
    private static int release(String[] args, PrintStream out) throws IOException {
        if (args.length != 2 || !args[0].equals("--rest")) {
            throw new IllegalArgumentException("release takes --rest URL, and nothing else");
        }
        FlinkRest rest = new FlinkRest(args[1]);
        long deadline = System.nanoTime() + RELEASE_TIMEOUT.toNanos();
        Set<String> cancelled = new LinkedHashSet<>();
        Set<String> ended = new HashSet<>();
        // Read again until a read finds every job ended: a run answered meanwhile (a submit or a
        // replay stopping with its run in flight) adds a job after the first read.
        while (true) {
            Map<String, String> states = rest.jobStates();
            for (String id : cancelled) {
                if (FlinkRest.TERMINAL.contains(states.get(id)) && ended.add(id)) {
                    out.printf(
                            "job %s cancelled before this JobManager stops: %s; its checkpoints"
                                    + " stay%n",
                            id, states.get(id));
                }
            }
            List<String> running =
                    states.keySet().stream()
                            .filter(id -> !FlinkRest.TERMINAL.contains(states.get(id)))
                            .toList();
            if (running.isEmpty()) {
                break;
            }
            if (System.nanoTime() > deadline) {
                out.printf(
                        "jobs %s have not ended within %d s of release%n",
                        running, RELEASE_TIMEOUT.toSeconds());
                return 1;
            }
            for (String id : running) {
                if (cancelled.contains(id)) {
                    continue;
                }
                try {
                    rest.cancel(id);
                    cancelled.add(id);
                    out.printf("job %s (%s): cancelling%n", id, states.get(id));
                } catch (IOException e) {
                    // A job still initializing (a resume answered a moment ago) refuses a
                    // cancel: ask again at the next read, within the same deadline.
                    out.printf(
                            "job %s (%s): not cancelled yet, asking again: %s%n",
                            id, states.get(id), e.getMessage().lines().findFirst().orElse(""));
                }
            }
            FlinkRest.sleep(500);
        }
        if (cancelled.isEmpty()) {
            out.println("no job runs on this JobManager");
        }
        return 0;
    }

    /**
     * A savepoint of a running job version, which keeps running. It goes to the cluster's savepoint
     * directory, outside every JobManager incarnation's checkpoint directory, so no clean-up of a
     * job's own checkpoints removes it while a new version may still have to start from it.
     */
    private static int savepoint(String[] args, PrintStream out) throws IOException {
        Map<String, String> flags =
                Flags.parse(
                        args,
                        new String[][] {
                            {"rest", ""}, {"job-version", ""}, {"pipeline", "telemetry"}
                        },
                        Set.of());
        if (flags.get("rest").isEmpty() || !flags.get("job-version").matches("\\d{1,9}")) {
            throw new IllegalArgumentException(
                    "savepoint takes --rest URL and --job-version N (a whole number)");
        }
        FlinkRest rest = new FlinkRest(flags.get("rest"));
        String pipeline = flags.get("pipeline");
        int version = Integer.parseInt(flags.get("job-version"));
        String id = jobId(pipeline, version);
        String state = rest.jobStates().get(id);
        if (!"RUNNING".equals(state)) {
            out.printf(
                    "savepoint refused: job %s (%s v%d) is %s on this cluster, not RUNNING%n",
                    id, pipeline, version, state == null ? "unknown" : state);
            return 1;
        }
        String path = rest.savepoint(id, SAVEPOINT_TIMEOUT);
        out.printf(
                "savepoint of job %s (%s v%d): %s%nthe job keeps running; start version %d from it"
                        + " with --from-savepoint (Terraform: from_savepoint)%n",
                id, pipeline, version, path, version + 1);
        return 0;
    }

    /**
     * After a stop-with-savepoint that did not answer in time: waits for the job to settle. Its
     * savepoint if it stopped; empty, with what to do said, if it runs on or is still stopping.
     */
    private Optional<String> awaitStopOutcome(FlinkRest rest, String id) throws IOException {
        long deadline = System.nanoTime() + SAVEPOINT_TIMEOUT.toNanos();
        String state = rest.state(id);
        while (!FlinkRest.TERMINAL.contains(state)
                && !state.equals("RUNNING")
                && System.nanoTime() < deadline) {
            FlinkRest.sleep(1000);
            state = rest.state(id);
        }
        if (state.equals("FINISHED") && rest.latestSavepoint(id).isPresent()) {
            return rest.latestSavepoint(id);
        }
        if (state.equals("RUNNING")) {
            out.println(
                    "upgrade refused: stop-with-savepoint of job "
                            + id
                            + " failed; the job keeps running as it was");
        } else {
            out.println(
                    "upgrade stopped: stop-with-savepoint of job "
                            + id
                            + " did not settle within "
                            + SAVEPOINT_TIMEOUT
                            + " (job "
                            + state
                            + "); nothing was rolled. Once it has stopped, 'snapshots submit' resumes it from its"
                            + " newest checkpoint or savepoint");
        }
        return Optional.empty();
    }

    /**
     * The newest whole checkpoint or savepoint of job {@code id} once no newer one appears. Another
     * JobManager may still run the job: ECS starts a replacement task before the old one has
     * stopped, or deploys at 200 %. Its checkpoints keep advancing, and it deletes those it
     * subsumes; a job resumed from one of them would restart-loop on missing files. So the newest
     * counts only once it has stayed the newest for three checkpoint intervals (at least {@link
     * #MIN_QUIET}); until then this waits, and says so.
     */
    private Optional<RetainedCheckpoints.Retained> settledRetained(FlinkRest rest, String id)
            throws IOException {
        Duration quiet = program.checkpointInterval().multipliedBy(3);
        quiet = quiet.compareTo(MIN_QUIET) < 0 ? MIN_QUIET : quiet;
        Optional<RetainedCheckpoints.Retained> newest = newestRetained(rest, id);
        while (newest.isPresent()) {
            out.printf(
                    "job %s: newest retained %s; resuming if no JobManager adds a newer one within"
                            + " %d s%n",
                    id, newest.get().path(), quiet.toSeconds());
            FlinkRest.sleep(quiet.toMillis());
            Optional<RetainedCheckpoints.Retained> again = newestRetained(rest, id);
            if (again.equals(newest)) {
                break;
            }
            out.printf(
                    "job %s still checkpoints elsewhere (now %s): another JobManager runs it;"
                            + " waiting for it to stop%n",
                    id, again.map(RetainedCheckpoints.Retained::path).orElse("none"));
            newest = again;
        }
        return newest;
    }

    /**
     * The newest whole checkpoint or savepoint of job {@code id} under any JobManager incarnation's
     * checkpoint directory: see {@link RetainedCheckpoints}.
     */
    private Optional<RetainedCheckpoints.Retained> newestRetained(FlinkRest rest, String id)
            throws IOException {
        return RetainedCheckpoints.newestWhole(
                checkpointRoot(rest), id, JobLifecycle.class.getClassLoader());
    }

    /**
     * Once the job, resumed here, has completed a checkpoint of its own in this JobManager's
     * incarnation, as this JobManager's REST API reports it: removes the checkpoints of the
     * incarnations that no longer serve the job (see {@link RetainedCheckpoints#prune}). Without it
     * every JobManager start would leave a full checkpoint behind, and every submit would read them
     * all. A job that has not checkpointed within {@link #FIRST_CHECKPOINT_PATIENCE} (or ten
     * intervals) leaves them to a later submit; so does a failure here, which never fails the
     * submit: the job runs.
     */
    private void pruneOnceCheckpointed(FlinkRest rest, String id) {
        Duration interval = program.checkpointInterval();
        Duration patience = interval.multipliedBy(10);
        patience =
                patience.compareTo(FIRST_CHECKPOINT_PATIENCE) < 0
                        ? FIRST_CHECKPOINT_PATIENCE
                        : patience;
        try {
            StoreSpec root = checkpointRoot(rest);
            String rootUri = root.uri().toString();
            Optional<String> here = RetainedCheckpoints.incarnation(rootUri, checkpointBase(rest));
            if (here.isEmpty()) {
                return; // one checkpoint directory for every JobManager: Flink subsumes its own
            }
            long deadline = System.nanoTime() + patience.toNanos();
            Optional<String> own = rest.ownCheckpoint(id);
            while (own.isEmpty()
                    || !here.equals(RetainedCheckpoints.incarnation(rootUri, own.get()))) {
                if (System.nanoTime() > deadline) {
                    out.printf(
                            "job %s has no checkpoint of its own in %s after %d s: other"
                                    + " JobManagers' checkpoints stay, for a later submit to"
                                    + " remove%n",
                            id, here.get(), patience.toSeconds());
                    return;
                }
                FlinkRest.sleep(500);
                own = rest.ownCheckpoint(id);
            }
            RetainedCheckpoints.Pruned pruned;
            try (ObjectStore store = root.open()) {
                pruned =
                        RetainedCheckpoints.prune(
                                store, rootUri, id, own.get(), JobLifecycle.class.getClassLoader());
            }
            out.printf(
                    "job %s has checkpoint %s of its own: removed the checkpoints of %d"
                            + " JobManager incarnations started before %s%s (%d objects)%n",
                    id,
                    own.get(),
                    pruned.incarnations().size(),
                    here.get(),
                    pruned.incarnations().isEmpty() ? "" : " " + pruned.incarnations(),
                    pruned.objects());
        } catch (IOException | RuntimeException e) {
            out.printf(
                    "job %s runs; removing older JobManagers' checkpoints failed (%s): a later"
                            + " submit removes them%n",
                    id, e.getMessage());
        }
    }

    /** Where every JobManager incarnation's checkpoints live, as this JobManager reaches them. */
    private static StoreSpec checkpointRoot(FlinkRest rest) throws IOException {
        StoreSpec spec = StoreSpec.parse(RetainedCheckpoints.searchRoot(checkpointBase(rest)));
        Optional<String> endpoint = rest.config("s3.endpoint");
        return endpoint.isPresent() ? spec.withEndpoint(endpoint.get()) : spec;
    }

    private static String checkpointDir(FlinkRest rest, String id) throws IOException {
        return checkpointBase(rest) + "/" + id;
    }

    /** This JobManager's checkpoint directory, without the job id Flink adds below it. */
    private static String checkpointBase(FlinkRest rest) throws IOException {
        Optional<String> base = rest.config("execution.checkpointing.dir");
        if (base.isEmpty()) {
            base = rest.config("state.checkpoints.dir");
        }
        return base.orElseThrow(
                        () ->
                                new IllegalStateException(
                                        "the cluster has no checkpoint directory"
                                                + " (state.checkpoints.dir): without one a restarted JobManager cannot resume"))
                .replaceAll("/+$", "");
    }
}
