package dev.snapshots.sink;

import dev.snapshots.key.ObjectKeys;
import dev.snapshots.key.PartMetadata;
import dev.snapshots.progress.ReaderTable;
import dev.snapshots.store.ObjectStore;
import dev.snapshots.store.ObjectStore.ObjectInfo;
import dev.snapshots.store.StagedObject;
import dev.snapshots.store.StoreException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import org.apache.flink.api.connector.sink2.Committer;
import org.apache.flink.metrics.Counter;
import org.apache.flink.metrics.Histogram;
import org.apache.flink.metrics.MetricGroup;
import org.apache.flink.metrics.ThreadSafeSimpleCounter;
import org.apache.flink.metrics.groups.UnregisteredMetricsGroup;
import org.apache.flink.runtime.metrics.DescriptiveStatisticsHistogram;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.SerializationFeature;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Publishes parts after their checkpoint completed, with create-if-absent semantics.
 *
 * <p>Assumptions, and why re-committing is always safe: the key is a pure function of the work; an
 * existing object at the key was published by some execution of the same work; its metadata carries
 * the fingerprint of its content. So every commit ends in one of:
 *
 * <ul>
 *   <li><b>created</b>: this execution won.
 *   <li><b>collapsed</b>: the object exists with the same fingerprint (another execution, or this
 *       committable before a restart); {@code signalAlreadyCommitted}, and a record of it under
 *       {@code _collapsed/} (one per part and Flink job) for the store's page.
 *   <li><b>divergent</b>: the object exists with a different fingerprint. The first object stays
 *       canonical; evidence with both fingerprints and both writers goes under {@code
 *       _divergence/}; the request is {@code signalFailedWithKnownReason} (Flink counts it in
 *       {@code numCommittablesFailure} and goes on), because failing the commit would only loop the
 *       job. So only created and collapsed parts, which hold this committable's content, go on to
 *       the completion pointer; the divergent window's manifest finds the canonical object in the
 *       store.
 * </ul>
 *
 * <p>The completion pointer is not moved here but by the sink's post-commit task ({@link
 * PointerRecorder}), which hears every subtask and writes once a window. Except at the end of
 * input: the committables emitted after the job's final checkpoint are not given again to a
 * post-commit task that fails, so the commit that carries an end-of-input mark records it itself,
 * and fails until it lands.
 *
 * <p>Transient failures (throttling, 5xx, timeouts, dropped connections) and 409 conflicts are
 * retried here with backoff; when attempts run out the commit fails, Flink restarts the job and
 * re-commits this committable from the checkpoint.
 */
final class SnapshotCommitter implements Committer<SnapshotCommittable> {
    private static final Logger LOG = LoggerFactory.getLogger(SnapshotCommitter.class);
    private static final ObjectMapper JSON =
            new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

    enum Outcome {
        CREATED,
        COLLAPSED,
        DIVERGENT
    }

    private final ObjectStore store;
    private final ExecutorService publishers;
    private final Backoff backoff;
    private final PointerRecorder endOfInput;

    private final SnapshotSinkConfig<?> config;

    /** The reader table, opened at the end of a bounded run to bring it up to the end. */
    private ReaderTable.Follower readers;

    private final Counter created;
    private final Counter collapsed;
    private final Counter divergent;
    private final Counter retries;
    private final Counter conflicts;

    /**
     * How long each commit call takes: the latency from a completed checkpoint to its parts being
     * visible.
     */
    private final Histogram commitMillis;

    SnapshotCommitter(SnapshotSinkConfig<?> config, MetricGroup metrics) {
        this.store = config.store().open();
        this.publishers = config.publishers("snapshot-publisher");
        this.backoff = config.backoff();
        this.created = metrics.counter("partsCreated");
        this.collapsed = metrics.counter("partsCollapsed");
        this.divergent = metrics.counter("partsDivergent");
        // Counted from the publishing threads.
        this.retries = metrics.counter("storeRetries", new ThreadSafeSimpleCounter());
        this.conflicts = metrics.counter("storeConflicts", new ThreadSafeSimpleCounter());
        this.commitMillis =
                metrics.histogram("commitMillis", new DescriptiveStatisticsHistogram(10_000));
        // The pointer's gauges are the Completion pointer task's: here they would stand still
        // until the end of input, and an alarm on them would read a committer's. A failure of the
        // last update fails its commit instead of counting.
        this.endOfInput =
                new PointerRecorder(config, store, new UnregisteredMetricsGroup(), retries, true);
        this.config = config;
    }

    @Override
    public void commit(Collection<CommitRequest<SnapshotCommittable>> requests)
            throws IOException, InterruptedException {
        long started = System.nanoTime();
        commitAll(requests);
        commitMillis.update((System.nanoTime() - started) / 1_000_000);
    }

    private void commitAll(Collection<CommitRequest<SnapshotCommittable>> requests)
            throws IOException, InterruptedException {
        List<SnapshotCommittable> marks = new ArrayList<>();
        // A list, not a map: Flink's commit requests are equal by value, and each needs its own
        // outcome.
        List<Publishing> publishing = new ArrayList<>();
        for (CommitRequest<SnapshotCommittable> request : requests) {
            SnapshotCommittable part = request.getCommittable();
            if (part.isMark()) {
                marks.add(part);
                continue;
            }
            publishing.add(new Publishing(request, publishers.submit(() -> publish(part))));
        }
        boolean lastCommit = marks.stream().anyMatch(m -> m.watermark() == Long.MAX_VALUE);
        Throwable failure = null;
        for (Publishing published : publishing) {
            Published done;
            try {
                done = published.outcome().get();
            } catch (ExecutionException e) {
                // Wait for the others anyway: none may still be writing once the commit has failed.
                failure = failure != null ? failure : e.getCause();
                continue;
            }
            CommitRequest<SnapshotCommittable> request = published.request();
            SnapshotCommittable part = request.getCommittable();
            if (lastCommit) {
                endOfInput.part(part, done.fingerprint(), done.rows());
            }
            switch (done.outcome()) {
                case CREATED:
                    created.inc();
                    break;
                case COLLAPSED:
                    collapsed.inc();
                    request.signalAlreadyCommitted();
                    break;
                case DIVERGENT:
                    divergent.inc();
                    request.signalFailedWithKnownReason(
                            new IllegalStateException(
                                    part.key()
                                            + " holds other content; evidence under _divergence/"));
                    break;
                default:
                    throw new IllegalStateException(done.outcome().name());
            }
        }
        if (failure instanceof IOException io) {
            throw io;
        } else if (failure instanceof InterruptedException interrupted) {
            throw interrupted;
        } else if (failure instanceof RuntimeException unchecked) {
            throw unchecked;
        } else if (failure != null) {
            throw new IOException("publishing a part failed", failure);
        }
        if (lastCommit) {
            // Only now are all parts handed over with these marks published.
            marks.forEach(endOfInput::mark);
            endOfInput.record();
            if (config.readerTable().isPresent() && endOfInput.windowLengthMillis() != 0) {
                // The pointer's task has finished before this last commit (a bounded run's tasks
                // all finish before its final checkpoint), so the committers add the last windows.
                // Each tries; the one whose mark ends the run adds the rest. A failure fails the
                // commit, which Flink retries.
                if (readers == null) {
                    readers = config.readerTable().get().follow(store, endOfInput.readerOutput());
                }
                readers.catchUp();
            }
        }
    }

    private record Publishing(
            CommitRequest<SnapshotCommittable> request, Future<Published> outcome) {}

    /**
     * How a part ended, and the canonical object's fingerprint and row count (what its window's
     * manifest lists).
     */
    record Published(Outcome outcome, String fingerprint, long rows) {}

    Published publish(SnapshotCommittable part) throws IOException, InterruptedException {
        return backoff.run(
                retries, "publish " + part.key() + " to " + store.describe(), () -> attempt(part));
    }

    private Published attempt(SnapshotCommittable part) throws IOException {
        Optional<StagedObject> staged = part.staged();
        // Look before completing an upload: S3 may accept a second completion of the same upload id
        // (after a restore) as a success, which would hide that this committable already landed.
        Optional<ObjectInfo> existing =
                staged.isPresent() ? store.head(part.key()) : Optional.empty();
        if (existing.isPresent()) {
            return resolveExisting(part, existing.get());
        }
        try {
            boolean won =
                    staged.isPresent()
                            ? store.promote(staged.get())
                            : store.putIfAbsent(part.key(), part.inline().get(), part.metadata());
            if (won) {
                LOG.info(
                        "Created {} ({} rows, fingerprint {}, {})",
                        part.key(),
                        part.rowCount(),
                        part.fingerprint(),
                        staged.isPresent() ? "staged" : "inline");
                return new Published(Outcome.CREATED, part.fingerprint(), part.rowCount());
            }
        } catch (StoreException e) {
            if (e.kind() == StoreException.Kind.CONFLICT) {
                conflicts.inc();
            }
            // A staged part that is gone, or a 409 on completing it (S3 then drops the upload, and
            // the store starts it again from the staged copy on the next attempt), is fine if the
            // key got published meanwhile: by this committable before a restart, or by another
            // execution. Otherwise the 409 is retried, and a part gone with its copy is reported.
            boolean stagedTrouble =
                    staged.isPresent()
                            && (e.kind() == StoreException.Kind.STAGED_GONE
                                    || e.kind() == StoreException.Kind.CONFLICT);
            if (!stagedTrouble || store.head(part.key()).isEmpty()) {
                if (e.kind() == StoreException.Kind.STAGED_GONE) {
                    throw new StoreException(
                            StoreException.Kind.PERMANENT,
                            "the staged part for "
                                    + part.key()
                                    + " is gone, with its staged copy, and nothing was published at that key: the job was down or"
                                    + " failing for longer than the bucket's staging retention. Restore the job from a checkpoint"
                                    + " older than the one holding this part so the window is recomputed",
                            e);
                }
                throw e;
            }
        }
        return resolveExisting(
                part,
                store.head(part.key())
                        .orElseThrow(
                                () ->
                                        new StoreException(
                                                StoreException.Kind.TRANSIENT,
                                                part.key()
                                                        + " was reported to exist but cannot be read yet",
                                                null)));
    }

    /** The key is taken: same content collapses, different content is evidence. */
    private Published resolveExisting(SnapshotCommittable part, ObjectInfo existing)
            throws IOException {
        part.staged().ifPresent(this::abortQuietly);
        String canonical = existing.metadata().getOrDefault(PartMetadata.FINGERPRINT, "<none>");
        if (canonical.equals(part.fingerprint())) {
            LOG.info(
                    "Collapsed {} into the existing object (same fingerprint {}, first written by job {})",
                    part.key(),
                    canonical,
                    existing.metadata().get(PartMetadata.WRITER_JOB));
            recordCollapse(part, existing);
            return new Published(Outcome.COLLAPSED, canonical, part.rowCount());
        }
        String evidence = ObjectKeys.divergenceKey(part.key(), part.fingerprint());
        store.putIfAbsent(evidence, evidence(part, existing, "divergent"), Map.of());
        LOG.error(
                "DIVERGENCE at {}: the existing object has fingerprint {} (writer {}), this execution computed {}"
                        + " (writer {}). The first object stays canonical; evidence in {}. Check for non-deterministic"
                        + " logic or inputs that differ between the two executions.",
                part.key(),
                canonical,
                writer(existing.metadata()),
                part.fingerprint(),
                writer(part.metadata()),
                evidence);
        return new Published(
                Outcome.DIVERGENT,
                canonical,
                Long.parseLong(existing.metadata().getOrDefault(PartMetadata.ROWS, "0")));
    }

    /**
     * Records that this execution computed an existing part again, with equal content (a re-commit
     * after a failover, an overlapping deployment), so the store's page can show which parts more
     * than one execution computed: once per part and Flink job. Informational: the commit does not
     * wait on it or fail over it.
     */
    private void recordCollapse(SnapshotCommittable part, ObjectInfo existing) {
        String writer = part.metadata().getOrDefault(PartMetadata.WRITER_JOB, "unknown");
        try {
            store.putIfAbsent(
                    ObjectKeys.collapsedKey(part.key(), writer),
                    evidence(part, existing, "collapsed"),
                    Map.of());
        } catch (IOException e) {
            LOG.warn(
                    "Could not record that {} collapsed into {} (the part is published; only the store page's"
                            + " record of the collapse is missing): {}",
                    writer,
                    part.key(),
                    e.toString());
        }
    }

    /** Both writers' metadata: the existing object's, and this execution's under {@code role}. */
    private byte[] evidence(SnapshotCommittable part, ObjectInfo existing, String role)
            throws IOException {
        Map<String, Object> doc = new LinkedHashMap<>();
        doc.put("key", part.key());
        doc.put("windowStartMillis", part.windowStartMillis());
        doc.put("bucket", part.bucket());
        doc.put("canonical", new TreeMap<>(existing.metadata()));
        doc.put(role, new TreeMap<>(part.metadata()));
        return JSON.writeValueAsString(doc).getBytes(StandardCharsets.UTF_8);
    }

    private static String writer(Map<String, String> metadata) {
        return metadata.get(PartMetadata.WRITER_JOB)
                + "@"
                + metadata.get(PartMetadata.WRITER_HOST)
                + " "
                + metadata.get(PartMetadata.WRITER_TASK);
    }

    /**
     * After a 412 the upload still exists; abort it. Failing that only leaves an orphan for the
     * lifecycle rule.
     */
    private void abortQuietly(StagedObject staged) {
        try {
            store.abort(staged);
        } catch (IOException e) {
            LOG.warn(
                    "Could not abort staged upload {} for {}; the bucket's lifecycle rule will remove it: {}",
                    staged.handle(),
                    staged.key(),
                    e.getMessage());
        }
    }

    @Override
    public void close() throws IOException {
        publishers.shutdownNow();
        endOfInput.close();
        if (readers != null) {
            readers.close();
        }
        store.close();
    }
}
