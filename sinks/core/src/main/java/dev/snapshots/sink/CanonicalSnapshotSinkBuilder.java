package dev.snapshots.sink;

import dev.snapshots.format.FlatRowFormat;
import dev.snapshots.format.PartEncoding;
import dev.snapshots.format.RowFormat;
import dev.snapshots.key.PartKind;
import dev.snapshots.key.WorkIdentity;
import dev.snapshots.progress.ReaderTable;
import dev.snapshots.store.StoreSpec;
import java.time.Duration;
import java.util.Objects;
import java.util.UUID;
import org.apache.flink.annotation.PublicEvolving;

/** Builds a {@link CanonicalSnapshotSink}; every setting is checked in {@link #build()}. */
@PublicEvolving
public final class CanonicalSnapshotSinkBuilder<T> {
    public static final Duration DEFAULT_WINDOW_LENGTH = Duration.ofMinutes(5);
    public static final int DEFAULT_SCHEMA_VERSION = 1;

    /**
     * Parts up to this size travel inline in the checkpoint and are published with one conditional
     * PutObject; larger parts are uploaded before the checkpoint (a multipart upload completed at
     * commit). 1 MiB keeps a checkpoint's share of in-flight parts at B x 1 MiB per window while
     * saving two requests per small part; above it, sending bytes through the checkpoint would cost
     * more than the extra requests.
     */
    public static final int DEFAULT_INLINE_THRESHOLD_BYTES = 1 << 20;

    /**
     * Parts of one commit published at a time. A commit holds every part closed since the previous
     * checkpoint, each one or two round trips to S3, so publishing them one by one makes the commit
     * as slow as their sum (docs/BENCHMARKS.md measures it). Parts have distinct keys, so their
     * order does not matter.
     */
    public static final int DEFAULT_PUBLISH_CONCURRENCY = 8;

    private String pipeline;
    private Integer jobVersion;
    private int schemaVersion = DEFAULT_SCHEMA_VERSION;
    private Integer bucketCount;
    private Bucketing bucketing = Bucketing.KEY_GROUPS;

    /** Null: {@link #DEFAULT_WINDOW_LENGTH}, or the rows' with a {@link #rowWindow}. */
    private Duration windowLength;

    private RowWindow<T> rowWindow;
    private String pinnedInputs = "";
    private StoreSpec store;
    private RowFormat<T> rowFormat;
    private int inlineThresholdBytes = DEFAULT_INLINE_THRESHOLD_BYTES;
    private Backoff backoff = Backoff.DEFAULT;
    private int publishConcurrency = DEFAULT_PUBLISH_CONCURRENCY;
    private PartKind kind = PartKind.SNAPSHOT;
    private int maxParallelism;
    private String assemblyUid;
    private String sinkUid;
    private ReaderTable readerTable;

    CanonicalSnapshotSinkBuilder() {}

    /** The pipeline name, the first segment of every key. */
    public CanonicalSnapshotSinkBuilder<T> pipeline(String pipeline) {
        this.pipeline = pipeline;
        return this;
    }

    /** Bump to replay history or change logic: a new version writes a new namespace. */
    public CanonicalSnapshotSinkBuilder<T> jobVersion(int jobVersion) {
        this.jobVersion = jobVersion;
        return this;
    }

    /** Bump when the row format changes. */
    public CanonicalSnapshotSinkBuilder<T> schemaVersion(int schemaVersion) {
        this.schemaVersion = schemaVersion;
        return this;
    }

    /** B: fixed per job version, independent of parallelism. */
    public CanonicalSnapshotSinkBuilder<T> bucketCount(int bucketCount) {
        this.bucketCount = bucketCount;
        return this;
    }

    /**
     * Which rows share a part; {@link Bucketing#KEY_GROUPS} by default. Fixed per job version: a
     * job version started with {@link Bucketing#HASH} (every version the first release wrote) keeps
     * it.
     */
    public CanonicalSnapshotSinkBuilder<T> bucketing(Bucketing bucketing) {
        this.bucketing = bucketing;
        return this;
    }

    /**
     * The windows' length: whole minutes that divide a day. {@link #DEFAULT_WINDOW_LENGTH} when not
     * given, unless a {@link #rowWindow} gives it.
     */
    public CanonicalSnapshotSinkBuilder<T> windowLength(Duration windowLength) {
        this.windowLength = Objects.requireNonNull(windowLength, "window length");
        return this;
    }

    /**
     * Rows that say their window (a SQL window's rows): {@link CanonicalSnapshotSink#assemble}
     * places each row in its own window instead of tumbling windows it computes. Without a {@link
     * #windowLength}, the length is the rows': the first part of a job version records its window's
     * length in the version's identity, as it records B, and a part of another length fails the job
     * (as does a later run with another). With one, every row's window must be that long. {@link
     * CanonicalSnapshotSink#writeWindows} needs a window length.
     */
    public CanonicalSnapshotSinkBuilder<T> rowWindow(RowWindow<T> rowWindow) {
        this.rowWindow = Objects.requireNonNull(rowWindow, "row window");
        return this;
    }

    /** Fingerprint (lower-case hex) of reference inputs the job pins; part of the identity. */
    public CanonicalSnapshotSinkBuilder<T> pinnedInputs(String fingerprint) {
        this.pinnedInputs = fingerprint;
        return this;
    }

    public CanonicalSnapshotSinkBuilder<T> store(StoreSpec store) {
        this.store = store;
        return this;
    }

    public CanonicalSnapshotSinkBuilder<T> rowFormat(RowFormat<T> rowFormat) {
        this.rowFormat = rowFormat;
        return this;
    }

    /** See {@link #DEFAULT_INLINE_THRESHOLD_BYTES}; 0 stages every part. */
    public CanonicalSnapshotSinkBuilder<T> inlineThresholdBytes(int bytes) {
        this.inlineThresholdBytes = bytes;
        return this;
    }

    public CanonicalSnapshotSinkBuilder<T> retries(Backoff backoff) {
        this.backoff = backoff;
        return this;
    }

    /** See {@link #DEFAULT_PUBLISH_CONCURRENCY}; 1 publishes a commit's parts one by one. */
    public CanonicalSnapshotSinkBuilder<T> publishConcurrency(int parts) {
        this.publishConcurrency = parts;
        return this;
    }

    /**
     * The max parallelism whose key groups the buckets are laid out over: with {@link
     * Bucketing#KEY_GROUPS} the window's, which B must divide; with {@link Bucketing#HASH} the
     * assembling operator's, which B may exceed (buckets then share key groups). By default the
     * environment's, or 128 when it sets none. Like B, fixed per job version.
     */
    public CanonicalSnapshotSinkBuilder<T> maxParallelism(int maxParallelism) {
        this.maxParallelism = maxParallelism;
        return this;
    }

    /**
     * The uids of the operator that assembles parts and of the sink: savepoints know them by these,
     * so they must not change while the job lives. By default {@code snapshot-parts} and {@code
     * snapshots} ({@code dead-letter-parts} and {@code dead-letters} for {@link #deadLetters()}); a
     * job with several snapshot outputs names each.
     */
    public CanonicalSnapshotSinkBuilder<T> uids(String assemblyUid, String sinkUid) {
        this.assemblyUid = assemblyUid;
        this.sinkUid = sinkUid;
        return this;
    }

    /**
     * Publish rejected input as JSON lines under {@code _deadletter/} instead of Parquet snapshots.
     */
    public CanonicalSnapshotSinkBuilder<T> deadLetters() {
        this.kind = PartKind.DEAD_LETTER;
        return this;
    }

    /**
     * Keeps a table that readers query up with the completion pointer: each complete window is
     * added to it once, whole (for example {@code IcebergTable} of {@code snapshots-sink-iceberg}).
     * Snapshots only; dead letters have no reader table.
     */
    public CanonicalSnapshotSinkBuilder<T> readerTable(ReaderTable table) {
        this.readerTable = Objects.requireNonNull(table, "reader table");
        return this;
    }

    public CanonicalSnapshotSink<T> build() {
        WorkIdentity.requirePipeline(pipeline);
        if (jobVersion == null) {
            throw new IllegalArgumentException(
                    "job version is required: it names the namespace the job writes into");
        }
        if (bucketCount == null) {
            throw new IllegalArgumentException(
                    "bucket count is required: it is part of every key and must not follow parallelism");
        }
        long windowLengthMillis =
                windowLength != null
                        ? windowLength.toMillis()
                        : rowWindow != null ? 0 : DEFAULT_WINDOW_LENGTH.toMillis();
        if (windowLength != null) {
            WorkIdentity.requireWindowLength(windowLengthMillis);
        }
        Objects.requireNonNull(
                store, "store is required, e.g. StoreSpec.parse(\"s3://bucket/prefix\")");
        Objects.requireNonNull(rowFormat, "row format is required");
        if (rowFormat instanceof FlatRowFormat<T>) {
            PartEncoding.requireFlat(rowFormat.schema());
        }
        Objects.requireNonNull(backoff, "retries");
        if (inlineThresholdBytes < 0) {
            throw new IllegalArgumentException(
                    "inline threshold must be >= 0 bytes, got " + inlineThresholdBytes);
        }
        if (publishConcurrency < 1) {
            throw new IllegalArgumentException(
                    "publish concurrency must be >= 1 part at a time, got " + publishConcurrency);
        }
        if (maxParallelism < 0) {
            throw new IllegalArgumentException(
                    "max parallelism must be >= 1 (or 0: the environment's), got "
                            + maxParallelism);
        }
        Objects.requireNonNull(bucketing, "bucketing");
        if (maxParallelism > 0) {
            bucketing.requireWholeKeyGroups(bucketCount, maxParallelism);
        }
        boolean snapshots = kind == PartKind.SNAPSHOT;
        if (readerTable != null && !snapshots) {
            throw new IllegalArgumentException(
                    "dead letters have no reader table: give it to the snapshots' sink");
        }
        SnapshotSinkConfig.Topology topology =
                new SnapshotSinkConfig.Topology(
                        maxParallelism,
                        Objects.requireNonNullElse(
                                assemblyUid, snapshots ? "snapshot-parts" : "dead-letter-parts"),
                        Objects.requireNonNullElse(
                                sinkUid, snapshots ? "snapshots" : "dead-letters"));
        // A run per build: the job as submitted. Its restarts share it; a new submission gets
        // another.
        SnapshotSinkConfig<T> config =
                new SnapshotSinkConfig<>(
                        pipeline,
                        jobVersion,
                        schemaVersion,
                        SnapshotSinkConfig.SCHEME_UNCHECKED,
                        bucketCount,
                        bucketing,
                        windowLengthMillis,
                        rowWindow,
                        pinnedInputs,
                        store,
                        rowFormat,
                        inlineThresholdBytes,
                        publishConcurrency,
                        backoff,
                        kind,
                        UUID.randomUUID().toString(),
                        topology,
                        readerTable);
        // Validates the identity's fields now, not on the first record; a length the rows give is
        // checked when they give it.
        (config.windowLengthKnown() ? config : config.withWindowLength(60_000)).identity(0, 0);
        return new CanonicalSnapshotSink<>(config);
    }
}
