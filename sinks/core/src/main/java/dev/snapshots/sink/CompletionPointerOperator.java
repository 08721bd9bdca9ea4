package dev.snapshots.sink;

import dev.snapshots.progress.ReaderTable;
import dev.snapshots.store.ObjectStore;
import java.io.IOException;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import org.apache.flink.api.common.operators.MailboxExecutor;
import org.apache.flink.metrics.Counter;
import org.apache.flink.metrics.ThreadSafeSimpleCounter;
import org.apache.flink.streaming.api.connector.sink2.CommittableMessage;
import org.apache.flink.streaming.api.operators.AbstractStreamOperator;
import org.apache.flink.streaming.api.operators.OneInputStreamOperator;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.util.function.ThrowingRunnable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The sink's post-commit task, one for the whole sink: moves the completion pointer by what every
 * committer subtask published ({@link PointerRecorder}). Stateless, as Flink asks of a post-commit
 * topology: after a restart it hears every subtask's mark again at the next checkpoint.
 *
 * <p>The store I/O runs on a thread of its own, one update at a time: a slow store (retries with
 * pauses of seconds, an outage) must not hold the task's mailbox, or every checkpoint barrier, and
 * so every commit, would wait for the pointer. The update's outcome comes back through the mailbox,
 * where the recorder's memory lives; messages that arrive meanwhile are held for the next update. A
 * cancel interrupts the update, and so does the end of a bounded run, which does not wait for it:
 * the committers have recorded the end of input themselves by then (see {@link SnapshotCommitter}).
 *
 * <p>Given a {@link ReaderTable}, the same thread brings it up to the pointer after each update
 * that moved it, and once at the start, for what an earlier run completed and did not add.
 */
final class CompletionPointerOperator extends AbstractStreamOperator<Void>
        implements OneInputStreamOperator<CommittableMessage<SnapshotCommittable>, Void> {
    private static final long serialVersionUID = 1L;
    private static final Logger LOG = LoggerFactory.getLogger(CompletionPointerOperator.class);

    static final String NAME = "Completion pointer";

    private final SnapshotSinkConfig<?> config;
    private transient ObjectStore store;
    private transient PointerRecorder recorder;
    private transient ExecutorService updates;
    private transient MailboxExecutor mailbox;

    /**
     * The table readers query, kept up with the pointer on the update thread; opened there too, so
     * that a catalog out of reach holds up no part.
     */
    private transient ReaderTable.Follower readers;

    private transient Counter readerTableFailures;

    /** Whether an update is being written: only one at a time. */
    private transient boolean updating;

    CompletionPointerOperator(SnapshotSinkConfig<?> config) {
        this.config = config;
    }

    @Override
    public void open() throws Exception {
        super.open();
        store = config.store().open();
        recorder =
                new PointerRecorder(
                        config,
                        store,
                        getMetricGroup(),
                        // Counted on the update thread.
                        getMetricGroup().counter("storeRetries", new ThreadSafeSimpleCounter()),
                        false);
        updates =
                Executors.newSingleThreadExecutor(
                        r -> {
                            Thread t = new Thread(r, "completion-pointer-" + config.sinkUid());
                            t.setDaemon(true);
                            return t;
                        });
        mailbox =
                getContainingTask()
                        .getMailboxExecutorFactory()
                        .createExecutor(getOperatorConfig().getChainIndex());
        readerTableFailures =
                getMetricGroup().counter("readerTableFailures", new ThreadSafeSimpleCounter());
        updates.execute(
                () -> {
                    try {
                        // A sink that takes its window length from its rows, restarted: so that
                        // empty windows complete before its next part.
                        recorder.resolveWindowLength();
                    } catch (IOException e) {
                        LOG.warn(
                                "could not read the identity of {} v={}; its next part tells the"
                                        + " window length",
                                config.pipeline(),
                                config.jobVersion(),
                                e);
                    }
                    // What an earlier run completed and did not add, before this run completes
                    // more.
                    catchUpReaders();
                });
    }

    @Override
    public void processElement(StreamRecord<CommittableMessage<SnapshotCommittable>> element) {
        if (recorder.take(element.getValue())) {
            startUpdate();
        }
    }

    /** Starts the update what is held calls for, unless one is under way: its landing will. */
    private void startUpdate() {
        if (!updating) {
            recorder.due()
                    .ifPresent(
                            update -> {
                                updating = true;
                                updates.execute(() -> write(update));
                            });
        }
    }

    /** On the update thread: writes, then hands the outcome to the mailbox. */
    private void write(PointerRecorder.Update update) {
        try {
            Optional<Long> through = recorder.write(update);
            if (through.isPresent()) {
                catchUpReaders();
            }
            handBack(
                    () -> {
                        recorder.recorded(update, through);
                        startUpdate(); // for what arrived while this one was written
                    },
                    "completion pointer updated");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt(); // cancelled: the task is closing
        } catch (Exception e) {
            // The next whole batch tries again, as a synchronous update would have.
            handBack(() -> recorder.failed(update, e), "completion pointer update failed");
        }
    }

    /**
     * On the update thread. A failure waits for the next pointer update, as the pointer's own do:
     * the table is behind, never wrong, and the pointer it follows is in the store.
     */
    private void catchUpReaders() {
        // Without a window length nothing of the job version was published.
        if (config.readerTable().isEmpty() || recorder.windowLengthMillis() == 0) {
            return;
        }
        try {
            if (readers == null) {
                readers = config.readerTable().get().follow(store, recorder.readerOutput());
            }
            readers.catchUp();
        } catch (Exception | LinkageError e) {
            // A LinkageError too (the table format's classes missing): escaping, it would end this
            // thread's update and leave the pointer waiting for a hand-back that never comes.
            readerTableFailures.inc();
            LOG.warn(
                    "could not bring the reader table up to the completion pointer of {}; the"
                            + " next pointer update tries again. Check the catalog and the store",
                    config.pipeline(),
                    e);
        }
    }

    private void handBack(ThrowingRunnable<Exception> outcome, String what) {
        try {
            mailbox.execute(
                    () -> {
                        updating = false;
                        outcome.run();
                    },
                    what);
        } catch (RejectedExecutionException closing) {
            // The task is closing: nothing is left to hand the outcome to.
        }
    }

    @Override
    public void close() throws Exception {
        if (updates != null) {
            updates.shutdownNow();
        }
        if (recorder != null) {
            recorder.close();
        }
        if (readers != null) {
            readers.close();
        }
        if (store != null) {
            store.close();
        }
        super.close();
    }
}
