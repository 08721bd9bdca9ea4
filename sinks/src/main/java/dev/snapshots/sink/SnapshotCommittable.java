package dev.snapshots.sink;

import dev.snapshots.store.StagedObject;
import java.util.Arrays;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;

/**
 * What the committer needs to publish one part, or (a progress mark) what one writer subtask knew
 * about event time when it handed over its parts. The minimum needed to redo the commit:
 * committing the same committable twice ends as created, then collapsed.
 *
 * <p>A part is either carried inline (small parts: published with one conditional PutObject) or
 * staged (an uncompleted multipart upload or a temp file, promoted by the committer).
 */
public final class SnapshotCommittable {
    private final String key;
    private final long windowStartMillis;
    private final long windowEndMillis;
    private final int bucket;
    private final String fingerprint;
    private final long rowCount;
    private final Map<String, String> metadata;
    private final byte[] inline;
    private final StagedObject staged;
    private final int subtask;
    private final int parallelism;
    private final long watermark;

    private SnapshotCommittable(
            String key,
            long windowStartMillis,
            long windowEndMillis,
            int bucket,
            String fingerprint,
            long rowCount,
            Map<String, String> metadata,
            byte[] inline,
            StagedObject staged,
            int subtask,
            int parallelism,
            long watermark) {
        this.key = key;
        this.windowStartMillis = windowStartMillis;
        this.windowEndMillis = windowEndMillis;
        this.bucket = bucket;
        this.fingerprint = fingerprint;
        this.rowCount = rowCount;
        this.metadata = metadata == null ? null : Map.copyOf(metadata);
        this.inline = inline;
        this.staged = staged;
        this.subtask = subtask;
        this.parallelism = parallelism;
        this.watermark = watermark;
    }

    /** A part whose bytes travel in the checkpoint. */
    public static SnapshotCommittable inline(
            String key, long windowStart, long windowEnd, int bucket, String fingerprint, long rows,
            Map<String, String> metadata, byte[] content) {
        return new SnapshotCommittable(
                key, windowStart, windowEnd, bucket, fingerprint, rows, metadata,
                Objects.requireNonNull(content), null, -1, -1, Long.MIN_VALUE);
    }

    /** A part already uploaded where nobody reads it. */
    public static SnapshotCommittable staged(
            long windowStart, long windowEnd, int bucket, String fingerprint, long rows,
            Map<String, String> metadata, StagedObject staged) {
        return new SnapshotCommittable(
                staged.key(), windowStart, windowEnd, bucket, fingerprint, rows, metadata,
                null, staged, -1, -1, Long.MIN_VALUE);
    }

    /** Writer {@code subtask} of {@code parallelism} had handed over every part below {@code watermark}. */
    public static SnapshotCommittable mark(int subtask, int parallelism, long watermark) {
        return new SnapshotCommittable(null, 0, 0, -1, null, 0, null, null, null, subtask, parallelism, watermark);
    }

    public boolean isMark() {
        return key == null;
    }

    public String key() {
        return key;
    }

    public long windowStartMillis() {
        return windowStartMillis;
    }

    public long windowEndMillis() {
        return windowEndMillis;
    }

    public int bucket() {
        return bucket;
    }

    public String fingerprint() {
        return fingerprint;
    }

    public long rowCount() {
        return rowCount;
    }

    /** Object metadata: fingerprint, row count and writer provenance. */
    public Map<String, String> metadata() {
        return metadata;
    }

    public Optional<byte[]> inline() {
        return Optional.ofNullable(inline);
    }

    public Optional<StagedObject> staged() {
        return Optional.ofNullable(staged);
    }

    public int subtask() {
        return subtask;
    }

    public int parallelism() {
        return parallelism;
    }

    public long watermark() {
        return watermark;
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof SnapshotCommittable)) {
            return false;
        }
        SnapshotCommittable that = (SnapshotCommittable) o;
        return windowStartMillis == that.windowStartMillis
                && windowEndMillis == that.windowEndMillis
                && bucket == that.bucket
                && rowCount == that.rowCount
                && subtask == that.subtask
                && parallelism == that.parallelism
                && watermark == that.watermark
                && Objects.equals(key, that.key)
                && Objects.equals(fingerprint, that.fingerprint)
                && Objects.equals(metadata, that.metadata)
                && Arrays.equals(inline, that.inline)
                && Objects.equals(staged, that.staged);
    }

    @Override
    public int hashCode() {
        return Objects.hash(key, windowStartMillis, bucket, fingerprint, subtask, watermark);
    }

    @Override
    public String toString() {
        if (isMark()) {
            return "ProgressMark{subtask=" + subtask + "/" + parallelism + ", watermark=" + watermark + "}";
        }
        return "SnapshotCommittable{" + key
                + ", rows=" + rowCount
                + ", fingerprint=" + fingerprint
                + (inline != null ? ", inline " + inline.length + " bytes" : ", staged " + staged.handle())
                + ", metadata=" + new TreeMap<>(metadata) + "}";
    }
}
