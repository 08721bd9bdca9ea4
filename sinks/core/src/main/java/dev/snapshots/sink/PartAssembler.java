package dev.snapshots.sink;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.flink.api.common.ExecutionConfig;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.java.functions.KeySelector;
import org.apache.flink.runtime.state.KeyGroupRangeAssignment;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.windowing.ProcessWindowFunction;
import org.apache.flink.streaming.api.windowing.assigners.TumblingEventTimeWindows;
import org.apache.flink.streaming.api.windowing.assigners.WindowAssigner;
import org.apache.flink.streaming.api.windowing.triggers.EventTimeTrigger;
import org.apache.flink.streaming.api.windowing.triggers.Trigger;
import org.apache.flink.streaming.api.windowing.windows.TimeWindow;
import org.apache.flink.util.Collector;

/**
 * Gathers per-window results into one {@link SnapshotPart} per (window, bucket): the stage between
 * any stream of window results and the sink's writer, added by {@link
 * CanonicalSnapshotSink#assemble} (dead letters, and outputs with {@link Bucketing#HASH}).
 *
 * <p>Buckets are keyed by a routing key chosen so bucket b lands in key group {@code b *
 * maxParallelism / B}. Keying by the bare bucket id would hash ids 0..B-1 into whatever key groups
 * they fall in, which for small B piles several buckets onto one subtask; spreading them over the
 * key-group range keeps every subtask busy at any parallelism, and since key groups never change
 * for a key, rescaling does not move a bucket's identity.
 */
final class PartAssembler {
    private PartAssembler() {}

    /**
     * @param config its assembly uid names the operator, distinct per use, since a job may assemble
     *     several outputs
     * @param maxParallelism the assembling operator's, which the buckets are routed over
     * @param windowResults rows of closed windows, each with the timestamp of its window (as a
     *     window function emits them)
     */
    static <T> SingleOutputStreamOperator<SnapshotPart<T>> assemble(
            DataStream<T> windowResults,
            SnapshotSinkConfig<T> config,
            int maxParallelism,
            TypeInformation<T> rowType) {
        WindowAssigner<Object, TimeWindow> windows =
                config.rowWindow().isPresent()
                        ? new RowWindows<>(config.rowWindow().get())
                        : TumblingEventTimeWindows.of(
                                Duration.ofMillis(config.windowLengthMillis()));
        return windowResults
                .keyBy(new BucketRouting<>(config, maxParallelism))
                .window(windows)
                .process(new AssemblePart<>(config, maxParallelism), SnapshotPart.typeInfo(rowType))
                .setMaxParallelism(maxParallelism)
                .name(config.assemblyUid())
                .uid(config.assemblyUid());
    }

    /**
     * The routing key of each bucket: the smallest non-negative int in the bucket's target key
     * group. With more buckets than key groups (B above max parallelism), bucket b targets group
     * {@code b mod maxParallelism}, and the buckets sharing a group take its smallest ints in turn:
     * every bucket keeps a key of its own, so no part ever holds two buckets' rows.
     */
    static int[] routingKeys(int bucketCount, int maxParallelism) {
        Map<Integer, Deque<Integer>> waiting = new HashMap<>();
        for (int b = 0; b < bucketCount; b++) {
            int target =
                    bucketCount <= maxParallelism
                            ? (int) ((long) b * maxParallelism / bucketCount)
                            : b % maxParallelism;
            waiting.computeIfAbsent(target, g -> new ArrayDeque<>()).add(b);
        }
        int[] keys = new int[bucketCount];
        for (int candidate = 0, left = bucketCount; left > 0; candidate++) {
            Deque<Integer> buckets =
                    waiting.get(
                            KeyGroupRangeAssignment.assignToKeyGroup(candidate, maxParallelism));
            if (buckets != null && !buckets.isEmpty()) {
                keys[buckets.poll()] = candidate;
                left--;
            }
        }
        return keys;
    }

    static final class BucketRouting<T> implements KeySelector<T, Integer> {
        private static final long serialVersionUID = 1L;
        private final SnapshotSinkConfig<T> config;
        private final int maxParallelism;
        private final int[] routingKeys;

        BucketRouting(SnapshotSinkConfig<T> config, int maxParallelism) {
            this.config = config;
            this.maxParallelism = maxParallelism;
            this.routingKeys = routingKeys(config.bucketCount(), maxParallelism);
        }

        @Override
        public Integer getKey(T row) {
            return routingKeys[config.bucketOf(config.rowFormat().key(row), maxParallelism)];
        }
    }

    /**
     * Each row in the window it names. The same {@link TimeWindow}s as a tumbling window of the
     * rows' length gives aligned rows, so either restores the other's state (the window's contents
     * and timers are kept per window); a job version's rows must all have one length, which the
     * writer checks.
     */
    static final class RowWindows<T> extends WindowAssigner<Object, TimeWindow> {
        private static final long serialVersionUID = 1L;
        private final RowWindow<T> window;

        RowWindows(RowWindow<T> window) {
            this.window = window;
        }

        @Override
        @SuppressWarnings("unchecked")
        public Collection<TimeWindow> assignWindows(
                Object row, long timestamp, WindowAssignerContext context) {
            T r = (T) row;
            return List.of(new TimeWindow(window.startMillis(r), window.endMillis(r)));
        }

        @Override
        public Trigger<Object, TimeWindow> getDefaultTrigger() {
            return EventTimeTrigger.create();
        }

        /** Flink 1.20 declares this one abstract and calls it; Flink 2 has only the one above. */
        public Trigger<Object, TimeWindow> getDefaultTrigger(StreamExecutionEnvironment env) {
            return getDefaultTrigger();
        }

        @Override
        public TypeSerializer<TimeWindow> getWindowSerializer(ExecutionConfig executionConfig) {
            return new TimeWindow.Serializer();
        }

        @Override
        public boolean isEventTime() {
            return true;
        }
    }

    static final class AssemblePart<T>
            extends ProcessWindowFunction<T, SnapshotPart<T>, Integer, TimeWindow> {
        private static final long serialVersionUID = 1L;
        private final SnapshotSinkConfig<T> config;
        private final int maxParallelism;

        AssemblePart(SnapshotSinkConfig<T> config, int maxParallelism) {
            this.config = config;
            this.maxParallelism = maxParallelism;
        }

        @Override
        public void process(
                Integer routingKey, Context ctx, Iterable<T> rows, Collector<SnapshotPart<T>> out) {
            List<T> all = new ArrayList<>();
            rows.forEach(all::add);
            int bucket = config.bucketOf(config.rowFormat().key(all.get(0)), maxParallelism);
            out.collect(new SnapshotPart<>(ctx.window().getStart(), bucket, all));
        }
    }
}
