package dev.snapshots.harness.testutils;

import dev.snapshots.format.PartEncoding;
import dev.snapshots.job.WindowAggregate;
import dev.snapshots.key.ObjectKeys;
import dev.snapshots.key.PartKind;
import dev.snapshots.key.PartMetadata;
import dev.snapshots.key.WorkIdentity;
import dev.snapshots.progress.CompletionPointer;
import dev.snapshots.progress.VersionIdentity;
import dev.snapshots.store.ObjectStore;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * A store as large as a week of production, built in minutes: {@code days} of five-minute windows
 * at B buckets, each part one row, written through the store's own create-if-absent with the
 * metadata a writer gives it, and the pointer and manifests recorded through {@link
 * CompletionPointer} as a committer records them. What no job on two cores could write in a test's
 * time: a week at B = 128 is 258,048 parts.
 */
public final class LargeStore {
    public static final long WINDOW = 300_000L;
    private static final String PIPELINE = "telemetry";

    private LargeStore() {}

    /** Writes the store; {@code from} is the first window's start. */
    public static void write(ObjectStore store, long from, int days, int buckets) throws Exception {
        new VersionIdentity(
                        PartKind.SNAPSHOT,
                        PIPELINE,
                        1,
                        1,
                        "",
                        buckets,
                        "KEY_GROUPS",
                        128,
                        WINDOW,
                        "",
                        ObjectKeys.KEY_SCHEME,
                        VersionIdentity.FINGERPRINT_SCHEME_UNRECORDED)
                .require(store);
        CompletionPointer.Scope scope =
                new CompletionPointer.Scope(PartKind.SNAPSHOT, PIPELINE, 1, 1, buckets, WINDOW);
        ExecutorService pool = Executors.newFixedThreadPool(4);
        try {
            // A day at a time: the pointer then moves past 288 windows in one update.
            for (int day = 0; day < days; day++) {
                List<Future<CompletionPointer.PublishedPart>> parts = new ArrayList<>();
                for (int w = day * 288; w < (day + 1) * 288; w++) {
                    long start = from + w * WINDOW;
                    for (int b = 0; b < buckets; b++) {
                        int bucket = b;
                        parts.add(pool.submit(() -> part(store, start, bucket, buckets)));
                    }
                }
                List<CompletionPointer.PublishedPart> published = new ArrayList<>();
                for (Future<CompletionPointer.PublishedPart> p : parts) {
                    published.add(p.get());
                }
                long end = from + (day + 1) * 288L * WINDOW;
                CompletionPointer.record(
                        store,
                        scope,
                        List.of(new CompletionPointer.Mark("large-store", 1, 0, end - 1, end)),
                        published);
            }
        } finally {
            pool.shutdownNow();
        }
    }

    private static CompletionPointer.PublishedPart part(
            ObjectStore store, long start, int bucket, int buckets) throws IOException {
        WindowAggregate row = new WindowAggregate();
        row.device = "device-" + bucket;
        row.windowStart = start;
        row.windowEnd = start + WINDOW;
        row.count = 1;
        row.sumMicros = 1_000_000L * bucket;
        row.minMicros = row.sumMicros;
        row.maxMicros = row.sumMicros;
        row.lastMicros = row.sumMicros;
        row.lastTimestamp = start + 1;
        PartEncoding.PartWriter<WindowAggregate> writer =
                new PartEncoding.PartWriter<>(
                        PartKind.SNAPSHOT,
                        new WindowAggregate.Format(),
                        1,
                        PartEncoding.FINGERPRINT_AVRO);
        writer.add(row);
        byte[] content = writer.finish().toByteArray();
        String key =
                ObjectKeys.partKey(
                        new WorkIdentity(PIPELINE, start, WINDOW, 1, 1, bucket, buckets, ""));
        store.putIfAbsent(
                key,
                content,
                Map.of(
                        PartMetadata.FINGERPRINT, writer.fingerprint(),
                        PartMetadata.ROWS, "1",
                        PartMetadata.SCHEMA_VERSION, "1",
                        PartMetadata.JOB_VERSION, "1",
                        PartMetadata.WINDOW_START, Long.toString(start),
                        PartMetadata.WINDOW_END, Long.toString(start + WINDOW),
                        PartMetadata.WRITER_JOB, "3f2a9c1d5e7b4a6c8d0e2f4a6b8c0d1e",
                        PartMetadata.WRITER_HOST, "ip-10-0-1-23.ec2.internal",
                        PartMetadata.WRITER_TASK,
                                "arn:aws:ecs:us-east-1:123456789012:task/snapshots/0f1e2d3c4b5a69788796a5b4c3d2e1f0"));
        return new CompletionPointer.PublishedPart(start, bucket, key, writer.fingerprint(), 1);
    }
}
