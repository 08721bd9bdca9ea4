package dev.snapshots.job;

import java.util.EnumMap;
import java.util.Map;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.metrics.Counter;
import org.apache.flink.metrics.MetricGroup;
import org.apache.flink.streaming.api.functions.ProcessFunction;
import org.apache.flink.util.Collector;
import org.apache.flink.util.OutputTag;

/** Parses raw records; rejected ones go to the dead-letter output, counted per reason. */
final class ParseEvents extends ProcessFunction<RawRecord, Event> {
    private static final long serialVersionUID = 1L;
    static final OutputTag<DeadLetter> DEAD_LETTERS = new OutputTag<>("dead-letters") {};

    private final EventParser parser;
    private transient Map<Rejection, Counter> rejected;

    ParseEvents(EventParser parser) {
        this.parser = parser;
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
        if (result.event() != null) {
            out.collect(result.event());
        } else {
            rejected.get(result.rejection()).inc();
            ctx.output(DEAD_LETTERS, DeadLetter.of(raw, result.rejection(), result.detail()));
        }
    }
}
