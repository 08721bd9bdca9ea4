package dev.snapshots.job.ingest;

import dev.snapshots.job.DeadLetter;
import java.util.EnumMap;
import java.util.Map;
import org.apache.flink.annotation.Internal;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.metrics.Counter;
import org.apache.flink.metrics.MetricGroup;
import org.apache.flink.streaming.api.functions.ProcessFunction;
import org.apache.flink.util.Collector;
import org.apache.flink.util.OutputTag;

/**
 * Sends what the sources judged ({@link EventJudge}) on its way: events to the windows, dead
 * letters to their side output, each counted by reason (metric group {@code deadLetters}). Chained
 * to the source, so dead letters keep the order and timestamps their source gave them.
 */
@Internal
public final class Ingest extends ProcessFunction<Ingested, Event> {
    private static final long serialVersionUID = 1L;
    public static final OutputTag<DeadLetter> DEAD_LETTERS = new OutputTag<>("dead-letters") {};

    private transient Map<Rejection, Counter> rejected;

    @Override
    public void open(OpenContext openContext) {
        rejected = new EnumMap<>(Rejection.class);
        MetricGroup group = getRuntimeContext().getMetricGroup().addGroup("deadLetters");
        for (Rejection r : Rejection.values()) {
            rejected.put(r, group.counter(r.code()));
        }
    }

    @Override
    public void processElement(Ingested in, Context ctx, Collector<Event> out) {
        if (in.event != null) {
            out.collect(in.event);
        } else {
            rejected.get(Rejection.of(in.deadLetter.reason)).inc();
            ctx.output(DEAD_LETTERS, in.deadLetter);
        }
    }
}
