package dev.snapshots.job;

import java.util.ArrayList;
import java.util.List;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.runtime.state.FunctionInitializationContext;
import org.apache.flink.runtime.state.FunctionSnapshotContext;
import org.apache.flink.streaming.api.checkpoint.CheckpointedFunction;
import org.apache.flink.streaming.api.functions.ProcessFunction;
import org.apache.flink.util.Collector;

/**
 * Sends events whose window has already closed to the late output, remembering the watermark
 * across restarts. Flink does not checkpoint watermarks: after a restore the window operator
 * starts from no watermark, would accept an event whose window was published before the
 * savepoint, fire that window again and publish different content for a key that exists (a
 * divergence). This gate keeps the last watermark in state, so a resumed job treats exactly the
 * events as late that an uninterrupted one would.
 */
final class LateGate extends ProcessFunction<Event, Event> implements CheckpointedFunction {
    private static final long serialVersionUID = 1L;

    private final long windowMillis;
    private final long outOfOrdernessMillis;
    private transient ListState<Long> state;
    private transient long restoredWatermark;
    /** The highest event time seen: the watermark it implies is the one to keep. */
    private transient long maxTimestamp;

    LateGate(long windowMillis, long outOfOrdernessMillis) {
        this.windowMillis = windowMillis;
        this.outOfOrdernessMillis = outOfOrdernessMillis;
    }

    @Override
    public void processElement(Event e, Context ctx, Collector<Event> out) {
        maxTimestamp = Math.max(maxTimestamp, e.timestampMillis);
        long watermark = Math.max(restoredWatermark, ctx.timerService().currentWatermark());
        long windowEnd = e.timestampMillis - Math.floorMod(e.timestampMillis, windowMillis) + windowMillis;
        if (windowEnd - 1 <= watermark) {
            ctx.output(SnapshotPipeline.LATE, e);
        } else {
            out.collect(e);
        }
    }

    /** The watermark the events so far imply, as {@link EveryEventWatermarks} computes it. */
    @Override
    public void snapshotState(FunctionSnapshotContext context) throws Exception {
        long implied = maxTimestamp == Long.MIN_VALUE ? Long.MIN_VALUE : maxTimestamp - outOfOrdernessMillis - 1;
        state.update(List.of(Math.max(restoredWatermark, implied)));
    }

    @Override
    public void initializeState(FunctionInitializationContext context) throws Exception {
        state = context.getOperatorStateStore().getUnionListState(new ListStateDescriptor<>("watermark", Long.class));
        List<Long> restored = new ArrayList<>();
        state.get().forEach(restored::add);
        // After a rescale every subtask sees every value: the lowest is safe for all of them.
        restoredWatermark = restored.stream().mapToLong(Long::longValue).min().orElse(Long.MIN_VALUE);
        maxTimestamp = Long.MIN_VALUE;
    }
}
