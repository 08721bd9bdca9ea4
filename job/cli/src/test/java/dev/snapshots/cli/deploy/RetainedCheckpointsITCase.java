package dev.snapshots.cli.deploy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.snapshots.job.SnapshotJob;
import dev.snapshots.job.config.JobConfig;
import dev.snapshots.store.StoreSpec;
import dev.snapshots.testkit.StoreKind;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Real checkpoints of the job, written by two JobManager incarnations into their own directories
 * under one base: the newest whole one is found across both, a checkpoint with a state file gone
 * (subsumed by a JobManager that is still stopping) is passed over for an older one.
 */
class RetainedCheckpointsITCase {
    @TempDir Path base;

    @Test
    void theNewestWholeCheckpointIsFoundAcrossIncarnationsAndABrokenOneIsPassedOver()
            throws Exception {
        StoreSpec root =
                StoreSpec.parse(
                        RetainedCheckpoints.searchRoot(base.resolve("jm-new").toUri().toString()));
        runWithCheckpoints(base.resolve("jm-old"), null);
        String jobId = jobDirectory(base.resolve("jm-old"));
        // The new incarnation resumes from the old one's newest, so checkpoint ids carry on.
        Optional<RetainedCheckpoints.Retained> old =
                RetainedCheckpoints.newestWhole(root, jobId, getClass().getClassLoader());
        assertThat(old).as("found in the old incarnation").isPresent();
        runWithCheckpoints(base.resolve("jm-new"), old.get().path());

        Optional<RetainedCheckpoints.Retained> newest =
                RetainedCheckpoints.newestWhole(root, jobId, getClass().getClassLoader());
        assertThat(newest).as("found").isPresent();
        assertThat(newest.get().path()).contains("/jm-new/");
        long newestId = newest.get().checkpointId();
        assertThat(newestId).isGreaterThan(old.get().checkpointId());

        // The newest loses a state file, as while its JobManager subsumes it: the next older is
        // taken.
        Path broken = Path.of(URI.create(newest.get().path()));
        deleteAStateFile(broken);
        Optional<RetainedCheckpoints.Retained> fallback =
                RetainedCheckpoints.newestWhole(root, jobId, getClass().getClassLoader());
        assertThat(fallback).isPresent();
        assertThat(fallback.get().checkpointId()).isLessThan(newestId);
        assertThat(fallback.get().path()).doesNotContain(broken.getFileName().toString() + "/");

        // With every one broken, resuming from the start would recompute the whole stream
        // silently: it is an error that names the newest and what is wrong with it.
        try (Stream<Path> all = Files.walk(base)) {
            for (Path p :
                    all.filter(f -> f.getFileName().toString().equals("_metadata")).toList()) {
                deleteAStateFile(p.getParent());
            }
        }
        assertThatThrownBy(
                        () ->
                                RetainedCheckpoints.newestWhole(
                                        root, jobId, getClass().getClassLoader()))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("none is whole")
                .hasMessageContaining("jm-new/" + jobId + "/chk-" + newestId + ": state file");
    }

    private static void deleteAStateFile(Path checkpoint) throws IOException {
        try (Stream<Path> files = Files.list(checkpoint)) {
            Optional<Path> state =
                    files.filter(p -> !p.getFileName().toString().equals("_metadata")).findFirst();
            if (state.isPresent()) {
                Files.delete(state.get());
            }
        }
    }

    @Test
    void theSearchRootIsTheParentOfAnIncarnationsDirectoryOnly() {
        assertThat(RetainedCheckpoints.searchRoot("s3://b/flink/checkpoints/jm-4f2a/"))
                .isEqualTo("s3://b/flink/checkpoints");
        assertThat(RetainedCheckpoints.searchRoot("s3://b/flink/checkpoints"))
                .isEqualTo("s3://b/flink/checkpoints");
    }

    /**
     * Runs the job under one fixed job id, its state in files (none inline), from {@code from} if
     * not null, until it has retained three checkpoints.
     */
    private static void runWithCheckpoints(Path dir, String from) throws Exception {
        Configuration conf = new Configuration();
        conf.setString("state.checkpoint-storage", "filesystem");
        conf.setString("state.checkpoints.dir", dir.toUri().toString());
        conf.setString("state.checkpoints.num-retained", "3");
        conf.setString("state.storage.fs.memory-threshold", "0");
        conf.setString(
                "execution.checkpointing.externalized-checkpoint-retention",
                "RETAIN_ON_CANCELLATION");
        conf.setString("$internal.pipeline.job-id", "0123456789abcdef0123456789abcdef");
        if (from != null) {
            conf.setString("execution.state-recovery.path", from);
        }
        JobConfig config =
                JobConfig.parse(
                        new String[] {
                            "--store",
                            StoreKind.FILESYSTEM.fresh().uri().toString(),
                            "--windows",
                            "0",
                            "--events-per-second",
                            "500",
                            "--checkpoint-interval",
                            "200ms",
                            "--parallelism",
                            "1"
                        });
        JobClient job =
                SnapshotJob.start(StreamExecutionEnvironment.getExecutionEnvironment(conf), config);
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(1);
        while (checkpoints(dir) < 3) {
            assertThat(System.nanoTime())
                    .as("three checkpoints under %s", dir)
                    .isLessThan(deadline);
            Thread.sleep(100);
        }
        job.cancel().get(1, TimeUnit.MINUTES);
    }

    private static long checkpoints(Path dir) throws Exception {
        if (!Files.isDirectory(dir)) {
            return 0;
        }
        try (Stream<Path> all = Files.walk(dir)) {
            return all.filter(p -> p.getFileName().toString().equals("_metadata")).count();
        }
    }

    private static String jobDirectory(Path dir) throws Exception {
        try (Stream<Path> jobs = Files.list(dir)) {
            List<Path> all = jobs.toList();
            assertThat(all).as("one job directory under %s", dir).hasSize(1);
            return all.get(0).getFileName().toString();
        }
    }
}
