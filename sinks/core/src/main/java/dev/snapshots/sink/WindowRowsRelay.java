package dev.snapshots.sink;

import dev.snapshots.format.RowFormat;
import java.util.ArrayList;
import java.util.List;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.java.functions.KeySelector;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.api.java.typeutils.TupleTypeInfo;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.DataStreamUtils;
import org.apache.flink.streaming.api.datastream.KeyedStream;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.util.Collector;

/**
 * Hands the rows of {@link CanonicalSnapshotSink#writeWindows} to the writer subtask that holds
 * their bucket: keyed by the row's key at the writers' parallelism, the largest up to the window's
 * that keeps buckets whole.
 *
 * <p>At a window parallelism that keeps buckets whole it is chained between the window and the
 * writer and passes each row on as it comes. At one that splits a bucket (any above B), the rows
 * cross a keyBy to the writers, and a checkpoint barrier can fall between one window subtask's rows
 * and the rows of the same window from another: so it holds each row in keyed state until its
 * watermark passes the row's window, then hands the window's rows over, followed in the same step
 * by that watermark, as a window chained to the writer does. Keyed state moves with its key groups
 * through a rescale, and the operator is on both paths under one uid: a savepoint taken on either
 * restores on the other.
 */
final class WindowRowsRelay<T> extends KeyedProcessFunction<String, T, T> {
    private static final long serialVersionUID = 1L;

    private final boolean hold;
    private final TypeInformation<T> rowType;
    private transient ListState<Tuple2<Long, T>> held;

    WindowRowsRelay(boolean hold, TypeInformation<T> rowType) {
        this.hold = hold;
        this.rowType = rowType;
    }

    /**
     * @param writers the writers' parallelism; equal to the window's (or both unknown, {@code <=
     *     0}): chained, and the rows pass as they come
     */
    static <T> SingleOutputStreamOperator<T> relay(
            DataStream<T> windowResults,
            SnapshotSinkConfig<T> config,
            int maxParallelism,
            int writers) {
        boolean chained = writers == windowResults.getParallelism();
        RowKey<T> key = new RowKey<>(config.rowFormat());
        KeyedStream<T, String> keyed =
                chained
                        ? DataStreamUtils.reinterpretAsKeyedStream(windowResults, key, Types.STRING)
                        : windowResults.keyBy(key, Types.STRING);
        String uid = config.sinkUid() + "-to-writer";
        SingleOutputStreamOperator<T> rows =
                keyed.process(
                                new WindowRowsRelay<>(!chained, windowResults.getType()),
                                windowResults.getType())
                        .name(uid)
                        .uid(uid)
                        .setMaxParallelism(maxParallelism);
        return writers > 0 ? rows.setParallelism(writers) : rows;
    }

    @Override
    public void open(OpenContext openContext) {
        held =
                getRuntimeContext()
                        .getListState(
                                new ListStateDescriptor<>(
                                        "held-rows", new TupleTypeInfo<>(Types.LONG, rowType)));
    }

    @Override
    public void processElement(T row, Context ctx, Collector<T> out) throws Exception {
        if (!hold) {
            out.collect(row);
            return;
        }
        Long timestamp = ctx.timestamp();
        if (timestamp == null) {
            throw new IllegalStateException(
                    "row with key '"
                            + ctx.getCurrentKey()
                            + "' has no timestamp: it must come from a window");
        }
        held.add(Tuple2.of(timestamp, row));
        ctx.timerService().registerEventTimeTimer(timestamp);
    }

    /**
     * Also on the chained path: rows a savepoint of the other path held are handed over when the
     * watermark passes their window.
     */
    @Override
    public void onTimer(long timestamp, OnTimerContext ctx, Collector<T> out) throws Exception {
        List<Tuple2<Long, T>> later = new ArrayList<>();
        for (Tuple2<Long, T> row : held.get()) {
            if (row.f0 == timestamp) {
                out.collect(row.f1);
            } else {
                later.add(row);
            }
        }
        held.update(later);
    }

    /** The text the format sorts by, which the writer places in a key group. */
    private static final class RowKey<T> implements KeySelector<T, String> {
        private static final long serialVersionUID = 1L;
        private final RowFormat<T> format;

        RowKey(RowFormat<T> format) {
            this.format = format;
        }

        @Override
        public String getKey(T row) {
            return format.key(row);
        }
    }
}
