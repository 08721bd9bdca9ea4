package dev.snapshots.job;

import java.io.PrintStream;
import java.util.Arrays;

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

    static int run(String[] args, PrintStream out, PrintStream err) {
        if (args.length == 0 || args[0].equals("--help") || args[0].equals("-h") || args[0].equals("help")) {
            out.println(USAGE);
            return args.length == 0 ? 2 : 0;
        }
        String[] rest = Arrays.copyOfRange(args, 1, args.length);
        boolean help = Arrays.asList(rest).contains("--help") || Arrays.asList(rest).contains("-h");
        try {
            switch (args[0]) {
                case "demo":
                    if (help) {
                        out.println(Demo.USAGE + "\njob flags:\n" + JobConfig.usage());
                        return 0;
                    }
                    return Demo.run(rest, out);
                case "run":
                    if (help) {
                        out.println("usage: snapshots run [job flags]\n\njob flags:\n" + JobConfig.usage());
                        return 0;
                    }
                    JobConfig config = JobConfig.parse(rest);
                    out.printf("running %s v%d from %s into %s (Ctrl-C stops it; progress in %s)%n", config.pipeline(),
                            config.jobVersion(), config.source(), config.store(), "the store's _progress.json");
                    SnapshotJob.start(SnapshotJob.embedded(), config)
                            .getJobExecutionResult().get();
                    return 0;
                case "audit":
                    if (help) {
                        out.println(Audit.USAGE);
                        return 0;
                    }
                    return Audit.run(rest, out);
                case "cluster":
                    if (help) {
                        out.println(LocalCluster.USAGE);
                        return 0;
                    }
                    return LocalCluster.run(rest, out);
                case "chaos":
                    if (help) {
                        out.println(Chaos.USAGE);
                        return 0;
                    }
                    return Chaos.run(rest, out);
                case "submit":
                case "upgrade":
                case "replay":
                case "promote":
                    if (help) {
                        out.println(Operations.USAGE);
                        return 0;
                    }
                    return Operations.run(args[0], rest, out);
                case "bench":
                    if (help) {
                        out.println(Bench.USAGE);
                        return 0;
                    }
                    return Bench.run(rest, out);
                case "protect":
                    if (help) {
                        out.println(ScaleInProtection.USAGE);
                        return 0;
                    }
                    return ScaleInProtection.run(rest, out);
                case "inspect":
                    if (help) {
                        out.println(Inspect.USAGE);
                        return 0;
                    }
                    return Inspect.run(rest, out);
                default:
                    err.println("error: unknown command '" + args[0] + "'\n\n" + USAGE);
                    return 2;
            }
        } catch (IllegalArgumentException e) {
            err.println("error: " + e.getMessage());
            err.println("(snapshots " + args[0] + " --help lists the flags)");
            return 2;
        } catch (Exception e) {
            err.println("error: " + e);
            return 1;
        }
    }
}
