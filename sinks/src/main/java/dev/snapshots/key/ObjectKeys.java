package dev.snapshots.key;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.util.HexFormat;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Object keys as a pure function of {@link WorkIdentity}.
 *
 * <pre>
 * {pipeline}/v={job version}/schema={schema version}/date={yyyy-MM-dd}/window={HHmm}/part-{bucket}-of-{B}-{digest}.parquet
 * orders/v=3/schema=1/date=2026-11-30/window=1405/part-00001-of-00004-5f1c0e2a9b7d3c48.parquet
 * _deadletter/orders/v=3/schema=1/date=2026-11-30/window=1405/part-00001-of-00004-5f1c0e2a9b7d3c48.jsonl
 * </pre>
 *
 * <p>Hive-style directories let Athena, Spark, Trino and DuckDB prune by version, date and window.
 * The digest covers every identity field, including those the path does not spell out (window
 * length, pinned inputs), so two different identities can never share a key.
 */
public final class ObjectKeys {
    /** Where divergence evidence goes; outside every pipeline's namespace. */
    public static final String DIVERGENCE_PREFIX = "_divergence/";

    public static final String PROGRESS_FILE = "_progress.json";

    public static final String CURRENT_FILE = "_current.json";

    private static final String LOCK_SUFFIX = ".lock";

    private static final int DIGEST_HEX_CHARS = 16;
    private static final Pattern PART = Pattern.compile(
            "(_deadletter/)?([a-z0-9][a-z0-9_-]*)/v=(\\d+)/schema=(\\d+)/date=(\\d{4}-\\d{2}-\\d{2})/window=(\\d{4})/"
                    + "part-(\\d{5})-of-(\\d{5})-([0-9a-f]{" + DIGEST_HEX_CHARS + "})\\.(parquet|jsonl)");

    private ObjectKeys() {}

    public static String partKey(WorkIdentity id) {
        return partKey(PartKind.SNAPSHOT, id);
    }

    public static String partKey(PartKind kind, WorkIdentity id) {
        ZonedDateTime start = Instant.ofEpochMilli(id.windowStartMillis()).atZone(ZoneOffset.UTC);
        return String.format(
                "%s%s/date=%04d-%02d-%02d/window=%02d%02d/part-%05d-of-%05d-%s.%s",
                kind.prefix(),
                versionPrefix(id.pipeline(), id.jobVersion()) + "schema=" + id.schemaVersion(),
                start.getYear(),
                start.getMonthValue(),
                start.getDayOfMonth(),
                start.getHour(),
                start.getMinute(),
                id.bucket(),
                id.bucketCount(),
                digest(id),
                kind.extension());
    }

    /** The namespace one job version writes into: a replay with version N+1 never touches N's. */
    public static String versionPrefix(String pipeline, int jobVersion) {
        WorkIdentity.requirePipeline(pipeline);
        return pipeline + "/v=" + jobVersion + "/";
    }

    /** The completion pointer of one pipeline and job version. */
    public static String progressKey(PartKind kind, String pipeline, int jobVersion) {
        return kind.prefix() + versionPrefix(pipeline, jobVersion) + PROGRESS_FILE;
    }

    /** The job version readers of a pipeline follow; moved by promotion only. */
    public static String currentVersionKey(String pipeline) {
        WorkIdentity.requirePipeline(pipeline);
        return pipeline + "/" + CURRENT_FILE;
    }

    /** The lock object a pointer update holds, beside the pointer; it lives for one update. */
    public static String lockKey(String pointerKey) {
        return pointerKey + LOCK_SUFFIX;
    }

    /** A completion or current-version pointer, or its update lock: the protocol's own objects, not parts. */
    public static boolean isPointer(String key) {
        String k = key.endsWith(LOCK_SUFFIX) ? key.substring(0, key.length() - LOCK_SUFFIX.length()) : key;
        return k.endsWith("/" + PROGRESS_FILE) || k.endsWith("/" + CURRENT_FILE);
    }

    /** The pipeline whose current-version pointer {@code key} is, if it is one. */
    public static Optional<String> currentVersionPipeline(String key) {
        return key.endsWith("/" + CURRENT_FILE)
                ? Optional.of(key.substring(0, key.length() - CURRENT_FILE.length() - 1)) : Optional.empty();
    }

    /** Evidence that a writer computed {@code fingerprint} for a key that already held other content. */
    public static String divergenceKey(String partKey, String fingerprint) {
        return DIVERGENCE_PREFIX + partKey + "/" + fingerprint + ".json";
    }

    /** The fields a part key spells out, or empty when the key is not one of ours. */
    public static Optional<PartKey> parse(String key) {
        Matcher m = PART.matcher(key);
        if (!m.matches()) {
            return Optional.empty();
        }
        String date = m.group(5);
        String hhmm = m.group(6);
        long windowStart;
        try {
            windowStart = Instant.parse(date + "T" + hhmm.substring(0, 2) + ":" + hhmm.substring(2) + ":00Z")
                    .toEpochMilli();
        } catch (RuntimeException e) {
            return Optional.empty();
        }
        PartKind kind = m.group(1) == null ? PartKind.SNAPSHOT : PartKind.DEAD_LETTER;
        if (!kind.extension().equals(m.group(10))) {
            return Optional.empty();
        }
        return Optional.of(new PartKey(
                key,
                kind,
                m.group(2),
                Integer.parseInt(m.group(3)),
                Integer.parseInt(m.group(4)),
                windowStart,
                Integer.parseInt(m.group(7)),
                Integer.parseInt(m.group(8)),
                m.group(9)));
    }

    /** The fields of a part key, as read back from a listing. */
    public record PartKey(
            String key,
            PartKind kind,
            String pipeline,
            int jobVersion,
            int schemaVersion,
            long windowStartMillis,
            int bucket,
            int bucketCount,
            String digest) {}

    /** SHA-256 over a length-prefixed encoding of every field, so no two field tuples encode alike. */
    static String digest(WorkIdentity id) {
        byte[] pipeline = id.pipeline().getBytes(StandardCharsets.UTF_8);
        byte[] pinned = id.pinnedInputs().getBytes(StandardCharsets.UTF_8);
        ByteBuffer buf = ByteBuffer.allocate(64 + pipeline.length + pinned.length)
                .put((byte) 1) // encoding version of this digest
                .putInt(pipeline.length)
                .put(pipeline)
                .putLong(id.windowStartMillis())
                .putLong(id.windowLengthMillis())
                .putInt(id.jobVersion())
                .putInt(id.schemaVersion())
                .putInt(id.bucket())
                .putInt(id.bucketCount())
                .putInt(pinned.length)
                .put(pinned);
        try {
            byte[] sha = MessageDigest.getInstance("SHA-256").digest(java.util.Arrays.copyOf(buf.array(), buf.position()));
            return HexFormat.of().formatHex(sha).substring(0, DIGEST_HEX_CHARS);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JVM ships SHA-256", e);
        }
    }
}
