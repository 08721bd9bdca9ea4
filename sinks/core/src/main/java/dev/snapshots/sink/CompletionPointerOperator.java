package dev.snapshots.sink;

import dev.snapshots.store.ObjectStore;
import org.apache.flink.streaming.api.connector.sink2.CommittableMessage;
import org.apache.flink.streaming.api.operators.AbstractStreamOperator;
import org.apache.flink.streaming.api.operators.OneInputStreamOperator;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;

/**
 * The sink's post-commit task, one for the whole sink: moves the completion pointer by what every
 * committer subtask published ({@link PointerRecorder}). Stateless, as Flink asks of a post-commit
 * topology: after a restart it hears every subtask's mark again at the next checkpoint.
 */
final class CompletionPointerOperator extends AbstractStreamOperator<Void>
        implements OneInputStreamOperator<CommittableMessage<SnapshotCommittable>, Void> {
    private static final long serialVersionUID = 1L;

    static final String NAME = "Completion pointer";

    private final SnapshotSinkConfig<?> config;
    private transient ObjectStore store;
    private transient PointerRecorder recorder;

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
                        getMetricGroup().counter("storeRetries"),
                        false);
    }

    @Override
    public void processElement(StreamRecord<CommittableMessage<SnapshotCommittable>> element)
            throws Exception {
        recorder.accept(element.getValue());
    }

    @Override
    public void close() throws Exception {
        if (recorder != null) {
            recorder.close();
        }
        if (store != null) {
            store.close();
        }
        super.close();
    }
}
