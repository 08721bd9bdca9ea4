package dev.snapshots.key;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeParseException;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.Locale;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.OptionalLong;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.flink.annotation.PublicEvolving;

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
@PublicEvolving
public final class ObjectKeys {
    /** Where divergence evidence goes; outside every pipeline's namespace. */
    public static final String DIVERGENCE_PREFIX = "_divergence/";

    /**
     * Where a committer records that another execution's part met an equal one and collapsed into
     * it; outside every pipeline's namespace, like the divergence evidence.
     */
    public static final String COLLAPSED_PREFIX = "_collapsed/";

    /** Where the audit records what operators acknowledged. */
    public static final String AUDIT_PREFIX = "_audit/";

    public static final String PROGRESS_FILE = "_progress.json";

    public static final String CURRENT_FILE = "_current.json";

    public static final String MANIFEST_FILE = "_manifest.json";

    /**
     * Where a pipeline's complete windows are recorded for query engines, one object per window
     * with rows: no '_' in the name, so engines read them (they skip '_' names). Flat, one
     * directory for every job version, because Trino's Hive connector does not read nested
     * directories and a directory named {@code v=N} would look like a partition to Spark.
     */
    public static final String COMPLETE_DIRECTORY = "complete/";

    /** Where a pipeline's promotions are recorded for query engines, one object per promotion. */
    public static final String PROMOTED_DIRECTORY = "promoted/";

    private static final String PROGRESS_LOG = "_progress/";
    private static final Pattern PROGRESS_ENTRY = Pattern.compile("\\d{20}\\.json");

    /**
     * Where staged parts keep a durable copy until they are published: an incomplete upload can
     * vanish (a lifecycle rule, a 409 on its completion), the copy stays as long as the bucket's
     * staging retention.
     */
    public static final String STAGING_PREFIX = "_staging/";

    /** Where a store's conformance probe writes ({@code StoreConformance}); nothing stays. */
    public static final String CONFORMANCE_PREFIX = "_conformance/";

    /**
     * What a job version's keys and bucket assignment depend on, recorded at its first write: see
     * {@code VersionIdentity}.
     */
    public static final String IDENTITY_FILE = "_identity.json";

    /**
     * The version of this key layout and its digest; recorded with each job version's identity, so
     * a release that lays keys out differently cannot write into a version an older one started.
     */
    public static final int KEY_SCHEME = 1;

    private static final String LOCK_SUFFIX = ".lock";

    private static final int DIGEST_HEX_CHARS = 16;
    private static final String WINDOW_DIRECTORY =
            "(_deadletter/)?([a-z0-9][a-z0-9_-]*)/v=(\\d+)/schema=(\\d+)/date=(\\d{4}-\\d{2}-\\d{2})/window=(\\d{4})/";
    private static final Pattern PART =
            Pattern.compile(
                    WINDOW_DIRECTORY
                            + "part-(\\d{5})-of-(\\d{5})-([0-9a-f]{"
                            + DIGEST_HEX_CHARS
                            + "})\\.(parquet|jsonl)");
    private static final Pattern MANIFEST =
            Pattern.compile(WINDOW_DIRECTORY + Pattern.quote(MANIFEST_FILE));
    private static final Pattern WINDOW_DIRECTORY_ONLY = Pattern.compile(WINDOW_DIRECTORY);
    private static final Pattern VERSION_DIRECTORY =
            Pattern.compile("([a-z0-9][a-z0-9_-]*)/v=(\\d{1,9})/");
    private static final Pattern READER_RECORD =
            Pattern.compile("[a-z0-9][a-z0-9_-]*/(complete|promoted)/[^/]+\\.json");

    /**
     * Under a pipeline: its reader table's files (Iceberg's metadata), see {@link #readerTable}.
     */
    private static final String READER_TABLE_DIRECTORY = "_iceberg";

    private static final Pattern READER_TABLE_FILE =
            Pattern.compile("[a-z0-9][a-z0-9_-]*/" + READER_TABLE_DIRECTORY + "/.+");
    private static final Pattern DATE_DIRECTORY =
            Pattern.compile(".*/date=(\\d{4}-\\d{2}-\\d{2})/");

    private ObjectKeys() {}

    public static String partKey(WorkIdentity id) {
        return partKey(PartKind.SNAPSHOT, id);
    }

    public static String partKey(PartKind kind, WorkIdentity id) {
        return windowPrefix(
                        kind,
                        id.pipeline(),
                        id.jobVersion(),
                        id.schemaVersion(),
                        id.windowStartMillis())
                + String.format(
                        Locale.ROOT,
                        "part-%05d-of-%05d-%s.%s",
                        id.bucket(),
                        id.bucketCount(),
                        digest(id),
                        kind.extension());
    }

    /**
     * The directory of one window's parts and manifest. Formatted in Locale.ROOT: keys never depend
     * on the JVM's locale.
     */
    public static String windowPrefix(
            PartKind kind,
            String pipeline,
            int jobVersion,
            int schemaVersion,
            long windowStartMillis) {
        return schemaPrefix(kind, pipeline, jobVersion, schemaVersion)
                + dateDirectory(windowStartMillis)
                + "window="
                + time(windowStartMillis)
                + "/";
    }

    /**
     * The directory, under a {@link #schemaPrefix}, of the windows of the day (UTC) {@code millis}
     * falls in.
     */
    public static String dateDirectory(long millis) {
        return "date=" + date(millis) + "/";
    }

    /** The day (UTC) {@code millis} falls in, as its {@code date=} directory spells it. */
    public static String date(long millis) {
        ZonedDateTime day = Instant.ofEpochMilli(millis).atZone(ZoneOffset.UTC);
        return String.format(
                Locale.ROOT,
                "%04d-%02d-%02d",
                day.getYear(),
                day.getMonthValue(),
                day.getDayOfMonth());
    }

    /**
     * The time of day (UTC) of a window start, as its {@code window=} directory spells it: {@code
     * 0005}, text, not the number 5.
     */
    public static String time(long windowStartMillis) {
        ZonedDateTime start = Instant.ofEpochMilli(windowStartMillis).atZone(ZoneOffset.UTC);
        return String.format(Locale.ROOT, "%02d%02d", start.getHour(), start.getMinute());
    }

    /** Where one schema of a job version keeps its date directories. */
    public static String schemaPrefix(
            PartKind kind, String pipeline, int jobVersion, int schemaVersion) {
        return kind.prefix()
                + versionPrefix(pipeline, jobVersion)
                + "schema="
                + schemaVersion
                + "/";
    }

    /**
     * The start of the day a date directory ({@code .../date=2026-11-30/}) holds, or empty for
     * anything else.
     */
    public static OptionalLong dayStart(String dateDirectory) {
        Matcher m = DATE_DIRECTORY.matcher(dateDirectory);
        try {
            return m.matches()
                    ? OptionalLong.of(
                            LocalDate.parse(m.group(1))
                                    .atStartOfDay(ZoneOffset.UTC)
                                    .toInstant()
                                    .toEpochMilli())
                    : OptionalLong.empty();
        } catch (DateTimeParseException e) {
            return OptionalLong.empty();
        }
    }

    /**
     * The window a window directory ({@code .../date=2026-11-30/window=1405/}) is for, or empty for
     * anything else.
     */
    public static Optional<WindowKey> parseWindowDirectory(String directory) {
        return window(directory, WINDOW_DIRECTORY_ONLY.matcher(directory));
    }

    /**
     * A window's manifest: its parts, written once when the completion pointer passes the window.
     * Hidden from readers of {@code *.parquet} globs and from Hadoop-style readers ('_' prefix).
     */
    public static String manifestKey(
            PartKind kind,
            String pipeline,
            int jobVersion,
            int schemaVersion,
            long windowStartMillis) {
        return windowPrefix(kind, pipeline, jobVersion, schemaVersion, windowStartMillis)
                + MANIFEST_FILE;
    }

    /** Where a pipeline's job versions are, each a directory {@link #versionPrefix} names. */
    public static String pipelinePrefix(String pipeline) {
        WorkIdentity.requirePipeline(pipeline);
        return pipeline + "/";
    }

    /**
     * Where a pipeline's reader table keeps its own files (an Iceberg table's metadata), no slash
     * at the end: a table location. Its data files are the parts themselves.
     */
    public static String readerTable(String pipeline) {
        return pipelinePrefix(pipeline) + READER_TABLE_DIRECTORY;
    }

    /** The namespace one job version writes into: a replay with version N+1 never touches N's. */
    public static String versionPrefix(String pipeline, int jobVersion) {
        return pipelinePrefix(pipeline) + "v=" + jobVersion + "/";
    }

    /**
     * The job version a directory of {@code pipeline} ({@code telemetry/v=3/}) is for, or empty for
     * anything else.
     */
    public static OptionalInt jobVersion(String pipeline, String directory) {
        Matcher m = VERSION_DIRECTORY.matcher(directory);
        return m.matches() && m.group(1).equals(pipeline)
                ? OptionalInt.of(Integer.parseInt(m.group(2)))
                : OptionalInt.empty();
    }

    /** The recorded identity of one job version's output of {@code kind}. */
    public static String identityKey(PartKind kind, String pipeline, int jobVersion) {
        return kind.prefix() + versionPrefix(pipeline, jobVersion) + IDENTITY_FILE;
    }

    /** The completion pointer of one pipeline and job version. */
    public static String progressKey(PartKind kind, String pipeline, int jobVersion) {
        return kind.prefix() + versionPrefix(pipeline, jobVersion) + PROGRESS_FILE;
    }

    /**
     * Where the completion pointer's states are kept, one immutable object per update: see {@link
     * #progressEntryKey}.
     */
    public static String progressLogPrefix(PartKind kind, String pipeline, int jobVersion) {
        return kind.prefix() + versionPrefix(pipeline, jobVersion) + PROGRESS_LOG;
    }

    /**
     * The {@code sequence}th state of a completion pointer, created once with create-if-absent: the
     * one conditional write every S3-compatible store makes atomic, so two updaters never both win
     * a position, and the pointer never moves back.
     */
    public static String progressEntryKey(
            PartKind kind, String pipeline, int jobVersion, long sequence) {
        return progressLogPrefix(kind, pipeline, jobVersion)
                + String.format(Locale.ROOT, "%020d.json", sequence);
    }

    /**
     * The position of a log entry, or empty for anything else under the log's prefix: some stores
     * list an upload still in flight under a temporary name beside it.
     */
    public static OptionalLong progressEntry(String key) {
        String name = key.substring(key.lastIndexOf('/') + 1);
        return PROGRESS_ENTRY.matcher(name).matches()
                ? OptionalLong.of(Long.parseLong(name.substring(0, 20)))
                : OptionalLong.empty();
    }

    /**
     * The record that one window of a job version is complete, for query engines: written once,
     * after the window's manifest. See {@link #COMPLETE_DIRECTORY}.
     */
    public static String completeWindowKey(
            String pipeline, int jobVersion, long windowStartMillis) {
        return pipelinePrefix(pipeline)
                + COMPLETE_DIRECTORY
                + "v"
                + jobVersion
                + "-"
                + date(windowStartMillis)
                + "-"
                + time(windowStartMillis)
                + ".json";
    }

    /**
     * The {@code sequence}th promotion of a pipeline, for query engines: the highest sequence is
     * the version readers follow, as {@link #currentVersionKey} says.
     */
    public static String promotionKey(String pipeline, long sequence) {
        return pipelinePrefix(pipeline)
                + PROMOTED_DIRECTORY
                + String.format(Locale.ROOT, "%020d.json", sequence);
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

    /**
     * A completion or current-version pointer, or its update lock: the protocol's own objects, not
     * parts.
     */
    public static boolean isPointer(String key) {
        // Releases before 0.2 held a lock object beside a pointer while updating it; one may be
        // left behind.
        String k =
                key.endsWith(LOCK_SUFFIX)
                        ? key.substring(0, key.length() - LOCK_SUFFIX.length())
                        : key;
        return k.endsWith("/" + PROGRESS_FILE)
                || k.endsWith("/" + CURRENT_FILE)
                || k.contains("/" + PROGRESS_LOG);
    }

    /** The pipeline whose current-version pointer {@code key} is, if it is one. */
    public static Optional<String> currentVersionPipeline(String key) {
        return key.endsWith("/" + CURRENT_FILE)
                ? Optional.of(key.substring(0, key.length() - CURRENT_FILE.length() - 1))
                : Optional.empty();
    }

    /**
     * A durable copy of a staged part; unique per staging, since several executions may stage one
     * part.
     */
    public static String stagingKey(String partKey) {
        return STAGING_PREFIX + partKey + "." + UUID.randomUUID();
    }

    /** The part a staging copy is for, if {@code key} is one. */
    public static Optional<String> stagedPart(String key) {
        int dot = key.lastIndexOf('.');
        return key.startsWith(STAGING_PREFIX) && dot > STAGING_PREFIX.length()
                ? Optional.of(key.substring(STAGING_PREFIX.length(), dot))
                : Optional.empty();
    }

    /**
     * Evidence that a writer computed {@code fingerprint} for a key that already held other
     * content.
     */
    public static String divergenceKey(String partKey, String fingerprint) {
        return DIVERGENCE_PREFIX + partKey + "/" + fingerprint + ".json";
    }

    /** The part a piece of divergence evidence is about, or empty when the key is not evidence. */
    public static Optional<PartKey> parseDivergence(String evidenceKey) {
        return parseEvidence(DIVERGENCE_PREFIX, evidenceKey);
    }

    /**
     * The record that an execution whose Flink job is {@code writerJob} computed the part at {@code
     * partKey} again, with equal content: one per part and job, however often that job commits it.
     */
    public static String collapsedKey(String partKey, String writerJob) {
        return COLLAPSED_PREFIX + partKey + "/" + writerJob + ".json";
    }

    /** The part a collapse record is about, or empty when the key is not one. */
    public static Optional<PartKey> parseCollapsed(String recordKey) {
        return parseEvidence(COLLAPSED_PREFIX, recordKey);
    }

    private static Optional<PartKey> parseEvidence(String prefix, String key) {
        if (!key.startsWith(prefix) || key.lastIndexOf('/') <= prefix.length()) {
            return Optional.empty();
        }
        return parse(key.substring(prefix.length(), key.lastIndexOf('/')));
    }

    /**
     * The protocol's own objects beside the parts and manifests: pointers and their logs, version
     * identities, readers' records of complete windows and promotions, conformance probes,
     * evidence, collapse records, staged copies, audit acknowledgements, and pointer locks left by
     * releases before 0.2.
     */
    public static boolean isProtocolObject(String key) {
        return isPointer(key)
                || READER_RECORD.matcher(key).matches()
                || READER_TABLE_FILE.matcher(key).matches()
                || key.endsWith("/" + IDENTITY_FILE)
                || key.startsWith(CONFORMANCE_PREFIX)
                || key.startsWith(DIVERGENCE_PREFIX)
                || key.startsWith(COLLAPSED_PREFIX)
                || key.startsWith(STAGING_PREFIX)
                || key.startsWith(AUDIT_PREFIX);
    }

    /** The fields a part key spells out, or empty when the key is not one of ours. */
    public static Optional<PartKey> parse(String key) {
        Matcher m = PART.matcher(key);
        Optional<WindowKey> window = window(key, m);
        if (window.isEmpty() || !window.get().kind().extension().equals(m.group(10))) {
            return Optional.empty();
        }
        WindowKey w = window.get();
        return Optional.of(
                new PartKey(
                        key,
                        w.kind(),
                        w.pipeline(),
                        w.jobVersion(),
                        w.schemaVersion(),
                        w.windowStartMillis(),
                        Integer.parseInt(m.group(7)),
                        Integer.parseInt(m.group(8)),
                        m.group(9)));
    }

    /** The window a manifest key is for, or empty when the key is not a manifest. */
    public static Optional<WindowKey> parseManifest(String key) {
        return window(key, MANIFEST.matcher(key));
    }

    private static Optional<WindowKey> window(String key, Matcher m) {
        if (!m.matches()) {
            return Optional.empty();
        }
        String date = m.group(5);
        String hhmm = m.group(6);
        int hour = Integer.parseInt(hhmm, 0, 2, 10);
        int minute = Integer.parseInt(hhmm, 2, 4, 10);
        long windowStart;
        try {
            // Field by field, not Instant.parse of a built string: a listing of a week at B = 128
            // parses a quarter of a million keys.
            windowStart =
                    LocalDate.of(
                                            Integer.parseInt(date, 0, 4, 10),
                                            Integer.parseInt(date, 5, 7, 10),
                                            Integer.parseInt(date, 8, 10, 10))
                                    .toEpochDay()
                            * 86_400_000L;
        } catch (RuntimeException e) {
            return Optional.empty();
        }
        if (hour > 23 || minute > 59) {
            return Optional.empty();
        }
        windowStart += hour * 3_600_000L + minute * 60_000L;
        return Optional.of(
                new WindowKey(
                        m.group(1) == null ? PartKind.SNAPSHOT : PartKind.DEAD_LETTER,
                        m.group(2),
                        Integer.parseInt(m.group(3)),
                        Integer.parseInt(m.group(4)),
                        windowStart));
    }

    /** One window's directory, as its keys spell it out. */
    public record WindowKey(
            PartKind kind,
            String pipeline,
            int jobVersion,
            int schemaVersion,
            long windowStartMillis) {}

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
            String digest) {
        /** The window directory the part is in. */
        public WindowKey window() {
            return new WindowKey(kind, pipeline, jobVersion, schemaVersion, windowStartMillis);
        }
    }

    /**
     * SHA-256 over a length-prefixed encoding of every field, so no two field tuples encode alike.
     */
    static String digest(WorkIdentity id) {
        byte[] pipeline = id.pipeline().getBytes(StandardCharsets.UTF_8);
        byte[] pinned = id.pinnedInputs().getBytes(StandardCharsets.UTF_8);
        ByteBuffer buf =
                ByteBuffer.allocate(64 + pipeline.length + pinned.length)
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
            byte[] sha =
                    MessageDigest.getInstance("SHA-256")
                            .digest(Arrays.copyOf(buf.array(), buf.position()));
            return HexFormat.of().formatHex(sha).substring(0, DIGEST_HEX_CHARS);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JVM ships SHA-256", e);
        }
    }
}
