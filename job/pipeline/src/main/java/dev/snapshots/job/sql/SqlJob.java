package dev.snapshots.job.sql;

import dev.snapshots.job.config.JobOptions;
import dev.snapshots.sink.JunctionlessIds;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import org.apache.flink.annotation.Internal;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.DeploymentOptions;
import org.apache.flink.configuration.ExternalizedCheckpointRetention;
import org.apache.flink.configuration.PipelineOptions;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.api.bridge.java.StreamStatementSet;
import org.apache.flink.table.api.bridge.java.StreamTableEnvironment;
import org.apache.flink.table.api.config.TableConfigOptions;

/**
 * A {@link SqlScript} as a streaming job: behind {@code ./snapshots run --sql FILE}, and on a
 * cluster {@code flink run -c dev.snapshots.job.sql.SqlJob snapshots-job.jar --sql FILE}. {@code
 * snapshots submit --sql FILE} runs it with the script's text ({@code --sql-text TEXT}): the file
 * is on the operator's machine, not the JobManager's.
 *
 * <p>Defaults a script's {@code SET}s override: checkpoints every {@link
 * JobOptions#CHECKPOINT_INTERVAL} (the sink publishes at checkpoints), retained when the job is
 * cancelled, as the telemetry job's; and the session time zone UTC, so that TIMESTAMP_LTZ rows fall
 * into the same windows on every machine.
 */
@Internal
public final class SqlJob {
    private SqlJob() {}

    public static void main(String[] args) throws Exception {
        if (args.length != 2 || !List.of("--sql", SQL_TEXT).contains(args[0])) {
            System.err.println("usage: SqlJob --sql FILE | SqlJob " + SQL_TEXT + " TEXT");
            System.exit(2);
            return;
        }
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        JobClient job =
                args[0].equals(SQL_TEXT)
                        ? start(env, SqlScript.parse(args[1]), "snapshots sql")
                        : start(env, read(Path.of(args[1])), name(Path.of(args[1])));
        // A detached submission (a jar run over REST, flink run -d) cannot wait for the result.
        if (env.getConfiguration().get(DeploymentOptions.ATTACHED)) {
            await(job);
        }
    }

    /** The flag that hands the job a script's text. */
    public static final String SQL_TEXT = "--sql-text";

    /**
     * This class's name, as a constant: a deploy tool names the entry class without loading it, and
     * with it the Table API, which only a Flink cluster has.
     */
    public static final String ENTRY_CLASS = "dev.snapshots.job.sql.SqlJob";

    /**
     * Waits until the job ends.
     *
     * @throws IllegalStateException if it failed, with every cause's message: the one that matters
     *     (a refusal of the table sink, say) is the innermost
     */
    public static void await(JobClient job) throws InterruptedException {
        try {
            job.getJobExecutionResult().get();
        } catch (ExecutionException e) {
            throw new IllegalStateException("the job failed: " + messages(e.getCause()), e);
        }
    }

    public static SqlScript read(Path file) throws IOException {
        return SqlScript.parse(Files.readString(file));
    }

    /** The job's name for a script file. */
    public static String name(Path file) {
        return "snapshots sql " + file.getFileName();
    }

    /**
     * Runs the script's statements on {@code env} and starts its INSERT; the caller waits or
     * watches.
     *
     * @throws IllegalArgumentException if Flink refuses a statement (the table sink's refusals
     *     among them), naming its line and every cause
     */
    public static JobClient start(StreamExecutionEnvironment env, SqlScript script, String name) {
        Configuration settings = new Configuration();
        settings.set(
                CheckpointingOptions.CHECKPOINTING_INTERVAL,
                JobOptions.CHECKPOINT_INTERVAL.defaultValue());
        settings.set(
                CheckpointingOptions.EXTERNALIZED_CHECKPOINT_RETENTION,
                ExternalizedCheckpointRetention.RETAIN_ON_CANCELLATION);
        settings.set(TableConfigOptions.LOCAL_TIME_ZONE, "UTC");
        settings.set(PipelineOptions.NAME, name);
        script.settings().forEach(settings::setString);
        env.configure(settings);
        StreamTableEnvironment tables = StreamTableEnvironment.create(env);
        tables.getConfig().addConfiguration(settings);
        // The INSERT is planned into the environment and started from it, as a job jar's main is.
        StreamStatementSet insert = tables.createStatementSet();
        for (SqlScript.Statement statement : script.statements()) {
            if (statement.kind() == SqlScript.Kind.SET) {
                continue;
            }
            try {
                if (statement.kind() == SqlScript.Kind.INSERT) {
                    insert.addInsertSql(statement.text());
                    insert.attachAsDataStream();
                } else {
                    tables.executeSql(statement.text());
                }
            } catch (RuntimeException e) {
                throw new IllegalArgumentException(
                        "line " + statement.line() + ": " + messages(e), e);
            }
        }
        // A savepoint 0.2.0 took of a script reading a snapshots-kinesis table restores.
        JunctionlessIds.keep(env);
        try {
            return env.executeAsync(name);
        } catch (Exception e) {
            throw new IllegalStateException("the INSERT started no job: " + messages(e), e);
        }
    }

    /** An exception's message and its causes', each once: Flink's refusals come wrapped. */
    private static String messages(Throwable e) {
        List<String> messages = new ArrayList<>();
        for (Throwable t = e; t != null; t = t.getCause()) {
            String message = t.getMessage();
            if (message != null && messages.stream().noneMatch(m -> m.contains(message.strip()))) {
                messages.add(message.strip());
            }
        }
        return String.join("\n  caused by: ", messages);
    }
}
