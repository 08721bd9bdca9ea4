package dev.snapshots.job;

import java.io.PrintStream;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** {@code ./snapshots COMMAND [flags]}: the launcher's Java side. */
public final class Cli {
    static final String USAGE = String.join("\n",
            "usage: snapshots COMMAND [flags]",
            "",
            "commands:",
            "  demo [--out DIR] [--fresh] [job flags]   run the job embedded on generated telemetry, into a local directory",
            "  run [job flags]                          run the job embedded against real endpoints (Kinesis, S3)",
            "  inspect STORE_URI [--endpoint URL] [--json]   windows, parts, rows, fingerprints and completion pointers",
            "  audit STORE_URI [--endpoint URL] [--json]     the deploy gate: exit 0 clean, 1 findings, 2 could not scan",
            "  cluster up|down|status                   a local multi-process Flink cluster with S3Proxy and kinesalite",
            "  chaos [--windows N] [--kills K] [--overlap W] [--s3-faults RATE] [--seed S]",
            "                                           kill, overlap, update and fault the job on that cluster; verify the output",
            "  submit | upgrade | replay | promote      run and operate the job on a Flink cluster (local or ECS)",
            "  protect --rest URL                       ECS task scale-in protection for a TaskManager (a sidecar)",
            "  bench [--events N] [--keys K] [--buckets B] [--store file|s3] [--runs R]",
            "                                           what exactly-once costs: ours vs FileSink vs a discarding sink",
            "",
            "Every command takes --help.");

    private Cli() {}

    public static void main(String[] args) {
        System.exit(run(args, System.out, System.err));
    }

    /** What a command does with its flags; returns the exit status. */
    private interface Action {
        int run(String[] args, PrintStream out) throws Exception;
    }

    private record Command(String usage, Action action) {}

    private static final Map<String, Command> COMMANDS = new LinkedHashMap<>();

    static {
        COMMANDS.put("demo", new Command(Demo.USAGE + "\njob flags:\n" + JobConfig.usage(), Demo::run));
        COMMANDS.put("run", new Command("usage: snapshots run [job flags]\n\njob flags:\n" + JobConfig.usage(), Cli::runEmbedded));
        COMMANDS.put("inspect", new Command(Inspect.USAGE, Inspect::run));
        COMMANDS.put("audit", new Command(Audit.USAGE, Audit::run));
        COMMANDS.put("cluster", new Command(LocalCluster.USAGE, LocalCluster::run));
        COMMANDS.put("chaos", new Command(Chaos.USAGE, Chaos::run));
        for (String op : List.of("submit", "upgrade", "replay", "promote")) {
            COMMANDS.put(op, new Command(Operations.USAGE, (args, out) -> Operations.run(op, args, out)));
        }
        COMMANDS.put("protect", new Command(ScaleInProtection.USAGE, ScaleInProtection::run));
        COMMANDS.put("bench", new Command(Bench.USAGE, Bench::run));
    }

    static int run(String[] args, PrintStream out, PrintStream err) {
        if (args.length == 0 || args[0].equals("--help") || args[0].equals("-h") || args[0].equals("help")) {
            out.println(USAGE);
            return args.length == 0 ? 2 : 0;
        }
        Command command = COMMANDS.get(args[0]);
        if (command == null) {
            err.println("error: unknown command '" + args[0] + "'\n\n" + USAGE);
            return 2;
        }
        String[] rest = Arrays.copyOfRange(args, 1, args.length);
        if (Arrays.asList(rest).contains("--help") || Arrays.asList(rest).contains("-h")) {
            out.println(command.usage());
            return 0;
        }
        try {
            return command.action().run(rest, out);
        } catch (IllegalArgumentException e) {
            err.println("error: " + e.getMessage());
            err.println("(snapshots " + args[0] + " --help lists the flags)");
            return 2;
        } catch (Exception e) {
            err.println("error: " + e);
            return 1;
        }
    }

    private static int runEmbedded(String[] args, PrintStream out) throws Exception {
        JobConfig config = JobConfig.parse(args);
        out.printf("running %s v%d from %s into %s (Ctrl-C stops it; progress in %s)%n", config.pipeline(),
                config.jobVersion(), config.source(), config.store(), "the store's _progress.json");
        SnapshotJob.start(SnapshotJob.embedded(), config).getJobExecutionResult().get();
        return 0;
    }
}
