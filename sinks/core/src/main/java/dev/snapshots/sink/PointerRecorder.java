package dev.snapshots.sink;

import dev.snapshots.key.ObjectKeys;
import dev.snapshots.progress.CompletionPointer;
import dev.snapshots.progress.ReaderTable;
import dev.snapshots.progress.VersionIdentity;
import dev.snapshots.store.ObjectStore;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import org.apache.flink.annotation.Internal;
import org.apache.flink.metrics.Counter;
import org.apache.flink.metrics.Histogram;
import org.apache.flink.metrics.MetricGroup;
import org.apache.flink.runtime.metrics.DescriptiveStatisticsHistogram;
import org.apache.flink.streaming.api.connector.sink2.CommittableMessage;
import org.apache.flink.streaming.api.connector.sink2.CommittableSummary;
import org.apache.flink.streaming.api.connector.sink2.CommittableWithLineage;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Moves the completion pointer by what was published. The sink's post-commit task holds one (see
 * {@link CanonicalSnapshotSink#addPostCommitTopology}): it is given every committer subtask's
 * published parts and marks, so it knows, without reading the store, when the last subtask's mark
 * passes a window, and writes the pointer then: once a window, whatever the parallelism. Marks that
 * complete nothing, and the parts of windows still open, wait in memory for the write that
 * completes their window.
 *
 * <p>Lost memory costs requests, never correctness: a restarted task hears every subtask's mark
 * again at the next checkpoint, and a window's manifest lists the window's directory for any part
 * it was not told of. A committer holds one too, for the end of input only: see {@link
 * SnapshotCommitter}.
 *
 * <p>Parts come first: when the pointer cannot be read or written (the store failing past the
 * retries, an unreadable or newer pointer), the problem is counted ({@code progressFailures}) and
 * logged, and what was not recorded is tried again with the next window. Except for a recorder that
 * {@code mustLandEndOfInput}, at the end of input, where nothing comes after: when the store fails,
 * its {@link #record} fails instead, and Flink retries the commit.
 */
@Internal
public final class PointerRecorder implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(PointerRecorder.class);

    /**
     * See {@link #forgetBeyondBound}: about 10 MiB, a day and a half of five-minute windows at B =
     * 128.
     */
    static final int MAX_UNRECORDED_PARTS = 50_000;

    private final Backoff backoff;

    /** The sink's; its window length is 0 while not known: see {@link #windowLengthMillis}. */
    private final SnapshotSinkConfig<?> config;

    private final CompletionPointer.Scope scope;

    private final ObjectStore store;
    private final SnapshotCommittable.Run run;
    private final boolean mustLandEndOfInput;

    /** Writes the manifests of the windows one update completes, as many at once as parts. */
    private final ExecutorService manifestWriters;

    /**
     * The window length marks are floored to: the sink's, else its job version's, recorded with its
     * first part, which the first own part or the store tells (see {@link #resolveWindowLength}).
     * Until then nothing is complete: the version has published nothing.
     */
    private volatile long windowLengthMillis;

    /** Made once the window length is known; only on the thread that writes. */
    private CompletionPointer.Updater pointer;

    private final List<CompletionPointer.PublishedPart> unrecordedParts = new ArrayList<>();

    /**
     * Per run at a parallelism ({@link #runAtParallelism}) and subtask, the newest mark not
     * recorded yet.
     */
    private final Map<String, SnapshotCommittable> unrecordedMarks = new TreeMap<>();

    /**
     * The end of the newest own window published, as parts and marks tell it: what the run's marks
     * bound at end of input.
     */
    private long lastWindowEnd = Long.MIN_VALUE;

    /**
     * Per run at a parallelism: it, and each subtask's highest watermark, floored to a window when
     * a bound is taken.
     */
    private final Map<String, Integer> parallelism = new HashMap<>();

    private final Map<String, Map<Integer, Long>> committedThrough = new HashMap<>();

    /** Per run at a parallelism: the bound its marks proved when the pointer last took them. */
    private final Map<String, Long> recordedBound = new HashMap<>();

    /** Committables still to come of each committer subtask's batch, after its summary. */
    private final Map<Batch, Integer> outstanding = new HashMap<>();

    private volatile long completeThrough;
    private final Counter retries;
    private final Counter progressFailures;
    private final Histogram pointerMillis;

    private record Batch(long checkpoint, int subtask) {}

    /**
     * @param store the sink's store, open; the caller closes it
     * @param metrics where {@code completeThroughMillis}, {@code pointerMillis} and {@code
     *     progressFailures} go
     * @param retries counts the store's retried requests
     */
    public PointerRecorder(
            SnapshotSinkConfig<?> config,
            ObjectStore store,
            MetricGroup metrics,
            Counter retries,
            boolean mustLandEndOfInput) {
        this.retries = retries;
        this.backoff = config.backoff();
        this.config = config;
        this.scope = config.pointerScope();
        this.store = store;
        this.windowLengthMillis = scope.windowLengthMillis();
        this.run = config.run();
        this.mustLandEndOfInput = mustLandEndOfInput;
        this.manifestWriters = config.publishers("snapshot-manifests");
        metrics.gauge("completeThroughMillis", () -> completeThrough);
        this.pointerMillis =
                metrics.histogram("pointerMillis", new DescriptiveStatisticsHistogram(10_000));
        this.progressFailures = metrics.counter("progressFailures");
    }

    /** {@link #take}, then {@link #record} when a batch is whole: in the caller's thread. */
    public void accept(CommittableMessage<SnapshotCommittable> message)
            throws IOException, InterruptedException {
        if (take(message)) {
            record();
        }
    }

    /**
     * Holds one message of the committers' post-commit stream: each subtask's summary of a
     * checkpoint, then the committables it published.
     *
     * @return whether a subtask's batch is now whole, so an update may be {@link #due}
     */
    public boolean take(CommittableMessage<SnapshotCommittable> message) {
        Batch batch;
        if (message instanceof CommittableSummary<SnapshotCommittable> summary) {
            batch = new Batch(summary.getCheckpointIdOrEOI(), summary.getSubtaskId());
            outstanding.merge(batch, summary.getNumberOfCommittables(), Integer::sum);
        } else {
            CommittableWithLineage<SnapshotCommittable> published =
                    (CommittableWithLineage<SnapshotCommittable>) message;
            batch = new Batch(published.getCheckpointIdOrEOI(), published.getSubtaskId());
            SnapshotCommittable c = published.getCommittable();
            if (c.isMark()) {
                mark(c);
            } else {
                part(c, c.fingerprint(), c.rowCount());
            }
            outstanding.merge(batch, -1, Integer::sum);
        }
        if (outstanding.get(batch) <= 0) {
            outstanding.remove(batch);
            return true;
        }
        return false;
    }

    /**
     * A part that is published, under the canonical object's fingerprint and rows. Parts of another
     * job version (a replay commits the pending parts of the savepoint it restored from, into their
     * own namespace) are not this pointer's.
     */
    void part(SnapshotCommittable part, String fingerprint, long rows) {
        boolean own =
                ObjectKeys.parse(part.key())
                        .filter(
                                k ->
                                        k.kind() == run.kind()
                                                && k.pipeline().equals(run.pipeline())
                                                && k.jobVersion() == run.jobVersion())
                        .isPresent();
        if (own) {
            unrecordedParts.add(
                    new CompletionPointer.PublishedPart(
                            part.windowStartMillis(),
                            part.bucket(),
                            part.key(),
                            fingerprint,
                            rows));
            lastWindowEnd = Math.max(lastWindowEnd, part.windowEndMillis());
            if (windowLengthMillis == 0) {
                windowLengthMillis = part.windowEndMillis() - part.windowStartMillis();
            }
        }
    }

    /** A writer subtask's mark, once every part handed over with it is published. */
    void mark(SnapshotCommittable mark) {
        Optional<SnapshotCommittable.Run> of =
                mark.run()
                        .filter(
                                r ->
                                        r.pipeline().equals(run.pipeline())
                                                && r.jobVersion() == run.jobVersion()
                                                && r.kind() == run.kind());
        if (of.isEmpty() || mark.watermark() == Long.MIN_VALUE) {
            // From a savepoint of another job version, or from before marks named their run: not
            // ours to record.
            LOG.debug(
                    "Not recording {} in the pointer of {} v{}",
                    mark,
                    run.pipeline(),
                    run.jobVersion());
            return;
        }
        lastWindowEnd = Math.max(lastWindowEnd, mark.windowEndMillis());
        String id = runAtParallelism(mark);
        unrecordedMarks.merge(
                id + "/" + mark.subtask(), mark, (a, b) -> a.watermark() >= b.watermark() ? a : b);
        parallelism.put(id, mark.parallelism());
        committedThrough
                .computeIfAbsent(id, r -> new HashMap<>())
                .merge(mark.subtask(), mark.watermark(), Math::max);
    }

    /**
     * Writes the pointer if what is held completes a window (some run's every subtask is past a
     * window it was not past when last recorded) or carries the end of input; else nothing. In the
     * caller's thread: {@link #due}, {@link #write}, then {@link #recorded} or {@link #failed}.
     */
    void record() throws IOException, InterruptedException {
        Optional<Update> update = due();
        if (update.isEmpty()) {
            return;
        }
        Optional<Long> through;
        try {
            through = write(update.get());
        } catch (IOException | RuntimeException e) {
            failed(update.get(), e);
            return;
        }
        recorded(update.get(), through);
    }

    /**
     * What one pointer update writes: the marks and parts held when it was taken, and the bounds
     * their runs proved then.
     */
    public record Update(
            Map<String, SnapshotCommittable> taken,
            List<CompletionPointer.Mark> marks,
            List<CompletionPointer.PublishedPart> parts,
            Map<String, Long> bounds,
            boolean endOfInput,
            long startedNanos) {}

    /**
     * The update what is held calls for: when it completes a window or carries the end of input.
     * Otherwise empty, and the parts keep waiting here, within the bound.
     */
    public Optional<Update> due() {
        boolean endOfInput =
                unrecordedMarks.values().stream().anyMatch(m -> m.watermark() == Long.MAX_VALUE);
        if (!endOfInput
                && committedThrough.keySet().stream()
                        .noneMatch(r -> bound(r) > recordedBound.getOrDefault(r, Long.MIN_VALUE))) {
            forgetBeyondBound();
            return Optional.empty();
        }
        // Each with the newest window published so far, which a batch's mark may precede.
        List<CompletionPointer.Mark> marks =
                unrecordedMarks.values().stream()
                        .map(
                                m ->
                                        new CompletionPointer.Mark(
                                                runAtParallelism(m),
                                                m.parallelism(),
                                                m.subtask(),
                                                m.watermark(),
                                                lastWindowEnd))
                        .toList();
        Map<String, Long> bounds = new HashMap<>();
        committedThrough.keySet().forEach(r -> bounds.put(r, bound(r)));
        return Optional.of(
                new Update(
                        new HashMap<>(unrecordedMarks),
                        marks,
                        List.copyOf(unrecordedParts),
                        bounds,
                        endOfInput,
                        System.nanoTime()));
    }

    /**
     * Writes {@code update} to the store, with the sink's retries: the pointer task's update thread
     * calls it, one update at a time, while its mailbox goes on taking what committers send.
     *
     * @return how far windows are complete now, if the pointer is readable
     */
    public Optional<Long> write(Update update) throws IOException, InterruptedException {
        return backoff.run(
                retries,
                "record progress of " + scope.pipeline() + " v" + scope.jobVersion(),
                () -> {
                    if (pointer == null) {
                        if (!resolveWindowLength()) {
                            // Only the end of input is due without it: nothing was published.
                            return Optional.empty();
                        }
                        pointer =
                                new CompletionPointer.Updater(
                                        store, known().pointerScope(), manifestWriters);
                    }
                    return pointer.record(update.marks(), update.parts());
                });
    }

    /**
     * Whether the window length is known, reading the job version's identity if it is not: for a
     * sink that takes it from its rows, restarted after its version's first part. Store I/O: on the
     * thread that writes.
     */
    public boolean resolveWindowLength() throws IOException {
        if (windowLengthMillis == 0) {
            VersionIdentity.read(store, scope.kind(), scope.pipeline(), scope.jobVersion())
                    .ifPresent(recorded -> windowLengthMillis = recorded.windowLengthMillis());
        }
        return windowLengthMillis != 0;
    }

    /** The window length, 0 while not known. */
    public long windowLengthMillis() {
        return windowLengthMillis;
    }

    /** The sink's output as its reader table follows it, once the window length is known. */
    ReaderTable.Output readerOutput() {
        return known().readerOutput();
    }

    private SnapshotSinkConfig<?> known() {
        return config.windowLengthKnown() ? config : config.withWindowLength(windowLengthMillis);
    }

    /**
     * {@code update} landed: what it wrote is no longer held; what arrived while it was written is.
     * Until the next {@link #due}, parts are only added, so the update's are the oldest.
     */
    public void recorded(Update update, Optional<Long> through) {
        through.ifPresent(t -> completeThrough = t);
        recordedBound.putAll(update.bounds());
        unrecordedMarks.entrySet().removeIf(e -> update.taken().get(e.getKey()) == e.getValue());
        unrecordedParts.subList(0, update.parts().size()).clear();
        pointerMillis.update((System.nanoTime() - update.startedNanos()) / 1_000_000);
    }

    /**
     * {@code update} failed: counted and logged; what it held stays for the next window's update.
     *
     * @throws IOException for the end of input of a recorder that {@code mustLandEndOfInput}, when
     *     the store failed
     */
    public void failed(Update update, Exception e) throws IOException {
        progressFailures.inc();
        if (update.endOfInput()
                && mustLandEndOfInput
                && !(e instanceof CompletionPointer.ProgressException)) {
            // No later commit comes to try again: fail this one, so Flink retries it from the
            // checkpoint, or the bounded run fails for everyone to see. Not for a pointer this
            // release must leave alone (unreadable, a newer release's): every retry would meet
            // it again, and the run would never end.
            throw new IOException(
                    "the last update of the completion pointer of "
                            + scope.pipeline()
                            + " v"
                            + scope.jobVersion()
                            + " (end of input) could not be recorded; its parts are published",
                    e);
        }
        forgetBeyondBound();
        LOG.error(
                "Parts are published, but the completion pointer of {} v{} could not be updated: {}."
                        + " It is tried again with the next window; until then readers see it behind.",
                scope.pipeline(),
                scope.jobVersion(),
                e.toString());
    }

    /** How many published parts wait for their window to complete. */
    int heldParts() {
        return unrecordedParts.size();
    }

    @Override
    public void close() {
        manifestWriters.shutdownNow();
    }

    /**
     * What the pointer keys a mark's run by: the run's id and its parallelism. A subtask's mark
     * speaks of the buckets its index owns at that parallelism, and an in-place rescale (the
     * adaptive scheduler, reactive mode, an autoscaler) keeps the run's id while it moves buckets
     * between indices: marks of two parallelisms never combine, so the old indices neither hold the
     * pointer back after a scale-in nor vouch for buckets they did not own after a scale-out. A
     * parallelism seen again owns the same buckets again (Flink's key-group ranges are a function
     * of it), and its old marks stay true: what they vouch for was published.
     */
    private static String runAtParallelism(SnapshotCommittable mark) {
        return mark.run().orElseThrow().id() + "@" + mark.parallelism();
    }

    /**
     * What a run's marks prove, as far as this recorder heard them: see {@code Progress}. The
     * lowest watermark floored, as the floor of each is no lower.
     */
    private long bound(String run) {
        Map<Integer, Long> marks = committedThrough.get(run);
        long length = windowLengthMillis;
        if (marks.size() < parallelism.get(run) || length == 0) {
            return Long.MIN_VALUE;
        }
        return CompletionPointer.committedThrough(
                marks.values().stream().mapToLong(Long::longValue).min().orElseThrow(), length);
    }

    /**
     * While the pointer cannot be written (unreadable, or from a newer release after a rollback),
     * or no window completes (a subtask that stopped marking), published parts pile up here. Past a
     * bound the oldest are let go: the manifest of a window not fully recorded lists its directory
     * and finds them there, so only requests are lost.
     */
    private void forgetBeyondBound() {
        int excess = unrecordedParts.size() - MAX_UNRECORDED_PARTS;
        if (excess > 0) {
            unrecordedParts.subList(0, excess).clear();
            LOG.warn(
                    "Keeping the newest {} published parts for the completion pointer of {} v{};"
                            + " {} older ones will be found by listing their windows",
                    MAX_UNRECORDED_PARTS,
                    scope.pipeline(),
                    scope.jobVersion(),
                    excess);
        }
    }
}
