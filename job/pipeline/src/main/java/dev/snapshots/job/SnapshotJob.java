package dev.snapshots.job;

import dev.snapshots.job.config.JobConfig;
import dev.snapshots.job.config.JobOptions;
import dev.snapshots.key.PartKind;
import dev.snapshots.progress.CompletionPointer;
import dev.snapshots.store.ObjectStore;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.UUID;
import org.apache.flink.annotation.Internal;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.streaming.api.environment.CheckpointConfig;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The job's entry point on a cluster ({@code flink run snapshots-job.jar --store s3://...}) and
 * behind {@code ./snapshots run}. Flags: {@link JobConfig}.
 */
@Internal
public final class SnapshotJob {
    private static final Logger LOG = LoggerFactory.getLogger(SnapshotJob.class);

    private SnapshotJob() {}

    public static void main(String[] args) throws Exception {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        JobConfig config;
        try {
            // The flags over the cluster's snapshots.* settings (flink-conf, FLINK_PROPERTIES) over
            // the defaults.
            config = JobConfig.resolve(env.getConfiguration(), args);
        } catch (IllegalArgumentException e) {
            System.err.println("error: " + e.getMessage());
            System.err.println("flags:\n" + JobConfig.usage());
            System.exit(2);
            return;
        }
        configure(env, config);
        env.execute(name(config));
    }

    /** Builds the job on {@code env} and starts it; the caller waits or watches. */
    public static JobClient start(StreamExecutionEnvironment env, JobConfig config)
            throws Exception {
        configure(env, config);
        return env.executeAsync(name(config));
    }

    static void configure(StreamExecutionEnvironment env, JobConfig config) {
        requireSchemaOfVersion(config);
        environment(env, config);
        SnapshotPipeline.build(env, config, Sources.create(env, config));
    }

    /**
     * One job version holds one schema: refused here, before submitting, rather than by every
     * writer of a crash-looping job. A store out of reach now is left to the writers' own check.
     */
    static void requireSchemaOfVersion(JobConfig config) {
        try (ObjectStore store = config.store().open()) {
            CompletionPointer.requireSchema(
                    store,
                    PartKind.SNAPSHOT,
                    config.pipeline(),
                    config.jobVersion(),
                    config.schemaVersion());
        } catch (IllegalStateException e) {
            throw new IllegalArgumentException(
                    e.getMessage() + " (--job-version " + (config.jobVersion() + 1) + ")", e);
        } catch (IOException | UncheckedIOException e) {
            LOG.warn(
                    "Could not read which schema {} v{} is written with, before submitting: {}",
                    config.pipeline(),
                    config.jobVersion(),
                    e.toString());
        }
    }

    /** Parallelism and checkpointing, before the pipeline is built on {@code env}. */
    static void environment(StreamExecutionEnvironment env, JobConfig config) {
        config.parallelism().ifPresent(env::setParallelism);
        env.setMaxParallelism(SnapshotPipeline.MAX_PARALLELISM);
        env.enableCheckpointing(config.get(JobOptions.CHECKPOINT_INTERVAL).toMillis());
        // Keep the last checkpoint when the job is cancelled: a restart resumes from it.
        env.getCheckpointConfig()
                .setExternalizedCheckpointCleanup(
                        CheckpointConfig.ExternalizedCheckpointCleanup.RETAIN_ON_CANCELLATION);
    }

    static String name(JobConfig config) {
        return "snapshots " + config.pipeline() + " v" + config.jobVersion();
    }

    /**
     * Embedded Flink when run from the launcher; the surrounding cluster when there is one (tests).
     */
    public static StreamExecutionEnvironment embedded() {
        return StreamExecutionEnvironment.getExecutionEnvironment(embeddedConfiguration());
    }

    /**
     * Checkpoints of an embedded run go to files under the temp directory: the default, the
     * JobManager's memory, refuses any operator state over 5 MB, and a window of many keys is more.
     */
    public static Configuration embeddedConfiguration() {
        Configuration conf = new Configuration();
        conf.setString("state.checkpoint-storage", "filesystem");
        conf.setString(
                "state.checkpoints.dir",
                Path.of(
                                System.getProperty("java.io.tmpdir"),
                                "snapshots-checkpoints",
                                UUID.randomUUID().toString())
                        .toUri()
                        .toString());
        return conf;
    }
}
