package dev.snapshots.sink;

import dev.snapshots.format.RowFormat;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.flink.api.common.TaskInfo;
import org.apache.flink.api.common.eventtime.Watermark;
import org.apache.flink.api.connector.sink2.CommittingSinkWriter;
import org.apache.flink.api.connector.sink2.StatefulSinkWriter;
import org.apache.flink.api.connector.sink2.WriterInitContext;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.KeyGroupRangeAssignment;
import org.apache.flink.streaming.api.windowing.windows.TimeWindow;

/**
 * The writer of {@link CanonicalSnapshotSink#writeWindows}, chained to a window keyed by the row's
 * key: gathers each window's rows per bucket as the window fires, and prepares the window's parts
 * when the watermark passes its end.
 *
 * <p>Why it keeps no state: the window operator fires a window and then forwards the watermark that
 * fired it, in one step of the subtask's mailbox, and a checkpoint barrier is a step of its own. So
 * at every barrier the rows of each fired window are already parts (in the committables), and the
 * windows not yet fired are in the window's own state. {@link #prepareCommit} checks it: a setting
 * that breaks it (interruptible timers, which Flink 1.20's window operator does not use) fails the
 * checkpoint rather than lose rows.
 */
final class WindowRowsWriter<T>
        implements CommittingSinkWriter<T, SnapshotCommittable>,
                StatefulSinkWriter<T, SnapshotWriter.State> {
    private final SnapshotWriter<T> parts;
    private final RowFormat<T> format;
    private final int bucketCount;
    private final int maxParallelism;
    private final long windowLength;
    private final KeyGroupRange keyGroups;

    /** Rows of windows that fired, by window start, then bucket; empty between steps. */
    private final TreeMap<Long, Map<Integer, List<T>>> open = new TreeMap<>();

    WindowRowsWriter(
            SnapshotSinkConfig<T> config,
            int maxParallelism,
            SnapshotWriter<T> parts,
            WriterInitContext context) {
        this.parts = parts;
        this.format = config.rowFormat();
        this.bucketCount = config.bucketCount();
        this.maxParallelism = maxParallelism;
        this.windowLength = config.windowLengthMillis();
        TaskInfo task = context.getTaskInfo();
        Bucketing.KEY_GROUPS.requireWholeBuckets(
                bucketCount, maxParallelism, task.getNumberOfParallelSubtasks());
        this.keyGroups =
                KeyGroupRangeAssignment.computeKeyGroupRangeForOperatorIndex(
                        maxParallelism,
                        task.getNumberOfParallelSubtasks(),
                        task.getIndexOfThisSubtask());
    }

    @Override
    public void write(T row, Context context) {
        String key = format.key(row);
        int keyGroup = KeyGroupRangeAssignment.assignToKeyGroup(key, maxParallelism);
        if (!keyGroups.contains(keyGroup)) {
            throw new IllegalStateException(
                    "row with key '"
                            + key
                            + "' (key group "
                            + keyGroup
                            + ") reached the subtask of key groups "
                            + keyGroups
                            + ": writeWindows needs a window keyed by RowFormat.key, at the sink's"
                            + " max parallelism ("
                            + maxParallelism
                            + "), not re-partitioned since");
        }
        Long timestamp = context.timestamp();
        if (timestamp == null) {
            throw new IllegalStateException(
                    "row with key '" + key + "' has no timestamp: it must come from a window");
        }
        open.computeIfAbsent(
                        TimeWindow.getWindowStartWithOffset(timestamp, 0, windowLength),
                        w -> new TreeMap<>())
                .computeIfAbsent(
                        Bucketing.ofKeyGroup(keyGroup, bucketCount, maxParallelism),
                        b -> new ArrayList<>())
                .add(row);
    }

    /** The watermark that fired a window follows its rows: the window's parts are whole now. */
    @Override
    public void writeWatermark(Watermark watermark) throws IOException, InterruptedException {
        while (!open.isEmpty() && open.firstKey() + windowLength - 1 <= watermark.getTimestamp()) {
            Map.Entry<Long, Map<Integer, List<T>>> window = open.pollFirstEntry();
            for (Map.Entry<Integer, List<T>> bucket : window.getValue().entrySet()) {
                parts.prepare(window.getKey(), bucket.getKey(), bucket.getValue());
            }
        }
        parts.writeWatermark(watermark);
    }

    @Override
    public void flush(boolean endOfInput) {
        // A window's rows become parts at its watermark; nothing else is buffered.
    }

    @Override
    public Collection<SnapshotCommittable> prepareCommit() {
        if (!open.isEmpty()) {
            throw new IllegalStateException(
                    "a checkpoint barrier arrived between the rows of windows starting "
                            + open.keySet()
                            + " and the watermark that closes them, and this writer keeps no"
                            + " open rows in state: turn off unaligned checkpoints' interruptible"
                            + " timers, or keep the sink chained to its window");
        }
        return parts.prepareCommit();
    }

    @Override
    public List<SnapshotWriter.State> snapshotState(long checkpointId) {
        return parts.snapshotState(checkpointId);
    }

    @Override
    public void close() {
        parts.close();
    }
}
