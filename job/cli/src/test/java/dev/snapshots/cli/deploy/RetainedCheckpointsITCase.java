package dev.snapshots.cli.deploy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.snapshots.job.SnapshotJob;
import dev.snapshots.job.config.JobConfig;
import dev.snapshots.store.ObjectStore;
import dev.snapshots.store.StoreSpec;
import dev.snapshots.testkit.FaultProxy;
import dev.snapshots.testkit.S3ProxyServer;
import dev.snapshots.testkit.StoreKind;
import java.io.IOException;
import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Real checkpoints of the job, written by two JobManager incarnations into their own directories
 * under one base: the newest whole one is found across both, a checkpoint with a state file gone
 * (subsumed by a JobManager that is still stopping) is passed over for an older one.
 */
class RetainedCheckpointsITCase {
    private static final ClassLoader LOADER = RetainedCheckpointsITCase.class.getClassLoader();

    @TempDir Path base;

    /** A real run of the job, shared by the tests that copy its newest checkpoint. */
    @TempDir static Path realRun;

    private static Path realCheckpoint;

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

    /**
     * A hundred JobManager restarts, each as 'submit' and its job go through one: two looks for the
     * newest whole checkpoint (before and after the quiet wait), the resumed job's first checkpoint
     * in its own incarnation's directory, the prune, then more checkpoints with Flink subsuming all
     * but the newest 3; every seventh JobManager dies before its first checkpoint completes,
     * leaving an unfinished one. The layout is Flink's, on S3Proxy, each checkpoint a copy of a
     * real one of the job (its metadata given the checkpoint's id). What is left stays bounded, and
     * so do the store requests of each submit's search.
     */
    @Test
    @Tag("long")
    void aHundredJobManagerRestartsLeaveABoundedNumberOfCheckpointsAndListingsThatDoNotGrow()
            throws Exception {
        restarts(100);
    }

    /** The same over 30 restarts, in every build (the hundred take two minutes: -Plong). */
    @Test
    void thirtyJobManagerRestartsLeaveABoundedNumberOfCheckpointsAndListingsThatDoNotGrow()
            throws Exception {
        restarts(30);
    }

    private static void restarts(int restarts) throws Exception {
        Path real = realCheckpoint();
        S3ProxyServer s3 = S3ProxyServer.get();
        String rootUri = "s3://" + s3.createBucket("checkpoints") + "/flink/checkpoints";
        String jobId = "0123456789abcdef0123456789abcdef";
        List<Long> requestsPerSubmit = new ArrayList<>();
        try (FaultProxy counter = new FaultProxy(s3.endpoint(), 1);
                ObjectStore searched =
                        StoreSpec.parse(rootUri).withEndpoint(counter.endpoint()).open();
                ObjectStore flink = StoreSpec.parse(rootUri).withEndpoint(s3.endpoint()).open()) {
            long nextId = 1;
            for (int restart = 1; restart <= restarts; restart++) {
                String incarnation = "jm-" + restart;
                int before = counter.forwarded();
                Optional<RetainedCheckpoints.Retained> from = Optional.empty();
                for (int look = 0; look < 2; look++) {
                    from = RetainedCheckpoints.newestWhole(searched, rootUri, jobId, LOADER);
                }
                requestsPerSubmit.add((long) counter.forwarded() - before);
                if (restart > 1) {
                    assertThat(from).as("restart %d finds a whole checkpoint", restart).isPresent();
                }
                long resumedFrom = from.map(RetainedCheckpoints.Retained::checkpointId).orElse(0L);
                nextId = Math.max(nextId, resumedFrom + 1);
                if (restart % 7 == 0) { // killed while its first checkpoint was being written
                    writeCheckpoint(flink, real, incarnation, jobId, nextId, false);
                    continue;
                }
                writeCheckpoint(flink, real, incarnation, jobId, nextId, true);
                if (from.isPresent()) {
                    RetainedCheckpoints.prune(
                            flink,
                            rootUri,
                            jobId,
                            rootUri + "/" + incarnation + "/" + jobId + "/chk-" + nextId,
                            LOADER);
                }
                for (long id = nextId + 1; id <= nextId + 4; id++) {
                    writeCheckpoint(flink, real, incarnation, jobId, id, true);
                    deleteCheckpoint(flink, incarnation, jobId, id - 3); // subsumed
                }
                nextId += 5;
            }
            List<String> metadata = new ArrayList<>();
            List<String> incarnations = new ArrayList<>();
            flink.list(
                    "",
                    o -> {
                        if (o.key().endsWith("/_metadata")) {
                            metadata.add(o.key());
                        }
                    });
            flink.listDirectories("", incarnations::add);
            System.out.printf(
                    "FIGURES checkpoints after %d JobManager restarts: %d _metadata in %d incarnations %s;"
                            + " store requests of a submit's search at restarts 2, 10, %d, %d: %d, %d, %d, %d%n",
                    restarts,
                    metadata.size(),
                    incarnations.size(),
                    incarnations,
                    restarts / 2,
                    restarts,
                    requestsPerSubmit.get(1),
                    requestsPerSubmit.get(9),
                    requestsPerSubmit.get(restarts / 2 - 1),
                    requestsPerSubmit.get(restarts - 1));
            // The one resumed from (3 retained), this one's (3), and an unfinished one at most.
            assertThat(incarnations).hasSizeLessThanOrEqualTo(3);
            assertThat(metadata).hasSizeLessThanOrEqualTo(6);
            // Two cycles of seven restarts (one with a JobManager killed early) set the level.
            long early = requestsPerSubmit.subList(1, 15).stream().max(Long::compare).orElseThrow();
            assertThat(requestsPerSubmit.subList(15, restarts))
                    .as("store requests of each submit's search, restarts 16 to %d", restarts)
                    .allSatisfy(n -> assertThat(n).isLessThanOrEqualTo(early));
        }
    }

    /**
     * What a prune keeps, once the job has checkpoint 10 of its own in jm-5: its own incarnation,
     * those started after it (a successor taking over), every savepoint and other jobs. What it
     * removes: every incarnation started before it, whatever their checkpoint ids (jm-4's 12 is of
     * a lineage of its own), and one that died before completing a checkpoint.
     */
    @Test
    void aPruneKeepsTheServingIncarnationItsSuccessorsAndEverySavepoint() throws Exception {
        Path real = realCheckpoint();
        String jobId = "0123456789abcdef0123456789abcdef";
        StoreSpec root = StoreSpec.parse(base.resolve("checkpoints").toUri().toString());
        String rootUri = root.uri().toString().replaceAll("/+$", "");
        try (ObjectStore store = root.open()) {
            writeCheckpoint(store, real, "jm-1", jobId, 4, true);
            writeCheckpoint(store, real, "jm-1", jobId, 5, true);
            store.putIfAbsent(
                    "jm-1/" + jobId + "/savepoints/savepoint-012345-abc/_metadata",
                    Files.readAllBytes(real.resolve("_metadata")),
                    Map.of());
            writeCheckpoint(store, real, "jm-2", jobId, 7, false); // died before completing it
            writeCheckpoint(store, real, "jm-3", jobId, 9, true); // resumed from
            writeCheckpoint(store, real, "jm-4", jobId, 12, true); // a lineage of its own
            writeCheckpoint(store, real, "jm-5", jobId, 10, true); // here
            writeCheckpoint(store, real, "jm-11", jobId, 11, true); // a successor
            writeCheckpoint(
                    store,
                    real,
                    "jm-0",
                    "fedcba9876543210fedcba9876543210",
                    2,
                    true); // another job

            RetainedCheckpoints.Pruned pruned =
                    RetainedCheckpoints.prune(
                            store, rootUri, jobId, rootUri + "/jm-5/" + jobId + "/chk-10", LOADER);

            assertThat(pruned.incarnations())
                    .containsExactlyInAnyOrder("jm-1", "jm-2", "jm-3", "jm-4");
            List<String> left = new ArrayList<>();
            store.list("", o -> left.add(o.key()));
            assertThat(left)
                    .noneMatch(k -> k.startsWith("jm-1/" + jobId + "/chk-"))
                    .noneMatch(k -> k.startsWith("jm-2/") || k.startsWith("jm-3/"))
                    .noneMatch(k -> k.startsWith("jm-4/"))
                    .contains("jm-1/" + jobId + "/savepoints/savepoint-012345-abc/_metadata")
                    .anyMatch(k -> k.startsWith("jm-5/" + jobId + "/chk-10/"))
                    .anyMatch(k -> k.startsWith("jm-11/" + jobId + "/chk-11/"))
                    .anyMatch(k -> k.startsWith("jm-0/"));
        }
    }

    @Test
    void incarnationsStartInTheOrderOfTheirNames() {
        assertThat(
                        List.of(
                                        "jm-10",
                                        "jm-9",
                                        "jm-20261204T211020Z-00aa",
                                        "jm-20261204T211019Z-ff00")
                                .stream()
                                .sorted(RetainedCheckpoints.STARTED)
                                .toList())
                .containsExactly(
                        "jm-9", "jm-10", "jm-20261204T211019Z-ff00", "jm-20261204T211020Z-00aa");
    }

    /**
     * Writes checkpoint {@code id} of {@code jobId} in {@code incarnation}'s directory as Flink
     * lays it out: a copy of the real checkpoint's state files, then (if it completed) its
     * metadata, which carries the id.
     */
    private static void writeCheckpoint(
            ObjectStore store,
            Path real,
            String incarnation,
            String jobId,
            long id,
            boolean completed)
            throws IOException {
        String dir = incarnation + "/" + jobId + "/chk-" + id + "/";
        try (Stream<Path> files = Files.list(real)) {
            for (Path f : files.sorted().toList()) {
                byte[] bytes = Files.readAllBytes(f);
                if (f.getFileName().toString().equals("_metadata")) {
                    if (!completed) {
                        continue;
                    }
                    // magic number, format version, then the checkpoint id
                    ByteBuffer.wrap(bytes).putLong(8, id);
                }
                store.putIfAbsent(dir + f.getFileName(), bytes, Map.of());
            }
        }
    }

    private static void deleteCheckpoint(
            ObjectStore store, String incarnation, String jobId, long id) throws IOException {
        List<String> keys = new ArrayList<>();
        store.list(incarnation + "/" + jobId + "/chk-" + id + "/", o -> keys.add(o.key()));
        for (String key : keys) {
            store.delete(key);
        }
    }

    /**
     * The newest checkpoint of a real run of the job; its state files are named relative to it, so
     * a copy elsewhere is whole.
     */
    private static synchronized Path realCheckpoint() throws Exception {
        if (realCheckpoint != null) {
            return realCheckpoint;
        }
        Path dir = realRun.resolve("jm-real");
        runWithCheckpoints(dir, null);
        StoreSpec spec = StoreSpec.parse(dir.toUri().toString());
        Optional<RetainedCheckpoints.Retained> newest =
                RetainedCheckpoints.newestWhole(spec, jobDirectory(dir), LOADER);
        assertThat(newest).isPresent();
        Path checkpoint = Path.of(URI.create(newest.get().path()));
        try (Stream<Path> files = Files.list(checkpoint)) {
            assertThat(files.count()).as("state files besides the metadata").isGreaterThan(1);
        }
        realCheckpoint = checkpoint;
        return checkpoint;
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
