package dev.snapshots.table;

import dev.snapshots.sink.CanonicalSnapshotSink;
import org.apache.flink.annotation.Internal;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.DataStreamSink;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;
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
                        rows.transform(
                                        uid,
                                        rows.getType(),
                                        new WindowTimestamps(
                                                table, sink.config().windowLengthMillis(), format))
                                .uid(uid)
                                .setParallelism(rows.getParallelism());
                return sink.assemble(stamped);
            }
        };
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
