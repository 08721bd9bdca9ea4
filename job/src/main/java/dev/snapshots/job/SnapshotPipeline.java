package dev.snapshots.job;

import dev.snapshots.sink.CanonicalSnapshotSink;
import dev.snapshots.sink.CanonicalSnapshotSinkBuilder;
import dev.snapshots.sink.SnapshotParts;
import java.time.Duration;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.functions.AggregateFunction;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.ProcessFunction;
import org.apache.flink.streaming.api.functions.windowing.ProcessWindowFunction;
import org.apache.flink.streaming.api.windowing.assigners.TumblingEventTimeWindows;
import org.apache.flink.streaming.api.windowing.windows.TimeWindow;
import org.apache.flink.util.Collector;
import org.apache.flink.util.OutputTag;

/**
 * The snapshot job's topology, built in one testable method. Every operator has a uid, so
 * savepoints survive code changes.
 *
 * <pre>
 *  raw records ─► parse ──► event time ─► keyBy(device) ─► window (tumbling) ─► aggregate ─► parts ─► snapshots
 *                  │         watermarks                        │ late                              (Parquet)
 *                  └─ rejected ────────────┬───────────────────┘
 *                                          └─► arrival time ─► parts ─► dead letters (JSON lines, _deadletter/)
 * </pre>
 */
public final class SnapshotPipeline {
    static final OutputTag<Event> LATE = new OutputTag<>("late-events") {};
    static final int MAX_PARALLELISM = 128;

    private SnapshotPipeline() {}

    public static void build(StreamExecutionEnvironment env, JobConfig config, DataStream<RawRecord> raw) {
        long outOfOrderness = config.duration("out-of-orderness").toMillis();
        Duration idleness = config.duration("idleness");
        Duration window = config.windowLength();
        EventParser parser = new EventParser((int) config.number("max-record-bytes"),
                config.duration("future-horizon").toMillis(), config.duration("past-horizon").toMillis());

        // Parsing, event time and the late gate run at the source's parallelism, chained to it: the
        // watermark then follows each source split's own order, and which events are late is a
        // function of the input, not of how records were spread over parallel parsers.
        int sourceParallelism = raw.getParallelism();
        SingleOutputStreamOperator<Event> events =
                raw.process(new ParseEvents(parser)).name("parse").uid("parse").setParallelism(sourceParallelism);
        SingleOutputStreamOperator<Event> onTime = events
                .assignTimestampsAndWatermarks(WatermarkStrategy.<Event>forGenerator(c -> new EveryEventWatermarks<>(outOfOrderness))
                        .withTimestampAssigner((e, t) -> e.timestampMillis)
                        .withIdleness(idleness))
                .name("event-time").uid("event-time").setParallelism(sourceParallelism)
                .process(new LateGate(window.toMillis(), outOfOrderness)).name("late-gate").uid("late-gate").setParallelism(sourceParallelism);
        SingleOutputStreamOperator<WindowAggregate> aggregates = onTime
                .keyBy(e -> e.device)
                .window(TumblingEventTimeWindows.of(window))
                .sideOutputLateData(LATE)
                .aggregate(new Totals(), new CloseWindow())
                .name("aggregate").uid("aggregate");
        SnapshotParts.assemble(aggregates, new WindowAggregate.Format(), TypeInformation.of(WindowAggregate.class),
                        window, config.buckets(), MAX_PARALLELISM, "snapshot-parts")
                .sinkTo(sink(config, new WindowAggregate.Format(), config.buckets()).build())
                .name("snapshots").uid("snapshots");

        DataStream<DeadLetter> late = aggregates.getSideOutput(LATE).union(onTime.getSideOutput(LATE))
                .process(new LateToDeadLetter()).name("late").uid("late");
        DataStream<DeadLetter> rejected = events.getSideOutput(ParseEvents.DEAD_LETTERS).union(late)
                .assignTimestampsAndWatermarks(WatermarkStrategy.<DeadLetter>forBoundedOutOfOrderness(Duration.ofMillis(outOfOrderness))
                        .withTimestampAssigner((d, t) -> d.arrivalMillis)
                        .withIdleness(idleness))
                .name("arrival-time").uid("arrival-time");
        // Dead letters are few: one bucket, one JSON-lines object per window of arrival time.
        SnapshotParts.assemble(rejected, new DeadLetter.Format(), TypeInformation.of(DeadLetter.class), window, 1,
                        MAX_PARALLELISM, "dead-letter-parts")
                .sinkTo(sink(config, new DeadLetter.Format(), 1).deadLetters().build())
                .name("dead-letters").uid("dead-letters");
    }

    private static <T> CanonicalSnapshotSinkBuilder<T> sink(JobConfig config, dev.snapshots.format.RowFormat<T> format, int buckets) {
        return CanonicalSnapshotSink.<T>builder()
                .pipeline(config.pipeline())
                .jobVersion(config.jobVersion())
                .schemaVersion(config.schemaVersion())
                .bucketCount(buckets)
                .windowLength(config.windowLength())
                .store(config.store())
                .rowFormat(format);
    }

    static final class Totals implements AggregateFunction<Event, WindowAggregate, WindowAggregate> {
        @Override
        public WindowAggregate createAccumulator() {
            return new WindowAggregate();
        }

        @Override
        public WindowAggregate add(Event e, WindowAggregate acc) {
            return acc.add(e);
        }

        @Override
        public WindowAggregate getResult(WindowAggregate acc) {
            return acc;
        }

        @Override
        public WindowAggregate merge(WindowAggregate a, WindowAggregate b) {
            return a.merge(b);
        }
    }

    static final class CloseWindow extends ProcessWindowFunction<WindowAggregate, WindowAggregate, String, TimeWindow> {
        @Override
        public void process(String device, Context ctx, Iterable<WindowAggregate> totals, Collector<WindowAggregate> out) {
            WindowAggregate a = totals.iterator().next();
            a.windowStart = ctx.window().getStart();
            a.windowEnd = ctx.window().getEnd();
            out.collect(a);
        }
    }

    /** A late event never changes a published window: it is counted and dead-lettered instead. */
    static final class LateToDeadLetter extends ProcessFunction<Event, DeadLetter> {
        private transient org.apache.flink.metrics.Counter late;

        @Override
        public void open(org.apache.flink.configuration.Configuration parameters) {
            late = getRuntimeContext().getMetricGroup().counter("lateEvents");
        }

        @Override
        public void processElement(Event e, Context ctx, Collector<DeadLetter> out) {
            late.inc();
            out.collect(new DeadLetter(e.origin, Rejection.LATE, "event time " + java.time.Instant.ofEpochMilli(e.timestampMillis)
                    + " is behind the watermark", e.arrivalMillis, e.device + " " + e.timestampMillis + " "
                    + TelemetryGenerator.decimal(e.valueMicros)));
        }
    }
}
