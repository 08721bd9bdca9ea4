package dev.snapshots.key;

import java.io.Serializable;
import java.time.Duration;
import java.time.Instant;
import java.util.Locale;
import java.util.Objects;
import java.util.regex.Pattern;
import org.apache.flink.annotation.PublicEvolving;

/**
 * The logical work one part of a snapshot stands for. Everything that makes two computations "the
 * same work" is here, and nothing about the process that did it: no task, host, attempt or subtask.
 * Two identities are equal exactly when their parts must collapse into one object.
 */
@PublicEvolving
public record WorkIdentity(
        String pipeline,
        long windowStartMillis,
        long windowLengthMillis,
        int jobVersion,
        int schemaVersion,
        int bucket,
        int bucketCount,
        String pinnedInputs)
        implements Serializable {

    /** Safe in an S3 key, a file name and a Hive partition value, on every platform. */
    static final Pattern PIPELINE = Pattern.compile("[a-z0-9][a-z0-9_-]{0,62}");

    private static final Pattern HEX = Pattern.compile("[0-9a-f]{1,64}");
    private static final long MINUTE = 60_000L;

    /**
     * Validates every field.
     *
     * @param pinnedInputs fingerprint (lower-case hex) of reference inputs the job pins, or empty
     * @throws IllegalArgumentException naming the field and the rule it breaks
     */
    public WorkIdentity {
        requirePipeline(pipeline);
        requireWindowLength(windowLengthMillis);
        require(
                windowStartMillis >= 0,
                "window start must not be before 1970-01-01, got %s",
                windowStartMillis);
        require(
                windowStartMillis % windowLengthMillis == 0,
                "window start %s is not aligned to the window length of %s",
                Instant.ofEpochMilli(windowStartMillis),
                Duration.ofMillis(windowLengthMillis));
        require(jobVersion >= 0, "job version must be >= 0, got %s", jobVersion);
        require(schemaVersion >= 0, "schema version must be >= 0, got %s", schemaVersion);
        requireBuckets(bucket, bucketCount);
        Objects.requireNonNull(pinnedInputs, "pinnedInputs (use \"\" when the job pins no inputs)");
        require(
                pinnedInputs.isEmpty() || HEX.matcher(pinnedInputs).matches(),
                "pinned-input fingerprint must be lower-case hex of at most 64 digits, got '%s'",
                pinnedInputs);
    }

    /** Rules shared with the sink's configuration, so a bad setting fails at build time. */
    public static void requirePipeline(String pipeline) {
        require(pipeline != null && !pipeline.isEmpty(), "pipeline name must not be empty");
        require(
                PIPELINE.matcher(pipeline).matches(),
                "pipeline name '%s' must be 1-63 characters of a-z, 0-9, '-' or '_', starting with a letter or digit"
                        + " (it becomes part of every object key)",
                pipeline);
    }

    public static void requireWindowLength(long windowLengthMillis) {
        require(
                windowLengthMillis > 0 && windowLengthMillis % MINUTE == 0,
                "window length must be a positive whole number of minutes (keys name windows by HHMM), got %s ms",
                windowLengthMillis);
        require(
                86_400_000L % windowLengthMillis == 0,
                "window length must divide a day evenly so windows never straddle a date partition, got %s",
                Duration.ofMillis(windowLengthMillis));
    }

    public static void requireBuckets(int bucket, int bucketCount) {
        require(
                bucketCount >= 1 && bucketCount <= 99_999,
                "bucket count must be in 1..99999, got %s",
                bucketCount);
        require(
                bucket >= 0 && bucket < bucketCount,
                "bucket must be in 0..%s, got %s",
                bucketCount - 1,
                bucket);
    }

    private static void require(boolean condition, String message, Object... args) {
        if (!condition) {
            throw new IllegalArgumentException(String.format(Locale.ROOT, message, args));
        }
    }

    public long windowEndMillis() {
        return windowStartMillis + windowLengthMillis;
    }

    @Override
    public String toString() {
        return String.format(
                Locale.ROOT,
                "%s v%d schema %d window %s/%s bucket %d/%d%s",
                pipeline,
                jobVersion,
                schemaVersion,
                Instant.ofEpochMilli(windowStartMillis),
                Duration.ofMillis(windowLengthMillis),
                bucket,
                bucketCount,
                pinnedInputs.isEmpty() ? "" : " pinned " + pinnedInputs);
    }
}
