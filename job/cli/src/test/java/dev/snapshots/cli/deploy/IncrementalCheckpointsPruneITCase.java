package dev.snapshots.cli.deploy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import dev.snapshots.store.ObjectStore;
import dev.snapshots.store.StoreSpec;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.apache.flink.api.common.JobStatus;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.functions.RichMapFunction;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;
import org.apache.flink.util.ExceptionUtils;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Real incremental RocksDB checkpoints: a keyed job checkpoints under incarnation jm-1, is
 * cancelled (its checkpoints retained), and resumes under jm-2 from jm-1's newest, as 'submit'
 * resumes it. Once jm-2 has a checkpoint of its own, 'submit' prunes; then a task fails, and the
 * job must restore from jm-2's checkpoint. Under NO_CLAIM (what FlinkRest asks for) jm-2's first
 * checkpoint is a full one: it names no file of jm-1, which goes. Under CLAIM, on Flink 1.20, it
 * names jm-1's {@code shared/} SST files, which the prune must keep: removed, the restore fails on
 * a missing file.
 */
class IncrementalCheckpointsPruneITCase {
    private static final String JOB_ID = "00000000000000000000000000c1a1e5";
    private static final ClassLoader LOADER =
            IncrementalCheckpointsPruneITCase.class.getClassLoader();

    /** A task of the running job fails once when set: the job restores from its latest. */
    private static final AtomicBoolean FAIL = new AtomicBoolean();

    private static final AtomicInteger FAILURES = new AtomicInteger();

    @TempDir Path base;

    private final List<JobClient> jobs = new ArrayList<>();

    @AfterEach
    void cancel() {
        for (JobClient job : jobs) {
            try {
                job.cancel().get(1, TimeUnit.MINUTES);
            } catch (Exception e) {
                // ended already
            }
        }
    }

    @Test
    void resumedWithNoClaimTheOldIncarnationIsPrunedAndTheJobStillFailsOver() throws Exception {
        Resumed r = resume("NO_CLAIM");

        assertThat(r.pruned.incarnations()).containsExactly("jm-1");
        try (Stream<Path> left = Files.walk(base.resolve("jm-1"))) {
            assertThat(left.filter(Files::isRegularFile).toList())
                    .as("jm-1 after the prune")
                    .isEmpty();
        }
        failOverAndAwaitACheckpoint(r);
    }

    @Test
    void resumedWithClaimTheOldIncarnationIsKeptWhileItsSharedFilesAreNamed() throws Exception {
        Resumed r = resume("CLAIM");

        // Flink 1.20's first checkpoint after a CLAIM restore names jm-1's shared files; 2.3's
        // names none (measured: it uploads its own). The checkpoint's metadata holds each file's
        // path as text, which says which, independently of the prune's own reading of it.
        boolean named =
                new String(
                                Files.readAllBytes(Path.of(URI.create(r.own + "/_metadata"))),
                                StandardCharsets.ISO_8859_1)
                        .contains("/jm-1/");
        if (named) {
            assertThat(r.pruned.incarnations()).as("pruned; jm-1's files are named").isEmpty();
        } else {
            assertThat(r.pruned.incarnations())
                    .as("pruned; no file of jm-1 is named")
                    .containsExactly("jm-1");
        }
        failOverAndAwaitACheckpoint(r);
    }

    private record Resumed(JobClient job, String own, RetainedCheckpoints.Pruned pruned) {}

    private Resumed resume(String restoreMode) throws Exception {
        String rootUri = base.toUri().toString().replaceAll("/+$", "");
        JobClient first = start("jm-1", null, null);
        awaitCheckpoint("jm-1", 3);
        first.cancel().get(1, TimeUnit.MINUTES);
        Optional<RetainedCheckpoints.Retained> from =
                RetainedCheckpoints.newestWhole(StoreSpec.parse(rootUri), JOB_ID, LOADER);
        assertThat(from).isPresent();
        assertThat(sharedFiles()).as("jm-1's incremental checkpoint").isPositive();

        JobClient second = start("jm-2", from.get().path(), restoreMode);
        long own = awaitCheckpoint("jm-2", from.get().checkpointId() + 1);
        String ownPath = rootUri + "/jm-2/" + JOB_ID + "/chk-" + own;
        try (ObjectStore store = StoreSpec.parse(rootUri).open()) {
            return new Resumed(
                    second,
                    ownPath,
                    RetainedCheckpoints.prune(store, rootUri, JOB_ID, ownPath, LOADER));
        }
    }

    private void failOverAndAwaitACheckpoint(Resumed r) throws Exception {
        int failures = FAILURES.get();
        FAIL.set(true);
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(2);
        long atFailure = Long.MAX_VALUE;
        while (newestCheckpoint("jm-2") <= atFailure) {
            if (atFailure == Long.MAX_VALUE && FAILURES.get() > failures) {
                atFailure = newestCheckpoint("jm-2");
            }
            JobStatus status = r.job.getJobStatus().get();
            if (status.isGloballyTerminalState()) {
                try {
                    r.job.getJobExecutionResult().get();
                } catch (ExecutionException e) {
                    fail(
                            "the job could not restore after its failover: "
                                    + ExceptionUtils.stringifyException(e)
                                            .lines()
                                            .filter(l -> l.startsWith("Caused by"))
                                            .reduce((a, b) -> b)
                                            .orElse(e.toString()));
                }
                fail("the job ended " + status);
            }
            assertThat(System.nanoTime())
                    .as("a checkpoint after the failover")
                    .isLessThan(deadline);
            Thread.sleep(100);
        }
        assertThat(r.job.getJobStatus().get()).isEqualTo(JobStatus.RUNNING);
    }

    private JobClient start(String incarnation, String from, String restoreMode) throws Exception {
        Configuration conf = new Configuration();
        conf.setString("state.backend.type", "rocksdb");
        conf.setString("execution.checkpointing.incremental", "true");
        conf.setString("execution.checkpointing.dir", base.resolve(incarnation).toUri().toString());
        conf.setString("execution.checkpointing.num-retained", "2");
        conf.setString("execution.checkpointing.interval", "300ms");
        // Every SST file a file of its own, never inline in the metadata.
        conf.setString("state.storage.fs.memory-threshold", "0");
        conf.setString(
                "execution.checkpointing.externalized-checkpoint-retention",
                "RETAIN_ON_CANCELLATION");
        conf.setString("restart-strategy.type", "fixed-delay");
        conf.setString("restart-strategy.fixed-delay.attempts", "2");
        conf.setString("restart-strategy.fixed-delay.delay", "200ms");
        conf.setString("$internal.pipeline.job-id", JOB_ID);
        if (from != null) {
            conf.setString("execution.state-recovery.path", from);
            conf.setString("execution.state-recovery.claim-mode", restoreMode);
        }
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
        env.setParallelism(1);
        env.fromSequence(0, Long.MAX_VALUE)
                .map(IncrementalCheckpointsPruneITCase::slowly)
                .keyBy(n -> n % 512)
                .map(new Count())
                .sinkTo(new DiscardingSink<>());
        JobClient job = env.executeAsync("incremental " + incarnation);
        jobs.add(job);
        return job;
    }

    private static long slowly(long n) throws InterruptedException {
        if (n % 20 == 0) {
            Thread.sleep(1);
        }
        return n;
    }

    /** Keyed state that changes with every checkpoint: each one writes new SST files. */
    private static final class Count extends RichMapFunction<Long, Long> {
        private transient ValueState<Long> count;

        @Override
        public void open(OpenContext context) {
            count = getRuntimeContext().getState(new ValueStateDescriptor<>("count", Long.class));
        }

        @Override
        public Long map(Long n) throws Exception {
            if (FAIL.compareAndSet(true, false)) {
                FAILURES.incrementAndGet();
                throw new IllegalStateException(
                        "a task fails: the job restores from its latest checkpoint");
            }
            long next = (count.value() == null ? 0 : count.value()) + n;
            count.update(next);
            return next;
        }
    }

    /**
     * Waits for a completed checkpoint with an id of at least {@code id} in the incarnation's
     * directory.
     */
    private long awaitCheckpoint(String incarnation, long id) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(2);
        long newest;
        while ((newest = newestCheckpoint(incarnation)) < id) {
            assertThat(System.nanoTime())
                    .as("checkpoint %d in %s", id, incarnation)
                    .isLessThan(deadline);
            Thread.sleep(100);
        }
        return newest;
    }

    private long newestCheckpoint(String incarnation) throws Exception {
        Path dir = base.resolve(incarnation).resolve(JOB_ID);
        if (!Files.isDirectory(dir)) {
            return -1;
        }
        try (Stream<Path> all = Files.list(dir)) {
            return all.filter(p -> p.getFileName().toString().startsWith("chk-"))
                    .filter(p -> Files.exists(p.resolve("_metadata")))
                    .mapToLong(p -> Long.parseLong(p.getFileName().toString().substring(4)))
                    .max()
                    .orElse(-1);
        }
    }

    private long sharedFiles() throws Exception {
        try (Stream<Path> shared =
                Files.list(base.resolve("jm-1").resolve(JOB_ID).resolve("shared"))) {
            return shared.count();
        }
    }
}
