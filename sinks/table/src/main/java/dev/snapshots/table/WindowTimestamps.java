package dev.snapshots.table;

import java.time.Duration;
import java.time.Instant;
import org.apache.flink.runtime.execution.SuppressRestartsException;
import org.apache.flink.streaming.api.operators.AbstractStreamOperator;
import org.apache.flink.streaming.api.operators.ChainingStrategy;
import org.apache.flink.streaming.api.operators.OneInputStreamOperator;
import org.apache.flink.streaming.api.watermark.Watermark;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.table.data.RowData;

/**
 * Between the query and the sink, chained to the query's last operator: stamps each row with its
 * window's last millisecond, and refuses a row the sink could not place.
 *
 * <p>Why: the planner's window operators (aggregate, Top-N, join, deduplication) emit rows without
 * a timestamp ({@code TimestampedCollector.eraseTimestamp}), so the assembling window could not
 * place them. They emit a window's rows when the watermark reaches its last millisecond and only
 * then forward that watermark, so a row stamped so is never behind the watermark: the assembling
 * window gathers every row of a window before the watermark passes the window's end and closes its
 * parts.
 *
 * <p>A refusal fails the job without restarts: a query that writes another window length, an
 * unaligned window or rows behind the watermark would fail the same way after every restart.
 */
final class WindowTimestamps extends AbstractStreamOperator<RowData>
        implements OneInputStreamOperator<RowData, RowData> {
    private static final long serialVersionUID = 1L;

    private final String table;
    private final long windowMillis;
    private final int startPos;
    private final int endPos;
    private final int precision;
    private long watermark = Long.MIN_VALUE;

    WindowTimestamps(String table, long windowMillis, TableRowFormat format) {
        this.table = table;
        this.windowMillis = windowMillis;
        this.startPos = format.windowStart();
        this.endPos = format.windowEnd();
        this.precision = format.windowPrecision();
        setChainingStrategy(ChainingStrategy.ALWAYS);
    }

    @Override
    public void processElement(StreamRecord<RowData> element) {
        RowData row = element.getValue();
        if (row.isNullAt(startPos) || row.isNullAt(endPos)) {
            throw refuse("a row without window_start or window_end: " + row);
        }
        long start = row.getTimestamp(startPos, precision).getMillisecond();
        long end = row.getTimestamp(endPos, precision).getMillisecond();
        if (end - start != windowMillis) {
            throw refuse(
                    "a row of the window ["
                            + Instant.ofEpochMilli(start)
                            + ", "
                            + Instant.ofEpochMilli(end)
                            + "), "
                            + Duration.ofMillis(end - start)
                            + " long, while the table's 'window' is "
                            + Duration.ofMillis(windowMillis)
                            + ": write a TUMBLE of that size, or declare its size"
                            + " (a HOP or CUMULATE window cannot be written)");
        }
        if (Math.floorMod(start, windowMillis) != 0) {
            throw refuse(
                    "a window starting at "
                            + Instant.ofEpochMilli(start)
                            + ", not a multiple of "
                            + Duration.ofMillis(windowMillis)
                            + " from 1970-01-01T00:00: a TUMBLE with an offset, or TIMESTAMP_LTZ"
                            + " rows windowed in a session time zone other than UTC"
                            + " (SET 'table.local-time-zone' = 'UTC')");
        }
        long timestamp = end - 1;
        if (timestamp <= watermark) {
            throw refuse(
                    "a row of the window starting at "
                            + Instant.ofEpochMilli(start)
                            + " after the watermark passed its end ("
                            + Instant.ofEpochMilli(watermark)
                            + "): its parts may already be published. Write the rows of a window"
                            + " table-valued function's aggregate (GROUP BY window_start,"
                            + " window_end, ...), Top-N, join or deduplication, which emit a"
                            + " window once, when the watermark passes it");
        }
        output.collect(element.replace(row, timestamp));
    }

    @Override
    public void processWatermark(Watermark mark) throws Exception {
        watermark = Math.max(watermark, mark.getTimestamp());
        super.processWatermark(mark);
    }

    private SuppressRestartsException refuse(String what) {
        return new SuppressRestartsException(
                new IllegalStateException("table " + table + " was given " + what));
    }
}
