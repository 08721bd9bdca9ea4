package dev.snapshots.sink;

import dev.snapshots.format.RowFormat;
import dev.snapshots.key.ObjectKeys;
import dev.snapshots.key.PartMetadata;
import dev.snapshots.key.WorkIdentity;
import dev.snapshots.store.Chunks;
import dev.snapshots.store.ObjectStore;
import dev.snapshots.store.StagedObject;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.flink.api.common.eventtime.Watermark;
import org.apache.flink.api.connector.sink2.CommittingSinkWriter;
import org.apache.flink.api.connector.sink2.StatefulSinkWriter;
import org.apache.flink.api.connector.sink2.WriterInitContext;
import org.apache.flink.metrics.Counter;
import org.apache.flink.runtime.execution.SuppressRestartsException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Encodes each part and stages it; hands the committables over at the checkpoint barrier, followed
 * by a progress mark carrying this subtask's watermark and the end of the newest window it handed
 * over. That end is its state: a restored writer still knows it, and so does the mark that ends the
 * input, whatever failed over in between.
 */
final class SnapshotWriter<T>
        implements CommittingSinkWriter<SnapshotPart<T>, SnapshotCommittable>,
                StatefulSinkWriter<SnapshotPart<T>, SnapshotWriter.State> {
    private static final Logger LOG = LoggerFactory.getLogger(SnapshotWriter.class);

    /** Once its window length is known: the configured one, its version's, or the first part's. */
    private SnapshotSinkConfig<T> config;

    private final int maxParallelism;
    private final RowFormat<T> format;
    private final ObjectStore store;
    private final Map<String, String> provenance;
    private final int subtask;
    private final int parallelism;
    private final Counter staged;
    private final Counter inline;
    private final Counter retries;
    private final List<SnapshotCommittable> pending = new ArrayList<>();

    /**
     * Every part is built here: it is staged (or copied to travel inline) before the next one
     * starts, so its chunks serve part after part, and the writer holds its largest part's size.
     */
    private final Chunks partBytes = new Chunks();

    private long watermark = Long.MIN_VALUE;
    private long lastWindowEnd;

    /**
     * @param maxParallelism the one buckets are laid out over
     * @param restored the states of the subtasks this one restores (several after a scale-in, none
     *     after a scale-out or on a first start): the newest window end among those of its own
     *     pipeline, job version and kind (a replay restores another version's, whose windows are
     *     not its own)
     */
    SnapshotWriter(
            SnapshotSinkConfig<T> config,
            int maxParallelism,
            WriterInitContext context,
            Collection<State> restored)
            throws IOException {
        SnapshotCommittable.Run run = config.run();
        this.lastWindowEnd =
                restored.stream()
                        .filter(
                                r ->
                                        r.run().pipeline().equals(run.pipeline())
                                                && r.run().jobVersion() == run.jobVersion()
                                                && r.run().kind() == run.kind())
                        .mapToLong(State::lastWindowEndMillis)
                        .max()
                        .orElse(Long.MIN_VALUE);
        this.maxParallelism = maxParallelism;
        this.format = config.rowFormat();
        this.store = config.store().open();
        this.provenance = Provenance.of(context.getJobInfo().getJobId().toHexString());
        this.subtask = context.getTaskInfo().getIndexOfThisSubtask();
        this.parallelism = context.getTaskInfo().getNumberOfParallelSubtasks();
        this.staged = context.metricGroup().counter("partsStaged");
        this.inline = context.metricGroup().counter("partsInline");
        this.retries = context.metricGroup().counter("stageRetries");
        // A checkpoint of this run was taken by its writers once each had opened, so after they
        // proved the store and read the job version's identity (the run's config names that store
        // and version; a new submission is a new run): asking again would only delay the restart.
        // A state kept before the scheme was (version 1) has the identity read again.
        boolean ownRunRestored = restored.stream().anyMatch(r -> r.run().equals(run));
        Optional<SnapshotSinkConfig<T>> known =
                restored.stream().flatMap(r -> r.applyTo(config).stream()).findFirst();
        long checking = System.nanoTime();
        String checked;
        if (known.isPresent()) {
            this.config = known.get();
            checked =
                    "nothing (it restores a checkpoint of its own run "
                            + run.id()
                            + ", whose writers proved the store and read the identity as the run"
                            + " started; fingerprint scheme "
                            + this.config.fingerprintScheme()
                            + ")";
        } else {
            this.config =
                    Preflight.inWriter(config, maxParallelism, store, retries, !ownRunRestored);
            checked =
                    ownRunRestored
                            ? "the job version's identity (not probed for conformance again: it"
                                    + " restores a checkpoint of its own run "
                                    + run.id()
                                    + ", whose writers proved it as the run started)"
                            : "its conformance, unless this process proved it, and the job"
                                    + " version's identity";
        }
        // Timed, because a restarting task waits for it: the chaos report reads it here.
        LOG.info(
                "Subtask {} checked {} in {} ms before publishing: {}",
                subtask,
                store.describe(),
                Duration.ofNanos(System.nanoTime() - checking).toMillis(),
                checked);
    }

    @Override
    public void write(SnapshotPart<T> part, Context context)
            throws IOException, InterruptedException {
        requireWindow(part);
        requireBucket(part);
        prepare(part.getWindowStartMillis(), part.getBucket(), part.getRows());
    }

    /**
     * Rows that say their window must all say the part's, and its length must be the job version's
     * one: the configured length, else the one the version recorded, else this first part's, which
     * is recorded now, before anything of it is published. A refusal fails the job without
     * restarts, which would meet the same rows.
     */
    private void requireWindow(SnapshotPart<T> part) throws IOException {
        RowWindow<T> window = config.rowWindow().orElse(null);
        if (window == null || part.getRows().isEmpty()) {
            return;
        }
        long start = part.getWindowStartMillis();
        long end = window.endMillis(part.getRows().get(0));
        for (T row : part.getRows()) {
            if (window.startMillis(row) != start || window.endMillis(row) != end) {
                throw refuse(
                        "a part of the window "
                                + window(start, end)
                                + " that holds a row of the window "
                                + window(window.startMillis(row), window.endMillis(row)));
            }
        }
        long length = end - start;
        if (!config.windowLengthKnown()) {
            SnapshotSinkConfig<T> first;
            try {
                first = config.withWindowLength(length);
            } catch (IllegalArgumentException e) {
                throw refuse("rows of the window " + window(start, end) + ": " + e.getMessage());
            }
            // The store was checked (or known proven) as this writer opened.
            config = Preflight.inWriter(first, maxParallelism, store, retries, false);
            LOG.info(
                    "{} v={} writes windows of {}, as its first part's rows say",
                    config.pipeline(),
                    config.jobVersion(),
                    Duration.ofMillis(length));
        } else if (length != config.windowLengthMillis()) {
            throw refuse(
                    "rows of the window "
                            + window(start, end)
                            + ", "
                            + Duration.ofMillis(length)
                            + " long, while its windows are "
                            + Duration.ofMillis(config.windowLengthMillis())
                            + " long (the sink's window length, or the one its first write recorded"
                            + " in its identity): a job version holds windows of one length. Write"
                            + " windows of that length, or write these into a new job version");
        }
    }

    private static String window(long start, long end) {
        return "[" + Instant.ofEpochMilli(start) + ", " + Instant.ofEpochMilli(end) + ")";
    }

    private SuppressRestartsException refuse(String what) {
        return new SuppressRestartsException(
                new IllegalStateException(
                        config.pipeline() + " v=" + config.jobVersion() + " was given " + what));
    }

    /**
     * A part built upstream (the assembling window, or a job's own) must hold its bucket's rows
     * only; {@link WindowRowsWriter} places rows by their key groups itself.
     */
    private void requireBucket(SnapshotPart<T> part) {
        for (T row : part.getRows()) {
            String key = format.key(row);
            int bucket = config.bucketOf(key, maxParallelism);
            if (bucket != part.getBucket()) {
                throw new IllegalArgumentException(
                        "row with key '"
                                + key
                                + "' belongs to bucket "
                                + bucket
                                + " but arrived in the part for "
                                + config.identity(part.getWindowStartMillis(), part.getBucket())
                                + " ("
                                + config.bucketing()
                                + " bucketing)");
            }
        }
    }

    /** Encodes the part of (window, bucket) and stages it, or keeps it to travel inline. */
    void prepare(long windowStartMillis, int bucket, List<T> partRows)
            throws IOException, InterruptedException {
        WorkIdentity id = config.identity(windowStartMillis, bucket);
        EncodedPart part =
                EncodedPart.of(
                        config.kind(),
                        format,
                        config.schemaVersion(),
                        config.fingerprintScheme(),
                        partRows,
                        partBytes);
        Chunks file = part.file();
        String fingerprint = part.fingerprint();
        int rows = part.rows();
        String key = ObjectKeys.partKey(config.kind(), id);
        lastWindowEnd = Math.max(lastWindowEnd, id.windowEndMillis());

        Map<String, String> metadata = new HashMap<>(provenance);
        metadata.putAll(PartMetadata.of(id, fingerprint, rows));

        if (file.length() <= config.inlineThresholdBytes()) {
            pending.add(
                    SnapshotCommittable.inline(
                            key,
                            id.windowStartMillis(),
                            id.windowEndMillis(),
                            id.bucket(),
                            fingerprint,
                            rows,
                            metadata,
                            file.toByteArray()));
            inline.inc();
        } else {
            StagedObject upload =
                    config.backoff()
                            .run(retries, "stage " + key, () -> store.stage(key, file, metadata));
            pending.add(
                    SnapshotCommittable.staged(
                            id.windowStartMillis(),
                            id.windowEndMillis(),
                            id.bucket(),
                            fingerprint,
                            rows,
                            metadata,
                            upload));
            staged.inc();
        }
        LOG.debug(
                "Prepared {} ({} rows, {} bytes, fingerprint {})",
                key,
                rows,
                file.length(),
                fingerprint);
    }

    @Override
    public void writeWatermark(Watermark watermark) {
        this.watermark = Math.max(this.watermark, watermark.getTimestamp());
    }

    @Override
    public void flush(boolean endOfInput) {
        // Parts are staged as they arrive; nothing is buffered here.
    }

    @Override
    public Collection<SnapshotCommittable> prepareCommit() {
        List<SnapshotCommittable> out = new ArrayList<>(pending);
        out.add(
                SnapshotCommittable.mark(
                        config.run(), subtask, parallelism, watermark, lastWindowEnd));
        pending.clear();
        return out;
    }

    /**
     * What a writer keeps in checkpoints: the newest window end its run has handed over, and what
     * its run's writers learned from the store as they opened: the fingerprint scheme and the
     * window length ({@link #UNKNOWN} in a state written before they were kept, version 1, and the
     * window length until the run knows it).
     */
    record State(
            SnapshotCommittable.Run run,
            long lastWindowEndMillis,
            int fingerprintScheme,
            long windowLengthMillis) {
        static final int UNKNOWN = 0;

        /** What the store told this state's run, if the state says it. */
        <T> Optional<SnapshotSinkConfig<T>> applyTo(SnapshotSinkConfig<T> config) {
            if (!run.equals(config.run()) || fingerprintScheme == UNKNOWN) {
                return Optional.empty();
            }
            SnapshotSinkConfig<T> known = config.withFingerprintScheme(fingerprintScheme);
            return Optional.of(
                    known.windowLengthKnown() || windowLengthMillis == UNKNOWN
                            ? known
                            : known.withWindowLength(windowLengthMillis));
        }
    }

    @Override
    public List<State> snapshotState(long checkpointId) {
        return List.of(
                new State(
                        config.run(),
                        lastWindowEnd,
                        config.fingerprintScheme(),
                        config.windowLengthKnown() ? config.windowLengthMillis() : State.UNKNOWN));
    }

    @Override
    public void close() {
        store.close();
    }
}
