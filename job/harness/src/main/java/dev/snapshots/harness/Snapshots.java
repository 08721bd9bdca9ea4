package dev.snapshots.harness;

import dev.snapshots.cli.Cli;
import dev.snapshots.cli.Cli.Command;
import dev.snapshots.cli.deploy.JobLifecycle;
import dev.snapshots.harness.bench.Bench;
import dev.snapshots.harness.chaos.Chaos;
import dev.snapshots.harness.cluster.LocalCluster;
import dev.snapshots.job.SnapshotJob;
import dev.snapshots.job.config.JobConfig;
import dev.snapshots.job.sql.SqlJob;
import dev.snapshots.job.sql.SqlScript;
import dev.snapshots.key.ObjectKeys;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.flink.annotation.Internal;

/**
 * {@code ./snapshots COMMAND [flags]}: the launcher's Java side. The harness's commands (demo, an
 * embedded run, the local cluster, chaos, bench) and the operator's ({@link Cli}), where an upgrade
 * may roll the local cluster ({@code --roll local}).
 */
@Internal
public final class Snapshots {
    private Snapshots() {}

    public static void main(String[] args) {
        System.exit(run(args, System.out, System.err));
    }

    public static int run(String[] args, PrintStream out, PrintStream err) {
        return Cli.run(args, out, err, commands(), "snapshots");
    }

    static Map<String, Command> commands() {
        Map<String, Command> commands = new LinkedHashMap<>();
        commands.put(
                "demo",
                new Command(
                        "demo [--out DIR] [--fresh] [job flags]   run the job embedded on generated telemetry, into a"
                                + " local directory",
                        Demo.usage(),
                        Demo::run));
        commands.put(
                "run",
                new Command(
                        "run [job flags] | run --sql FILE         run the job, or a SQL script, embedded against real"
                                + " endpoints (Kinesis, S3)",
                        "usage: snapshots run [job flags]\n"
                                + "       snapshots run --sql FILE\n\n"
                                + "  --sql FILE  a pipeline in Flink SQL: CREATE TABLE, CREATE VIEW and SET 'key' ="
                                + " 'value'\n"
                                + "              statements and one INSERT INTO a 'canonical-snapshots' table; it"
                                + " ends when\n"
                                + "              its sources end, or on Ctrl-C (README: SQL first)\n\n"
                                + "job flags:\n"
                                + JobConfig.usage(),
                        Snapshots::runEmbedded));
        Map<String, JobLifecycle.Roll> rolls =
                Map.of(
                        "local",
                        out ->
                                new LocalCluster(Path.of(System.getProperty("snapshots.root", ".")))
                                        .rollJobManager(out));
        commands.putAll(Cli.commands(rolls));
        commands.put(
                "cluster",
                new Command(
                        "cluster up|down|status                   a local multi-process Flink cluster with S3Proxy"
                                + " and kinesalite",
                        LocalCluster.USAGE,
                        LocalCluster::run));
        commands.put(
                "chaos",
                new Command(
                        "chaos [--windows N] [--kills K] [--overlap W] [--s3-faults RATE] [--s3-outage S] [--seed S]\n"
                                + "                                           kill, overlap, update and fault the job on that cluster; verify the"
                                + " output",
                        Chaos.USAGE,
                        Chaos::run));
        commands.put(
                "bench",
                new Command(
                        "bench [--events N] [--keys K] [--buckets B] [--store file|s3] [--runs R]\n"
                                + "                                           what exactly-once costs: ours vs FileSink vs a discarding sink",
                        Bench.USAGE,
                        Bench::run));
        return commands;
    }

    private static int runEmbedded(String[] args, PrintStream out) throws Exception {
        if (args.length > 0 && args[0].equals("--sql")) {
            return runSql(args, out);
        }
        JobConfig config = JobConfig.parse(args);
        out.printf(
                "running %s v%d from %s into %s (Ctrl-C stops it; complete windows in %s)%n",
                config.pipeline(),
                config.jobVersion(),
                config.source(),
                config.store(),
                "the store's " + config.pipeline() + "/" + ObjectKeys.COMPLETE_DIRECTORY);
        SnapshotJob.start(SnapshotJob.embedded(), config).getJobExecutionResult().get();
        return 0;
    }

    private static int runSql(String[] args, PrintStream out) throws Exception {
        if (args.length != 2) {
            throw new IllegalArgumentException("run --sql takes one script file, and no job flags");
        }
        Path file = Path.of(args[1]);
        SqlScript script = SqlJob.read(file);
        out.printf(
                "running %s (%d statements) embedded (Ctrl-C stops it)%n",
                file, script.statements().size());
        SqlJob.await(SqlJob.start(SnapshotJob.embedded(), script, SqlJob.name(file)));
        out.printf("%s: done, its sources ended%n", file);
        return 0;
    }
}
