package dev.snapshots.table;

import dev.snapshots.sink.CanonicalSnapshotSink;
import dev.snapshots.sink.WindowedSource;
import java.time.Duration;
import org.apache.flink.annotation.Internal;
import org.apache.flink.api.dag.Transformation;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.DataStreamSink;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;
import org.apache.flink.streaming.api.operators.ChainingStrategy;
import org.apache.flink.streaming.api.transformations.PhysicalTransformation;
import org.apache.flink.streaming.api.transformations.SourceTransformation;
import org.apache.flink.table.api.ValidationException;
import org.apache.flink.table.connector.ChangelogMode;
import org.apache.flink.table.connector.ProviderContext;
import org.apache.flink.table.connector.sink.DataStreamSinkProvider;
import org.apache.flink.table.connector.sink.DynamicTableSink;
import org.apache.flink.table.data.RowData;

/**
 * The table sink: the query's rows, stamped with their windows, into {@link
 * CanonicalSnapshotSink#assemble}.
 *
 * <pre>
 *  query (a window TVF's aggregate)  ─►  WindowTimestamps (chained)  ─►  keyBy(bucket) ─► window
 *  emits a window's rows, then the       each row's timestamp: its        (assembling: a part per
 *  watermark past its end                window's last millisecond        bucket) ─► writer ─► committer
 * </pre>
 *
 * <p>Every plan takes the assembling path, with hash buckets of the primary key. Writing where the
 * window emits its rows ({@link CanonicalSnapshotSink#writeWindows}, key-group buckets) would need
 * the sink's buckets to be whole key groups of the planner's shuffle, which hashes the binary row
 * of the GROUP BY columns: neither the primary key's text nor anything a sink is told.
 */
@Internal
final class CanonicalSnapshotsTableSink implements DynamicTableSink {
    private final String table;
    private final CanonicalSnapshotSink<RowData> sink;
    private final TableRowFormat format;

    CanonicalSnapshotsTableSink(
            String table, CanonicalSnapshotSink<RowData> sink, TableRowFormat format) {
        this.table = table;
        this.sink = sink;
        this.format = format;
    }

    /** Rows are published once and never changed: a query that updates or retracts is refused. */
    @Override
    public ChangelogMode getChangelogMode(ChangelogMode requestedMode) {
        return ChangelogMode.insertOnly();
    }

    @Override
    public SinkRuntimeProvider getSinkRuntimeProvider(Context context) {
        return new DataStreamSinkProvider() {
            @Override
            public DataStreamSink<?> consumeDataStream(
                    ProviderContext provider, DataStream<RowData> rows) {
                String uid = "window-timestamps-" + table;
                SingleOutputStreamOperator<RowData> stamped =
                        rows.transform(uid, rows.getType(), windowTimestamps(rows))
                                .uid(uid)
                                .setParallelism(rows.getParallelism());
                // Chained to the query's last operator. Set on the transformation, as both Flink
                // lines allow (Flink 2 no longer lets an operator set its own).
                ((PhysicalTransformation<RowData>) stamped.getTransformation())
                        .setChainingStrategy(ChainingStrategy.ALWAYS);
                return sink.assemble(stamped);
            }
        };
    }

    /**
     * Holds the rows to the table's {@code 'window'}, else to that of a {@link WindowedSource} the
     * query reads (a {@code snapshots-kinesis} table, whose lateness rule closes windows of its
     * length), else to the first row's.
     *
     * @throws ValidationException if the table's window and its sources' differ
     */
    private WindowTimestamps windowTimestamps(DataStream<RowData> rows) {
        long window = sink.config().windowLengthMillis();
        String whence = "the table's 'window' is";
        for (Transformation<?> t : rows.getTransformation().getTransitivePredecessors()) {
            if (t instanceof SourceTransformation<?, ?, ?> source
                    && source.getSource() instanceof WindowedSource windowed) {
                long length = windowed.windowLength().toMillis();
                if (window == 0) {
                    window = length;
                    whence = "the 'window' of its input '" + t.getName() + "' is";
                } else if (length != window) {
                    throw new ValidationException(
                            "table "
                                    + table
                                    + ": "
                                    + whence
                                    + " "
                                    + Duration.ofMillis(window)
                                    + " but its input '"
                                    + t.getName()
                                    + "' judges lateness by windows of "
                                    + windowed.windowLength()
                                    + " (its 'window'): rows on time for one would be late for"
                                    + " the other. Set both to the query's TUMBLE size");
                }
            }
        }
        return new WindowTimestamps(table, window, whence, format);
    }

    @Override
    public DynamicTableSink copy() {
        return new CanonicalSnapshotsTableSink(table, sink, format);
    }

    @Override
    public String asSummaryString() {
        return "canonical-snapshots(" + sink.config().store() + ")";
    }
}
