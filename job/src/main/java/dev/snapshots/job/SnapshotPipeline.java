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
import org.apache.flink.streaming.api.functions.windowing.ProcessWindowFunction;
import org.apache.flink.streaming.api.windowing.assigners.TumblingEventTimeWindows;
import org.apache.flink.streaming.api.windowing.windows.TimeWindow;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.metrics.Counter;
import org.apache.flink.streaming.api.functions.ProcessFunction;
import org.apache.flink.util.Collector;
import org.apache.flink.util.OutputTag;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The snapshot job's topology, built in one testable method. Every operator has a uid, so
 * savepoints survive code changes.
 *
 * <pre>
 *  raw records ─► ingest ──► event time ─► keyBy(device) ─► window (tumbling) ─► aggregate ─► parts ─► snapshots
 *                 parse,       watermarks                                                              (Parquet)
 *                 late gate
 *                   └─ rejected or late ─► arrival time ─► parts ─► dead letters (JSON lines, _deadletter/)
 * </pre>
 */
public final class SnapshotPipeline {
    static final int MAX_PARALLELISM = 128;
    /**
     * Ingest already dead-letters events that are late in their own split. The window operator
     * can still see one late when a split was marked idle while it merely lagged and another split
     * moved the watermark on; such events are counted and logged, never added to a closed window.
     */
    static final OutputTag<Event> LATE_AFTER_IDLENESS = new OutputTag<>("late-after-idleness") {};

    private SnapshotPipeline() {}

    /** The window aggregates and the rejected records, before any sink: what the benchmark sinks three ways. */
    record Streams(SingleOutputStreamOperator<WindowAggregate> aggregates, DataStream<DeadLetter> rejected) {}

    public static void build(StreamExecutionEnvironment env, JobConfig config, DataStream<RawRecord> raw) {
        Streams streams = streams(config, raw);
        Duration window = config.windowLength();
        SnapshotParts.assemble(streams.aggregates(), new WindowAggregate.Format(), TypeInformation.of(WindowAggregate.class),
                        window, config.buckets(), MAX_PARALLELISM, "snapshot-parts")
                .sinkTo(sink(config, new WindowAggregate.Format(), config.buckets()).build())
                .name("snapshots").uid("snapshots");
        // Dead letters are few: one bucket, one JSON-lines object per window of arrival time.
        SnapshotParts.assemble(streams.rejected(), new DeadLetter.Format(), TypeInformation.of(DeadLetter.class), window, 1,
                        MAX_PARALLELISM, "dead-letter-parts")
                .sinkTo(sink(config, new DeadLetter.Format(), 1).deadLetters().build())
                .name("dead-letters").uid("dead-letters");
    }

    static Streams streams(JobConfig config, DataStream<RawRecord> raw) {
        long outOfOrderness = config.duration("out-of-orderness").toMillis();
        Duration idleness = config.duration("idleness");
        Duration window = config.windowLength();
        EventParser parser = new EventParser((int) config.number("max-record-bytes"),
                config.duration("future-horizon").toMillis(), config.duration("past-horizon").toMillis());

        // Ingest and both watermarks run at the source's parallelism, chained to it: each source
        // split is judged in its own order, so which events are late is a function of the input,
        // and dead letters stay in arrival order.
        int sourceParallelism = raw.getParallelism();
        SingleOutputStreamOperator<Event> ingested = raw
                .process(new Ingest(parser, window.toMillis(), outOfOrderness)).name("ingest").uid("ingest")
                .setParallelism(sourceParallelism);
        SingleOutputStreamOperator<WindowAggregate> aggregates = ingested
                .assignTimestampsAndWatermarks(WatermarkStrategy.<Event>forGenerator(c -> new EveryEventWatermarks<>(outOfOrderness))
                        .withTimestampAssigner((e, t) -> e.timestampMillis)
                        .withIdleness(idleness))
                .name("event-time").uid("event-time").setParallelism(sourceParallelism)
                .keyBy(e -> e.device)
                .window(TumblingEventTimeWindows.of(window))
                .sideOutputLateData(LATE_AFTER_IDLENESS)
                .aggregate(new Totals(), new CloseWindow())
                .name("aggregate").uid("aggregate");
        aggregates.getSideOutput(LATE_AFTER_IDLENESS).process(new CountLateAfterIdleness())
                .name("late-after-idleness").uid("late-after-idleness");
        DataStream<DeadLetter> rejected = ingested.getSideOutput(Ingest.DEAD_LETTERS)
                .assignTimestampsAndWatermarks(WatermarkStrategy.<DeadLetter>forBoundedOutOfOrderness(Duration.ofMillis(outOfOrderness))
                        .withTimestampAssigner((d, t) -> d.arrivalMillis)
                        .withIdleness(idleness))
                .name("arrival-time").uid("arrival-time").setParallelism(sourceParallelism);
        return new Streams(aggregates, rejected);
    }

    static <T> CanonicalSnapshotSinkBuilder<T> sink(JobConfig config, dev.snapshots.format.RowFormat<T> format, int buckets) {
        return CanonicalSnapshotSink.<T>builder()
                .pipeline(config.pipeline())
                .jobVersion(config.jobVersion())
                .schemaVersion(config.schemaVersion())
                .bucketCount(buckets)
                .windowLength(config.windowLength())
                .store(config.store())
                .publishConcurrency((int) config.number("publish-concurrency"))
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

    static final class CountLateAfterIdleness extends ProcessFunction<Event, Void> {
        private static final Logger LOG = LoggerFactory.getLogger(CountLateAfterIdleness.class);
        private transient Counter late;

        @Override
        public void open(Configuration parameters) {
            late = getRuntimeContext().getMetricGroup().counter("lateAfterIdleness");
        }

        @Override
        public void processElement(Event e, Context ctx, Collector<Void> out) {
            late.inc();
            LOG.warn("Event of {} at {} ({}) arrived after its window closed: its split lagged longer than the idleness"
                    + " timeout; raise --idleness if this repeats", e.device, java.time.Instant.ofEpochMilli(e.timestampMillis), e.origin);
        }
    }
}
