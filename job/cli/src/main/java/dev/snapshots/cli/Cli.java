package dev.snapshots.cli;

import dev.snapshots.cli.deploy.JobLifecycle;
import dev.snapshots.cli.deploy.ScaleInProtection;
import java.io.PrintStream;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.flink.annotation.Internal;

/**
 * {@code snapshots COMMAND [flags]}, the operator's commands: what the image's entrypoint runs, and
 * what {@code ./snapshots} offers beside the harness's own ({@code
 * dev.snapshots.harness.Snapshots}).
 */
@Internal
public final class Cli {
    /** What a command does with its flags; returns the exit status. */
    public interface Action {
        int run(String[] args, PrintStream out) throws Exception;
    }

    /**
     * A command: its usage line in the overview, its whole usage for {@code --help}, what it does.
     */
    public record Command(String summary, String usage, Action action) {}

    private Cli() {}

    public static void main(String[] args) {
        System.exit(run(args, System.out, System.err, commands(Map.of()), "snapshots"));
    }

    /** The operator's commands; an upgrade's {@code --roll} may name one of {@code rolls}. */
    public static Map<String, Command> commands(Map<String, JobLifecycle.Roll> rolls) {
        Map<String, Command> commands = new LinkedHashMap<>();
        commands.put(
                "inspect",
                new Command(
                        "inspect STORE_URI [--endpoint URL] [--json | --html OUT.html]   windows, parts, rows,"
                                + " fingerprints and completion pointers; --html: a page of every window and bucket",
                        Inspect.USAGE,
                        Inspect::run));
        commands.put(
                "audit",
                new Command(
                        "audit STORE_URI [--endpoint URL] [--json]     exit 0 clean, 1 findings, 2 could not scan",
                        Audit.USAGE,
                        Audit::run));
        commands.put(
                "ddl",
                new Command(
                        "ddl STORE_URI --pipeline P --job-version N     a view of the complete"
                                + " windows of the promoted version (Athena, Spark, Trino)",
                        Ddl.USAGE,
                        Ddl::run));
        for (String op :
                List.of("submit", "upgrade", "replay", "promote", "release", "savepoint")) {
            commands.put(
                    op,
                    new Command(
                            op.equals("submit")
                                    ? "submit | upgrade | replay | promote | release | savepoint   run and operate"
                                            + " the job on a Flink cluster (local or ECS)"
                                    : null,
                            JobLifecycle.USAGE,
                            (args, out) -> JobLifecycle.run(op, args, out, rolls)));
        }
        commands.put(
                "protect",
                new Command(
                        "protect --rest URL                       ECS task scale-in protection for a TaskManager"
                                + " (a sidecar)",
                        ScaleInProtection.USAGE,
                        ScaleInProtection::run));
        return commands;
    }

    /**
     * Runs {@code args[0]} of {@code commands}; a bad command line is one clear line and exit 2,
     * never a stack trace.
     */
    public static int run(
            String[] args,
            PrintStream out,
            PrintStream err,
            Map<String, Command> commands,
            String program) {
        if (args.length == 0
                || args[0].equals("--help")
                || args[0].equals("-h")
                || args[0].equals("help")) {
            out.println(usage(commands, program));
            return args.length == 0 ? 2 : 0;
        }
        Command command = commands.get(args[0]);
        if (command == null) {
            err.println("error: unknown command '" + args[0] + "'\n\n" + usage(commands, program));
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
            err.println("(" + program + " " + args[0] + " --help lists the flags)");
            return 2;
        } catch (Exception e) {
            err.println("error: " + e);
            return 1;
        }
    }

    private static String usage(Map<String, Command> commands, String program) {
        StringBuilder sb =
                new StringBuilder("usage: " + program + " COMMAND [flags]\n\ncommands:\n");
        commands.values().stream()
                .filter(c -> c.summary() != null)
                .forEach(c -> sb.append("  ").append(c.summary()).append('\n'));
        return sb.append("\nEvery command takes --help.").toString();
    }
}
