package dev.snapshots.progress;

import dev.snapshots.key.ObjectKeys;
import dev.snapshots.key.PartKind;
import dev.snapshots.store.ObjectStore;
import dev.snapshots.store.ObjectStore.VersionedContent;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.core.type.TypeReference;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.SerializationFeature;

/**
 * {@code {pipeline}/v={version}/_progress.json}: every window ending at or before
 * {@code completeThroughMillis} is published.
 *
 * <p>Each committer subtask records, after committing a batch, the watermark its writer had when
 * it handed that batch over: a writer at watermark W has handed over every part of every window
 * ending at or before W + 1. The pointer is the lowest such watermark over all subtasks of one
 * parallelism, floored to a window boundary. At end of input the watermark is +infinity and the
 * last window published bounds it instead.
 *
 * <p>It only moves forward: entries only grow, the pointer is the maximum of its old value and the
 * new bound, and each update is a compare-and-swap on the version read, made while holding a lock
 * object created with create-if-absent. The lock is there because not every S3-compatible server
 * makes {@code If-Match} atomic (S3Proxy 4.1.0 let 14 of 100 racing swaps win in 5 rounds, where
 * 5 should have), while create-if-absent is the guarantee the whole sink already rests on. Two job
 * instances of the same work (an old and a new deployment) may both record marks; neither can
 * move the pointer back.
 */
public final class CompletionPointer {
    private static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.ORDER_MAP_ENTRIES_BY_KEYS);
    private static final int MAX_SWAP_ROUNDS = 100;

    private CompletionPointer() {}

    /** The pointer's value, or empty when nothing is complete yet. */
    public static Optional<Long> read(ObjectStore store, PartKind kind, String pipeline, int jobVersion) throws IOException {
        Optional<VersionedContent> current = store.get(ObjectKeys.progressKey(kind, pipeline, jobVersion));
        return current.isPresent() ? parse(current.get().content()).completeThrough() : Optional.empty();
    }

    /**
     * Records that writer {@code subtask} of {@code parallelism} reached {@code watermark} with all
     * its parts up to then committed, the last of which ended at {@code lastWindowEndMillis}.
     *
     * @return the pointer afterwards, if any window is complete
     */
    public static Optional<Long> record(ObjectStore store, PartKind kind, String pipeline, int jobVersion,
            long windowLengthMillis, int parallelism, int subtask, long watermark, long lastWindowEndMillis)
            throws IOException {
        String key = ObjectKeys.progressKey(kind, pipeline, jobVersion);
        try (PointerLock ignored = PointerLock.acquire(store, ObjectKeys.lockKey(key))) {
            for (int round = 0; round < MAX_SWAP_ROUNDS; round++) {
                Optional<VersionedContent> current = store.get(key);
                Progress before = current.isPresent() ? parse(current.get().content()) : Progress.empty(pipeline, jobVersion);
                Progress after = before.withMark(parallelism, subtask, watermark, lastWindowEndMillis, windowLengthMillis);
                if (after.equals(before)) {
                    return before.completeThrough();
                }
                if (store.compareAndSwap(key, render(after), current.map(VersionedContent::version))) {
                    return after.completeThrough();
                }
                // Someone swapped in between (a lock broken as stale): merge into what they wrote.
            }
        }
        throw new IOException("could not update " + key + " after " + MAX_SWAP_ROUNDS + " contended rounds");
    }

    private static byte[] render(Progress p) {
        Map<String, Object> doc = new TreeMap<>();
        doc.put("pipeline", p.pipeline);
        doc.put("jobVersion", p.jobVersion);
        p.completeThrough().ifPresent(t -> {
            doc.put("completeThroughMillis", t);
            doc.put("completeThrough", Instant.ofEpochMilli(t).toString());
        });
        doc.put("lastWindowEndMillis", p.lastWindowEndMillis);
        doc.put("watermarks", p.watermarks);
        try {
            return JSON.writerWithDefaultPrettyPrinter().writeValueAsBytes(doc);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static Progress parse(byte[] content) throws IOException {
        try {
            Map<String, Object> doc = JSON.readValue(content, new TypeReference<Map<String, Object>>() {});
            Map<String, Map<String, Long>> watermarks = JSON.convertValue(
                    doc.getOrDefault("watermarks", Map.of()), new TypeReference<TreeMap<String, Map<String, Long>>>() {});
            Object through = doc.get("completeThroughMillis");
            return new Progress(
                    (String) doc.get("pipeline"),
                    ((Number) doc.get("jobVersion")).intValue(),
                    through == null ? Long.MIN_VALUE : ((Number) through).longValue(),
                    ((Number) doc.getOrDefault("lastWindowEndMillis", Long.MIN_VALUE)).longValue(),
                    watermarks);
        } catch (RuntimeException e) {
            throw new IOException("completion pointer is not what this release writes: "
                    + new String(content, StandardCharsets.UTF_8), e);
        }
    }
}
