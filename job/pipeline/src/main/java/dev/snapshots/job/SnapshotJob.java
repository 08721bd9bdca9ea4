package dev.snapshots.job;

import dev.snapshots.job.config.JobConfig;
import dev.snapshots.job.config.JobOptions;
import java.nio.file.Path;
import java.util.UUID;
import org.apache.flink.annotation.Internal;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.ExternalizedCheckpointRetention;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;

/**
 * The job's entry point on a cluster ({@code flink run snapshots-job.jar --store s3://...}) and
 * behind {@code ./snapshots run}. Flags: {@link JobConfig}.
 */
@Internal
public final class SnapshotJob {
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
        environment(env, config);
        SnapshotPipeline.build(env, config, Sources.create(env, config));
    }

    /** Parallelism and checkpointing, before the pipeline is built on {@code env}. */
    static void environment(StreamExecutionEnvironment env, JobConfig config) {
        config.parallelism().ifPresent(env::setParallelism);
        env.setMaxParallelism(SnapshotPipeline.MAX_PARALLELISM);
        env.enableCheckpointing(config.get(JobOptions.CHECKPOINT_INTERVAL).toMillis());
        // Keep the last checkpoint when the job is cancelled: a restart resumes from it.
        env.getCheckpointConfig()
                .setExternalizedCheckpointRetention(
                        ExternalizedCheckpointRetention.RETAIN_ON_CANCELLATION);
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
