package dev.snapshots.harness.bench;

import dev.snapshots.format.PartEncoding;
import dev.snapshots.job.WindowAggregate;
import dev.snapshots.key.ObjectKeys;
import dev.snapshots.key.PartMetadata;
import dev.snapshots.key.WorkIdentity;
import dev.snapshots.sink.CanonicalSnapshotSink;
import dev.snapshots.sink.EncodedPart;
import dev.snapshots.sink.PointerRecorder;
import dev.snapshots.sink.SnapshotCommittable;
import dev.snapshots.store.Chunks;
import dev.snapshots.store.ObjectStore;
import dev.snapshots.store.StoreSpec;
import dev.snapshots.testkit.TestCommitRequest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.IntSupplier;
import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.JobInfo;
import org.apache.flink.api.common.JobInfoImpl;
import org.apache.flink.api.common.TaskInfo;
import org.apache.flink.api.common.TaskInfoImpl;
import org.apache.flink.api.connector.sink2.Committer;
import org.apache.flink.api.connector.sink2.CommitterInitContext;
import org.apache.flink.metrics.SimpleCounter;
import org.apache.flink.metrics.groups.SinkCommitterMetricGroup;
import org.apache.flink.metrics.groups.UnregisteredMetricsGroup;
import org.apache.flink.runtime.metrics.groups.InternalSinkCommitterMetricGroup;
import org.apache.flink.streaming.api.connector.sink2.CommittableMessage;
import org.apache.flink.streaming.api.connector.sink2.CommittableSummary;
import org.apache.flink.streaming.api.connector.sink2.CommittableWithLineage;

/**
 * Production's commit shape without the job: checkpoints every 10 s, one window of B parts every
 * five minutes, P committers (as many as writers, each committing its own writer's committables,
 * all at once), then the sink's post-commit task given what they published, as Flink gives it. The
 * sink's own committers publish real parts of the job's rows (inline, as parts under 1 MiB travel)
 * and its own {@link PointerRecorder} moves the completion pointer, against S3Proxy; the harness
 * stands in for Flink and the writers only. The bench's pipeline closes three windows a second, so
 * its commits carry tens of parts: this is the shape whose latency and requests production sees.
 */
final class CommitShapes {
    static final long CHECKPOINT_MILLIS = 10_000;
    static final long WINDOW_MILLIS = 300_000;
    static final int WINDOWS = 6;
    private static final long START = 1_764_547_200_000L;

    /** B buckets per window, P writers and committers. */
    record Shape(int buckets, int parallelism) {
        static Shape parse(String s) {
            String[] bp = s.trim().split("x");
            if (bp.length != 2) {
                throw new IllegalArgumentException(
                        "a commit shape is BxP (buckets x parallelism), got '" + s + "'");
            }
            return new Shape(Integer.parseInt(bp[0]), Integer.parseInt(bp[1]));
        }

        @Override
        public String toString() {
            return "B=" + buckets + ", P=" + parallelism;
        }
    }

    /**
     * One round's figures: each window commit's duration, each pointer update's (after the window's
     * commits), the requests and the data objects.
     */
    record Round(long[] windowCommitMillis, long[] pointerMillis, int requests, int dataObjects) {
        long p99() {
            return p99(windowCommitMillis);
        }

        long pointerP99() {
            return p99(pointerMillis);
        }

        private static long p99(long[] millis) {
            long[] sorted = millis.clone();
            Arrays.sort(sorted);
            return sorted[Math.min(sorted.length - 1, (int) Math.ceil(0.99 * sorted.length) - 1)];
        }
    }

    private CommitShapes() {}

    /**
     * {@value #WINDOWS} windows of {@code shape} under a pipeline of their own in {@code store}.
     *
     * @param requests the requests the store has answered so far (the counting proxy's)
     */
    static Round round(
            Shape shape,
            int keys,
            String pipeline,
            StoreSpec store,
            int publishConcurrency,
            IntSupplier requests)
            throws Exception {
        CanonicalSnapshotSink<WindowAggregate> sink =
                CanonicalSnapshotSink.<WindowAggregate>builder()
                        .pipeline(pipeline)
                        .jobVersion(1)
                        .bucketCount(shape.buckets())
                        .windowLength(Duration.ofMillis(WINDOW_MILLIS))
                        .store(store)
                        .rowFormat(new WindowAggregate.Format())
                        .publishConcurrency(publishConcurrency)
                        .build();
        int p = shape.parallelism();
        List<Committer<SnapshotCommittable>> committers = new ArrayList<>();
        for (int s = 0; s < p; s++) {
            committers.add(sink.createCommitter(context(s, p)));
        }
        // The parts of a window are the same bytes every window but for their keys: encoded once.
        List<EncodedPart> parts = new ArrayList<>();
        for (int b = 0; b < shape.buckets(); b++) {
            parts.add(part(keys, shape.buckets(), b, sink));
        }
        ExecutorService subtasks = Executors.newFixedThreadPool(p);
        List<Long> windowCommits = new ArrayList<>();
        List<Long> pointerUpdates = new ArrayList<>();
        int before = requests.getAsInt();
        try (ObjectStore pointerStore = store.open();
                PointerRecorder pointer =
                        new PointerRecorder(
                                sink.config(),
                                pointerStore,
                                new UnregisteredMetricsGroup(),
                                new SimpleCounter(),
                                false)) {
            long checkpoints = WINDOWS * WINDOW_MILLIS / CHECKPOINT_MILLIS;
            for (long c = 1; c <= checkpoints; c++) {
                long watermark = START + c * CHECKPOINT_MILLIS - 1;
                // The window that ended with this checkpoint's interval fires in it.
                boolean fires = (c * CHECKPOINT_MILLIS) % WINDOW_MILLIS == 0;
                long windowStart = START + c * CHECKPOINT_MILLIS - WINDOW_MILLIS;
                List<Future<Long>> commits = new ArrayList<>();
                List<CommittableMessage<SnapshotCommittable>> published = new ArrayList<>();
                for (int s = 0; s < p; s++) {
                    List<SnapshotCommittable> batch = new ArrayList<>();
                    for (int b = s; fires && b < shape.buckets(); b += p) {
                        batch.add(committable(sink, parts.get(b), windowStart, b));
                    }
                    batch.add(SnapshotCommittable.mark(sink.config().run(), s, p, watermark));
                    published.add(new CommittableSummary<>(s, p, c, batch.size(), 0, 0));
                    for (SnapshotCommittable committable : batch) {
                        published.add(new CommittableWithLineage<>(committable, c, s));
                    }
                    Committer<SnapshotCommittable> committer = committers.get(s);
                    commits.add(subtasks.submit(() -> commit(committer, batch)));
                }
                for (Future<Long> f : commits) {
                    long millis = f.get();
                    if (fires) {
                        windowCommits.add(millis);
                    }
                }
                long started = System.nanoTime();
                for (CommittableMessage<SnapshotCommittable> m : published) {
                    pointer.accept(m);
                }
                if (fires) {
                    pointerUpdates.add((System.nanoTime() - started) / 1_000_000);
                }
            }
        } finally {
            subtasks.shutdownNow();
            for (Committer<SnapshotCommittable> c : committers) {
                c.close();
            }
        }
        return new Round(
                windowCommits.stream().mapToLong(Long::longValue).toArray(),
                pointerUpdates.stream().mapToLong(Long::longValue).toArray(),
                requests.getAsInt() - before,
                WINDOWS * shape.buckets());
    }

    /** One commit call as Flink makes it after a checkpoint; its duration in ms. */
    private static long commit(
            Committer<SnapshotCommittable> committer, List<SnapshotCommittable> batch)
            throws Exception {
        List<TestCommitRequest<SnapshotCommittable>> requests = new ArrayList<>();
        for (SnapshotCommittable c : batch) {
            requests.add(new TestCommitRequest<>(c));
        }
        long started = System.nanoTime();
        committer.commit(new ArrayList<>(requests));
        for (TestCommitRequest<SnapshotCommittable> r : requests) {
            if (r.failure != null || r.retryLater) {
                throw new IllegalStateException("a commit did not succeed", r.failure);
            }
        }
        return (System.nanoTime() - started) / 1_000_000;
    }

    /** A part of {@code keys / buckets} rows of the job's type, as the writer encodes it. */
    private static EncodedPart part(
            int keys, int buckets, int bucket, CanonicalSnapshotSink<WindowAggregate> sink)
            throws Exception {
        List<WindowAggregate> rows = new ArrayList<>();
        for (int i = bucket; i < keys; i += buckets) {
            WindowAggregate a = new WindowAggregate();
            a.device = String.format("dev-%05d", i);
            a.windowStart = START;
            a.windowEnd = START + WINDOW_MILLIS;
            a.count = 2;
            a.sumMicros = 3_000_000L + i;
            a.minMicros = 1_000_000;
            a.maxMicros = 2_000_000L + i;
            a.lastTimestamp = START + i % WINDOW_MILLIS;
            a.lastMicros = 1_500_000;
            a.bytes = 200;
            a.maxLatencyMicros = 1000;
            rows.add(a);
        }
        return EncodedPart.of(
                sink.config().kind(),
                sink.config().rowFormat(),
                sink.config().schemaVersion(),
                PartEncoding.FINGERPRINT_SCHEME, // a fresh store's new job version
                rows,
                new Chunks());
    }

    private static SnapshotCommittable committable(
            CanonicalSnapshotSink<WindowAggregate> sink,
            EncodedPart part,
            long windowStart,
            int bucket) {
        WorkIdentity id = sink.config().identity(windowStart, bucket);
        Map<String, String> metadata = new LinkedHashMap<>();
        metadata.put(PartMetadata.FINGERPRINT, part.fingerprint());
        metadata.put(PartMetadata.ROWS, Integer.toString(part.rows()));
        metadata.put(PartMetadata.SCHEMA_VERSION, Integer.toString(sink.config().schemaVersion()));
        metadata.put(PartMetadata.JOB_VERSION, Integer.toString(sink.config().jobVersion()));
        metadata.put(PartMetadata.WINDOW_START, Long.toString(id.windowStartMillis()));
        metadata.put(PartMetadata.WINDOW_END, Long.toString(id.windowEndMillis()));
        return SnapshotCommittable.inline(
                ObjectKeys.partKey(sink.config().kind(), id),
                id.windowStartMillis(),
                id.windowEndMillis(),
                bucket,
                part.fingerprint(),
                part.rows(),
                metadata,
                part.file().toByteArray());
    }

    private static CommitterInitContext context(int subtask, int parallelism) {
        JobInfo job = new JobInfoImpl(new JobID(), "commit shapes");
        TaskInfo task = new TaskInfoImpl("snapshots: Committer", 128, subtask, parallelism, 0);
        SinkCommitterMetricGroup metrics =
                InternalSinkCommitterMetricGroup.wrap(
                        UnregisteredMetricsGroup.createOperatorMetricGroup());
        return new CommitterInitContext() {
            @Override
            public SinkCommitterMetricGroup metricGroup() {
                return metrics;
            }

            @Override
            public OptionalLong getRestoredCheckpointId() {
                return OptionalLong.empty();
            }

            @Override
            public JobInfo getJobInfo() {
                return job;
            }

            @Override
            public TaskInfo getTaskInfo() {
                return task;
            }
        };
    }
}
