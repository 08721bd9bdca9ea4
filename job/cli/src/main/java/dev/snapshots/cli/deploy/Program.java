package dev.snapshots.cli.deploy;

import dev.snapshots.job.SnapshotPipeline;
import dev.snapshots.job.config.JobConfig;
import dev.snapshots.job.config.JobOptions;
import dev.snapshots.job.sql.SqlJob;
import dev.snapshots.job.sql.SqlScript;
import dev.snapshots.store.StoreSpec;
import dev.snapshots.table.CanonicalSnapshotsOptions;
import dev.snapshots.table.CanonicalSnapshotsTableFactory;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.apache.flink.annotation.Internal;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.Configuration;

/**
 * What {@code submit}, {@code upgrade} and {@code replay} run, and what they must know of it: the
 * pipeline and job version (its job id), the store (the audit gate), and the checkpoint interval
 * (how long a checkpoint must stay the newest before a submit resumes from it). Three kinds:
 *
 * <ul>
 *   <li>the bundled job, with its flags ({@link JobOptions});
 *   <li>a SQL script ({@code --sql FILE}), known from the table its INSERT writes;
 *   <li>any jar with its own arguments (after {@code --}), named by {@code --pipeline}, {@code
 *       --job-version} and {@code --store}, which must be the sink's.
 * </ul>
 *
 * @param entryClass the class whose main runs; null for the jar's Main-Class
 * @param args the program's arguments
 * @param config the bundled job's configuration; null for the other two
 */
@Internal
record Program(
        String entryClass,
        List<String> args,
        String pipeline,
        int jobVersion,
        StoreSpec store,
        Duration checkpointInterval,
        JobConfig config) {

    static Program bundled(JobConfig config) {
        return new Program(
                null,
                config.toArgs(),
                config.pipeline(),
                config.jobVersion(),
                config.store(),
                config.get(JobOptions.CHECKPOINT_INTERVAL),
                config);
    }

    /**
     * A script's job: the text travels as an argument, because the file is on this machine and the
     * job's main runs on the JobManager.
     *
     * @throws IllegalArgumentException if the script does not write a {@code canonical-snapshots}
     *     table it declares with a pipeline, a job version and a store
     */
    static Program sql(Path file) throws IOException {
        String text = Files.readString(file);
        SqlScript script = SqlScript.parse(text);
        Configuration sink = Configuration.fromMap(script.sinkOptions());
        String connector = sink.getString("connector", null);
        if (!CanonicalSnapshotsTableFactory.IDENTIFIER.equals(connector)) {
            throw new IllegalArgumentException(
                    file
                            + ": its INSERT writes a table whose connector is "
                            + connector
                            + ", not "
                            + CanonicalSnapshotsTableFactory.IDENTIFIER
                            + ": nothing for submit to resume or audit");
        }
        required(sink, CanonicalSnapshotsOptions.STORE);
        for (String key : CLAIM_MODE_KEYS) {
            String mode = script.settings().get(key);
            if (mode != null && !mode.equalsIgnoreCase(FlinkRest.RESTORE_MODE)) {
                // A script's SET reaches the job's configuration after the run request's
                // restoreMode, and would override it.
                throw new IllegalArgumentException(
                        file
                                + ": SET '"
                                + key
                                + "' = '"
                                + mode
                                + "': a resumed job must not claim what it resumed from; submit"
                                + " restores with "
                                + FlinkRest.RESTORE_MODE
                                + " and removes older JobManagers' checkpoints");
            }
        }
        return new Program(
                SqlJob.ENTRY_CLASS,
                List.of(SqlJob.SQL_TEXT, text),
                required(sink, CanonicalSnapshotsOptions.PIPELINE),
                required(sink, CanonicalSnapshotsOptions.JOB_VERSION),
                CanonicalSnapshotsOptions.store(sink),
                Configuration.fromMap(script.settings())
                        .getOptional(CheckpointingOptions.CHECKPOINTING_INTERVAL)
                        .orElse(JobOptions.CHECKPOINT_INTERVAL.defaultValue()),
                null);
    }

    /** Flink 1.20's key for the restore mode, and the one it replaced. */
    private static final List<String> CLAIM_MODE_KEYS =
            List.of("execution.state-recovery.claim-mode", "execution.savepoint-restore-mode");

    private static <T> T required(Configuration sink, ConfigOption<T> option) {
        return sink.getOptional(option)
                .orElseThrow(
                        () ->
                                new IllegalArgumentException(
                                        "the script's "
                                                + CanonicalSnapshotsTableFactory.IDENTIFIER
                                                + " table sets no '"
                                                + option.key()
                                                + "'"));
    }

    /**
     * The new program's store and identity, checked before a running version is touched. The
     * bundled job is built here; any other program is built by the JobManager, which runs its main
     * up to the job's start: the sink's checks run as the job is built.
     *
     * @throws IllegalStateException if the bundled job is refused
     * @throws IllegalArgumentException if another program is refused
     */
    void check(FlinkRest rest, Path jar) throws IOException {
        if (config != null) {
            SnapshotPipeline.check(config);
        } else {
            rest.plan(jar, entryClass, args);
        }
    }
}
