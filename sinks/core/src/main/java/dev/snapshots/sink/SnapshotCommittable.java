package dev.snapshots.sink;

import dev.snapshots.key.PartKind;
import dev.snapshots.store.StagedObject;
import java.util.Arrays;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;
import org.apache.flink.annotation.Internal;

/**
 * What the committer needs to publish one part, or (a progress mark) what one writer subtask knew
 * about event time when it handed over its parts. The minimum needed to redo the commit: committing
 * the same committable twice ends as created, then collapsed.
 *
 * <p>A part is either carried inline (small parts: published with one conditional PutObject) or
 * staged (an uncompleted multipart upload with a durable copy, or a temp file, promoted by the
 * committer). A mark names the run of the sink it comes from, so a mark restored into another job
 * version, pipeline or kind is recognised as not this sink's.
 */
@Internal
public final class SnapshotCommittable {
    /**
     * The run of a sink a mark belongs to: one build of it, a job as submitted ({@code id} is drawn
     * when the sink is built), of one pipeline, job version and kind.
     */
    public record Run(String pipeline, int jobVersion, PartKind kind, String id) {}

    private final String key;
    private final long windowStartMillis;
    private final long windowEndMillis;
    private final int bucket;
    private final String fingerprint;
    private final long rowCount;
    private final Map<String, String> metadata;
    private final byte[] inline;
    private final StagedObject staged;
    private final Run run;
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
            Run run,
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
        this.run = run;
        this.subtask = subtask;
        this.parallelism = parallelism;
        this.watermark = watermark;
    }

    /** A part whose bytes travel in the checkpoint. */
    public static SnapshotCommittable inline(
            String key,
            long windowStart,
            long windowEnd,
            int bucket,
            String fingerprint,
            long rows,
            Map<String, String> metadata,
            byte[] content) {
        return new SnapshotCommittable(
                key,
                windowStart,
                windowEnd,
                bucket,
                fingerprint,
                rows,
                metadata,
                Objects.requireNonNull(content),
                null,
                null,
                -1,
                -1,
                Long.MIN_VALUE);
    }

    /** A part already uploaded where nobody reads it. */
    public static SnapshotCommittable staged(
            long windowStart,
            long windowEnd,
            int bucket,
            String fingerprint,
            long rows,
            Map<String, String> metadata,
            StagedObject staged) {
        return new SnapshotCommittable(
                staged.key(),
                windowStart,
                windowEnd,
                bucket,
                fingerprint,
                rows,
                metadata,
                null,
                staged,
                null,
                -1,
                -1,
                Long.MIN_VALUE);
    }

    /**
     * Writer {@code subtask} of {@code parallelism}, of {@code run}, had handed over every part
     * below {@code watermark}. A null run: a mark checkpointed before marks named their run.
     */
    public static SnapshotCommittable mark(Run run, int subtask, int parallelism, long watermark) {
        return mark(run, subtask, parallelism, watermark, Long.MIN_VALUE);
    }

    /**
     * As {@link #mark(Run, int, int, long)}, from a writer whose newest window handed over ends at
     * {@code lastWindowEndMillis} (MIN: none yet), across its restores: what bounds the run at the
     * end of input, known to every mark so that no failover can lose it.
     */
    public static SnapshotCommittable mark(
            Run run, int subtask, int parallelism, long watermark, long lastWindowEndMillis) {
        return new SnapshotCommittable(
                null,
                0,
                lastWindowEndMillis,
                -1,
                null,
                0,
                null,
                null,
                null,
                run,
                subtask,
                parallelism,
                watermark);
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

    /**
     * A part's window end; for a mark, the end of the newest window its writer has handed over (MIN
     * when none, or for a mark written before committables of version 3).
     */
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

    /** A mark's run; empty for parts, and for marks from before marks named their run. */
    public Optional<Run> run() {
        return Optional.ofNullable(run);
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
                && Objects.equals(staged, that.staged)
                && Objects.equals(run, that.run);
    }

    @Override
    public int hashCode() {
        return Objects.hash(key, windowStartMillis, bucket, fingerprint, subtask, watermark);
    }

    @Override
    public String toString() {
        if (isMark()) {
            return "ProgressMark{"
                    + run
                    + ", subtask="
                    + subtask
                    + "/"
                    + parallelism
                    + ", watermark="
                    + watermark
                    + ", lastWindowEnd="
                    + windowEndMillis
                    + "}";
        }
        return "SnapshotCommittable{"
                + key
                + ", rows="
                + rowCount
                + ", fingerprint="
                + fingerprint
                + (inline != null
                        ? ", inline " + inline.length + " bytes"
                        : ", staged " + staged.handle())
                + ", metadata="
                + new TreeMap<>(metadata)
                + "}";
    }
}
