package dev.snapshots.job;

import dev.snapshots.format.RowFormat;
import dev.snapshots.job.config.JobConfig;
import dev.snapshots.job.config.JobOptions;
import dev.snapshots.job.ingest.Event;
import dev.snapshots.job.ingest.Ingest;
import dev.snapshots.job.ingest.Ingested;
import dev.snapshots.sink.Bucketing;
import dev.snapshots.sink.CanonicalSnapshotSink;
import dev.snapshots.sink.CanonicalSnapshotSinkBuilder;
import java.time.Instant;
import org.apache.flink.annotation.Internal;
import org.apache.flink.api.common.functions.AggregateFunction;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.metrics.Counter;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.ProcessFunction;
import org.apache.flink.streaming.api.functions.windowing.ProcessWindowFunction;
import org.apache.flink.streaming.api.windowing.assigners.TumblingEventTimeWindows;
import org.apache.flink.streaming.api.windowing.windows.TimeWindow;
import org.apache.flink.util.Collector;
import org.apache.flink.util.OutputTag;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The snapshot job's topology, built in one testable method. Every operator has a uid, so
 * savepoints survive code changes.
 *
 * <pre>
 *  source ─────────► ingest ─► keyBy(device) ─► window (tumbling) ─► aggregate ─► snapshots (chained:
 *  per split: parse,            ▲ watermarks: each split's own, the minimum over all     Parquet, a part per
 *  late gate, watermark         │                                                        key-group bucket)
 *                   └─ rejected or late ─► parts ─► dead letters (JSON lines, _deadletter/)
 * </pre>
 */
@Internal
public final class SnapshotPipeline {
    private static final Logger LOG = LoggerFactory.getLogger(SnapshotPipeline.class);
    public static final int MAX_PARALLELISM = 128;

    /**
     * The sources dead-letter every event that is late in its own split, and no split's watermark
     * passes a window that a later on-time event of the split could still need, so the window
     * operator should never find an event late. Should it ever, the event is counted and logged (a
     * defect to report), never added to a closed window.
     */
    static final OutputTag<Event> LATE_AT_WINDOW = new OutputTag<>("late-at-window") {};

    private SnapshotPipeline() {}

    /**
     * The window aggregates and the rejected records, before any sink: what the benchmark sinks
     * three ways.
     */
    public record Streams(
            SingleOutputStreamOperator<WindowAggregate> aggregates,
            DataStream<DeadLetter> rejected) {}

    public static void build(
            StreamExecutionEnvironment env, JobConfig config, DataStream<Ingested> judged) {
        Streams streams = streams(config, judged);
        writeSnapshots(config, streams.aggregates());
        // Dead letters are few: one bucket, one JSON-lines object per window of arrival time.
        sink(config, new DeadLetter.Format(), 1).deadLetters().build().assemble(streams.rejected());
    }

    /**
     * The snapshot sink over the aggregates: chained to the window with key-group bucketing, behind
     * an assembling window with the first release's hash bucketing.
     */
    public static void writeSnapshots(JobConfig config, DataStream<WindowAggregate> aggregates) {
        CanonicalSnapshotSink<WindowAggregate> snapshots = snapshotSink(config);
        if (config.bucketing() == Bucketing.KEY_GROUPS) {
            snapshots.writeWindows(aggregates);
        } else {
            snapshots.assemble(aggregates);
        }
    }

    /**
     * What the job's sinks check as it is built, now: see {@link CanonicalSnapshotSink#check}. A
     * deploy tool runs it before it stops the running version.
     */
    public static void check(JobConfig config) {
        snapshotSink(config).check(MAX_PARALLELISM);
        sink(config, new DeadLetter.Format(), 1).deadLetters().build().check(MAX_PARALLELISM);
    }

    private static CanonicalSnapshotSink<WindowAggregate> snapshotSink(JobConfig config) {
        CanonicalSnapshotSinkBuilder<WindowAggregate> sink =
                sink(config, new WindowAggregate.Format(), config.buckets())
                        .bucketing(config.bucketing());
        config.icebergTable().ifPresent(sink::readerTable);
        return sink.build();
    }

    public static Streams streams(JobConfig config, DataStream<Ingested> judged) {
        // Chained to the source, at its parallelism: dead letters keep their source's order and
        // timestamps.
        SingleOutputStreamOperator<Event> events =
                judged.process(new Ingest())
                        .name("ingest")
                        .uid("ingest")
                        .setParallelism(judged.getParallelism());
        // Keyed by the rows' own key (WindowAggregate.Format.key): the sink's buckets are whole
        // key groups of it.
        SingleOutputStreamOperator<WindowAggregate> aggregates =
                events.keyBy(e -> e.device)
                        .window(TumblingEventTimeWindows.of(config.windowLength()))
                        .sideOutputLateData(LATE_AT_WINDOW)
                        .aggregate(new Totals(), new CloseWindow())
                        .name("aggregate")
                        .uid("aggregate");
        int requested = judged.getExecutionEnvironment().getParallelism();
        if (requested > 0) {
            int whole =
                    config.bucketing()
                            .largestWholeParallelism(config.buckets(), MAX_PARALLELISM, requested);
            if (whole != requested) {
                // The sources keep the parallelism asked for (shards are read by as many
                // subtasks); the window runs where every bucket stays in one subtask.
                LOG.warn(
                        "Aggregating and writing at parallelism {}, not {}: {} key-group buckets"
                                + " stay whole at {} (a parallelism that divides B keeps them whole)",
                        whole,
                        requested,
                        config.buckets(),
                        whole);
                aggregates.setParallelism(whole);
            }
        }
        aggregates
                .getSideOutput(LATE_AT_WINDOW)
                .process(new CountLateAtWindow())
                .name("late-at-window")
                .uid("late-at-window");
        return new Streams(aggregates, events.getSideOutput(Ingest.DEAD_LETTERS));
    }

    public static <T> CanonicalSnapshotSinkBuilder<T> sink(
            JobConfig config, RowFormat<T> format, int buckets) {
        return CanonicalSnapshotSink.<T>builder()
                .pipeline(config.pipeline())
                .jobVersion(config.jobVersion())
                .schemaVersion(config.schemaVersion())
                .bucketCount(buckets)
                .windowLength(config.windowLength())
                .store(config.store())
                .publishConcurrency((int) config.get(JobOptions.PUBLISH_CONCURRENCY))
                .inlineThresholdBytes((int) config.get(JobOptions.INLINE_THRESHOLD))
                .maxParallelism(MAX_PARALLELISM)
                .rowFormat(format);
    }

    static final class Totals
            implements AggregateFunction<Event, WindowAggregate, WindowAggregate> {
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

    static final class CloseWindow
            extends ProcessWindowFunction<WindowAggregate, WindowAggregate, String, TimeWindow> {
        @Override
        public void process(
                String device,
                Context ctx,
                Iterable<WindowAggregate> totals,
                Collector<WindowAggregate> out) {
            WindowAggregate a = totals.iterator().next();
            a.windowStart = ctx.window().getStart();
            a.windowEnd = ctx.window().getEnd();
            out.collect(a);
        }
    }

    static final class CountLateAtWindow extends ProcessFunction<Event, Void> {
        private static final Logger LOG = LoggerFactory.getLogger(CountLateAtWindow.class);
        private transient Counter late;

        @Override
        public void open(OpenContext openContext) {
            late = getRuntimeContext().getMetricGroup().counter("lateAtWindow");
        }

        @Override
        public void processElement(Event e, Context ctx, Collector<Void> out) {
            late.inc();
            LOG.warn(
                    "Event of {} at {} ({}) reached the window operator after its window closed, although its source"
                            + " judged it on time; it is left out of the window",
                    e.device,
                    Instant.ofEpochMilli(e.timestampMillis),
                    e.origin);
        }
    }
}
