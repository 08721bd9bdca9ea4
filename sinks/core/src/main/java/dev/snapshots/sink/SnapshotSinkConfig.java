package dev.snapshots.sink;

import dev.snapshots.format.PartEncoding;
import dev.snapshots.format.RowFormat;
import dev.snapshots.key.ObjectKeys;
import dev.snapshots.key.PartKind;
import dev.snapshots.key.WorkIdentity;
import dev.snapshots.progress.CompletionPointer;
import dev.snapshots.progress.ReaderTable;
import dev.snapshots.progress.VersionIdentity;
import dev.snapshots.store.StoreSpec;
import java.io.Serializable;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.apache.flink.annotation.Internal;

/**
 * Everything a sink is configured with; immutable, built by {@link CanonicalSnapshotSinkBuilder}.
 */
@Internal
public final class SnapshotSinkConfig<T> implements Serializable {
    private static final long serialVersionUID = 1L;

    private final String pipeline;
    private final int jobVersion;
    private final int schemaVersion;

    /**
     * How parts are fingerprinted: {@link #SCHEME_UNCHECKED} until a writer has checked the job
     * version's identity, which gives the recorded scheme, or this release's for a new version
     * ({@link #withFingerprintScheme}).
     */
    private final int fingerprintScheme;

    /**
     * Not known yet. A part encoded under a guessed scheme would carry another fingerprint than its
     * job version's other parts, and be reported divergent from them; so asking is refused.
     */
    static final int SCHEME_UNCHECKED = 0;

    private final int bucketCount;
    private final Bucketing bucketing;

    /**
     * 0 while not known: taken from the rows' {@link #rowWindow}, see {@link #withWindowLength}.
     */
    private final long windowLengthMillis;

    private final RowWindow<T> rowWindow;
    private final String pinnedInputs;
    private final StoreSpec store;
    private final RowFormat<T> rowFormat;
    private final int inlineThresholdBytes;
    private final int publishConcurrency;
    private final Backoff backoff;
    private final PartKind kind;
    private final String runId;
    private final Topology topology;
    private final ReaderTable readerTable;

    /**
     * How the output is laid out: the max parallelism of the operator whose key groups the buckets
     * are drawn from (0: {@link CanonicalSnapshotSink} takes the environment's, or 128) and the
     * uids of the assembling operator and the sink, which savepoints know them by.
     */
    record Topology(int maxParallelism, String assemblyUid, String sinkUid)
            implements Serializable {}

    SnapshotSinkConfig(
            String pipeline,
            int jobVersion,
            int schemaVersion,
            int fingerprintScheme,
            int bucketCount,
            Bucketing bucketing,
            long windowLengthMillis,
            RowWindow<T> rowWindow,
            String pinnedInputs,
            StoreSpec store,
            RowFormat<T> rowFormat,
            int inlineThresholdBytes,
            int publishConcurrency,
            Backoff backoff,
            PartKind kind,
            String runId,
            Topology topology,
            ReaderTable readerTable) {
        this.pipeline = pipeline;
        this.jobVersion = jobVersion;
        this.schemaVersion = schemaVersion;
        this.fingerprintScheme = fingerprintScheme;
        this.bucketCount = bucketCount;
        this.bucketing = bucketing;
        this.windowLengthMillis = windowLengthMillis;
        this.rowWindow = rowWindow;
        this.pinnedInputs = pinnedInputs;
        this.store = store;
        this.rowFormat = rowFormat;
        this.inlineThresholdBytes = inlineThresholdBytes;
        this.publishConcurrency = publishConcurrency;
        this.backoff = backoff;
        this.kind = kind;
        this.runId = runId;
        this.topology = topology;
        this.readerTable = readerTable;
    }

    int maxParallelism() {
        return topology.maxParallelism();
    }

    /**
     * The bucket of a row's key, by this output's {@link Bucketing}, over the max parallelism the
     * sink resolved (the builder's, else the environment's, else 128).
     */
    public int bucketOf(String key, int maxParallelism) {
        return bucketing.bucketOf(key, bucketCount, maxParallelism);
    }

    String assemblyUid() {
        return topology.assemblyUid();
    }

    String sinkUid() {
        return topology.sinkUid();
    }

    /**
     * The identity of one part of this sink's output.
     *
     * @throws IllegalStateException while the window length is not known
     */
    public WorkIdentity identity(long windowStartMillis, int bucket) {
        if (!windowLengthKnown()) {
            throw new IllegalStateException(
                    "the window length of " + pipeline + " v=" + jobVersion + " is not known yet");
        }
        return new WorkIdentity(
                pipeline,
                windowStartMillis,
                windowLengthMillis,
                jobVersion,
                schemaVersion,
                bucket,
                bucketCount,
                pinnedInputs);
    }

    public String pipeline() {
        return pipeline;
    }

    public int jobVersion() {
        return jobVersion;
    }

    public int schemaVersion() {
        return schemaVersion;
    }

    /** {@link dev.snapshots.format.PartEncoding#FINGERPRINT_AVRO} or {@code FINGERPRINT_TYPED}. */
    public int fingerprintScheme() {
        if (fingerprintScheme == SCHEME_UNCHECKED) {
            throw new IllegalStateException(
                    "the fingerprint scheme of "
                            + pipeline
                            + " v="
                            + jobVersion
                            + " is not known before its identity is checked: a writer checks it"
                            + " (Preflight) before it encodes a part");
        }
        return fingerprintScheme;
    }

    public int bucketCount() {
        return bucketCount;
    }

    public Bucketing bucketing() {
        return bucketing;
    }

    /** The windows' length; 0 while it is to be taken from the rows and no row gave it yet. */
    public long windowLengthMillis() {
        return windowLengthMillis;
    }

    public boolean windowLengthKnown() {
        return windowLengthMillis != 0;
    }

    /** How rows say their window, if they do: the sink then places each row by it. */
    public Optional<RowWindow<T>> rowWindow() {
        return Optional.ofNullable(rowWindow);
    }

    /**
     * This configuration with the window length a job version's identity or its rows gave; the same
     * run, so a writer's marks stay its run's.
     *
     * @throws IllegalArgumentException if keys cannot name windows of that length
     */
    public SnapshotSinkConfig<T> withWindowLength(long windowLengthMillis) {
        WorkIdentity.requireWindowLength(windowLengthMillis);
        return new SnapshotSinkConfig<>(this, windowLengthMillis, fingerprintScheme);
    }

    /**
     * This configuration with the fingerprint scheme its job version recorded: a version keeps the
     * scheme its first parts were written with, so that two executions' fingerprints of a part
     * compare, and so do an audit's of its file.
     */
    public SnapshotSinkConfig<T> withFingerprintScheme(int fingerprintScheme) {
        return new SnapshotSinkConfig<>(this, windowLengthMillis, fingerprintScheme);
    }

    private SnapshotSinkConfig(
            SnapshotSinkConfig<T> base, long windowLengthMillis, int fingerprintScheme) {
        this(
                base.pipeline,
                base.jobVersion,
                base.schemaVersion,
                fingerprintScheme,
                base.bucketCount,
                base.bucketing,
                windowLengthMillis,
                base.rowWindow,
                base.pinnedInputs,
                base.store,
                base.rowFormat,
                base.inlineThresholdBytes,
                base.publishConcurrency,
                base.backoff,
                base.kind,
                base.runId,
                base.topology,
                base.readerTable);
    }

    public StoreSpec store() {
        return store;
    }

    public RowFormat<T> rowFormat() {
        return rowFormat;
    }

    public int inlineThresholdBytes() {
        return inlineThresholdBytes;
    }

    public int publishConcurrency() {
        return publishConcurrency;
    }

    /**
     * {@link #publishConcurrency} daemon threads named {@code name}, started as work comes: the
     * store requests of one commit or one pointer update that may run at once.
     */
    ExecutorService publishers(String name) {
        return Executors.newFixedThreadPool(
                publishConcurrency,
                r -> {
                    Thread t = new Thread(r, name);
                    t.setDaemon(true);
                    return t;
                });
    }

    public Backoff backoff() {
        return backoff;
    }

    public PartKind kind() {
        return kind;
    }

    /** The run of this sink that a writer's marks belong to. */
    public SnapshotCommittable.Run run() {
        return new SnapshotCommittable.Run(pipeline, jobVersion, kind, runId);
    }

    /**
     * What this output's keys and bucket assignment depend on, laid out over {@code
     * maxParallelism}: recorded per job version, see {@link VersionIdentity}. Its window length is
     * 0 while not known, which a comparison skips.
     */
    public VersionIdentity versionIdentity(int maxParallelism) {
        return new VersionIdentity(
                kind,
                pipeline,
                jobVersion,
                schemaVersion,
                VersionIdentity.schemaFingerprint(rowFormat.schema()),
                bucketCount,
                bucketing.name(),
                bucketing == Bucketing.KEY_GROUPS ? maxParallelism : 0,
                windowLengthMillis,
                pinnedInputs,
                ObjectKeys.KEY_SCHEME,
                fingerprintScheme == SCHEME_UNCHECKED
                        ? PartEncoding.FINGERPRINT_SCHEME
                        : fingerprintScheme);
    }

    /** The table readers query that the sink keeps up with its pointer, if it was given one. */
    public Optional<ReaderTable> readerTable() {
        return Optional.ofNullable(readerTable);
    }

    /** This sink's output as its reader table follows it. */
    public ReaderTable.Output readerOutput() {
        return new ReaderTable.Output(store, pointerScope(), rowFormat.schema());
    }

    /**
     * What the completion pointer of this sink's output is about; its window length is 0 while not
     * known.
     */
    public CompletionPointer.Scope pointerScope() {
        return new CompletionPointer.Scope(
                kind, pipeline, jobVersion, schemaVersion, bucketCount, windowLengthMillis);
    }
}
