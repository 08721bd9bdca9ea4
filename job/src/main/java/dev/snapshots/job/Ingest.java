package dev.snapshots.job;

import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.metrics.Counter;
import org.apache.flink.metrics.MetricGroup;
import org.apache.flink.runtime.state.FunctionInitializationContext;
import org.apache.flink.runtime.state.FunctionSnapshotContext;
import org.apache.flink.streaming.api.checkpoint.CheckpointedFunction;
import org.apache.flink.streaming.api.functions.ProcessFunction;
import org.apache.flink.util.Collector;
import org.apache.flink.util.OutputTag;

/**
 * Parses raw records and sorts them into on-time events and dead letters, in one operator so the
 * dead letters leave in the order their records arrived (their arrival-time windows then never
 * see one late).
 *
 * <p>Lateness is decided here, against the watermark the events so far imply (the same bounded
 * out-of-orderness rule as {@link EveryEventWatermarks}), and that watermark is kept in state.
 * Flink does not checkpoint watermarks: without this, a job resumed from a savepoint would accept
 * an event whose window was published before the savepoint, fire that window a second time and
 * publish different content under an existing key. With it, a resumed job judges exactly the
 * events late that an uninterrupted run would.
 */
final class Ingest extends ProcessFunction<RawRecord, Event> implements CheckpointedFunction {
    private static final long serialVersionUID = 1L;
    static final OutputTag<DeadLetter> DEAD_LETTERS = new OutputTag<>("dead-letters") {};

    private final EventParser parser;
    private final long windowMillis;
    private final long outOfOrdernessMillis;
    private transient Map<Rejection, Counter> rejected;
    private transient ListState<Long> state;
    /** The highest event time seen (restored ones included); the watermark follows from it. */
    private transient long maxTimestamp;

    Ingest(EventParser parser, long windowMillis, long outOfOrdernessMillis) {
        this.parser = parser;
        this.windowMillis = windowMillis;
        this.outOfOrdernessMillis = outOfOrdernessMillis;
    }

    @Override
    public void open(Configuration parameters) {
        rejected = new EnumMap<>(Rejection.class);
        MetricGroup group = getRuntimeContext().getMetricGroup().addGroup("deadLetters");
        for (Rejection r : Rejection.values()) {
            rejected.put(r, group.counter(r.code()));
        }
    }

    @Override
    public void processElement(RawRecord raw, Context ctx, Collector<Event> out) {
        EventParser.Result result = parser.parse(raw);
        // A record that failed to parse, or whose window has closed, leaves as a dead letter.
        if (result.event() == null) {
            reject(ctx, raw, result.rejection(), result.detail());
            return;
        }
        Event e = result.event();
        long watermark = maxTimestamp == Long.MIN_VALUE ? Long.MIN_VALUE : maxTimestamp - outOfOrdernessMillis - 1;
        long windowEnd = e.timestampMillis - Math.floorMod(e.timestampMillis, windowMillis) + windowMillis;
        if (windowEnd - 1 <= watermark) {
            reject(ctx, raw, Rejection.LATE, "event time " + Instant.ofEpochMilli(e.timestampMillis)
                    + " is behind the watermark " + Instant.ofEpochMilli(watermark));
            return;
        }
        maxTimestamp = Math.max(maxTimestamp, e.timestampMillis);
        out.collect(e);
    }

    private void reject(Context ctx, RawRecord raw, Rejection reason, String detail) {
        rejected.get(reason).inc();
        ctx.output(DEAD_LETTERS, DeadLetter.of(raw, reason, detail));
    }

    @Override
    public void snapshotState(FunctionSnapshotContext context) throws Exception {
        state.update(List.of(maxTimestamp));
    }

    @Override
    public void initializeState(FunctionInitializationContext context) throws Exception {
        state = context.getOperatorStateStore().getUnionListState(new ListStateDescriptor<>("max-event-time", Long.class));
        List<Long> restored = new ArrayList<>();
        state.get().forEach(restored::add);
        // After a rescale every subtask sees every value: the lowest is safe for all of them.
        maxTimestamp = restored.stream().filter(t -> t != Long.MIN_VALUE).mapToLong(Long::longValue).min().orElse(Long.MIN_VALUE);
    }
}
