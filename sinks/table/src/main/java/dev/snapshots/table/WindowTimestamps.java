package dev.snapshots.table;

import dev.snapshots.key.WorkIdentity;
import java.time.Duration;
import java.time.Instant;
import org.apache.flink.runtime.execution.SuppressRestartsException;
import org.apache.flink.streaming.api.operators.AbstractStreamOperator;
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
 * <p>Every row's window must be of one length: the table's {@code 'window'}, else the {@code
 * 'window'} of a {@code snapshots-kinesis} table it reads, else the first row's (per subtask here;
 * across subtasks and runs the job version's identity holds it, see the writer).
 *
 * <p>A refusal fails the job without restarts: a query that writes another window length, an
 * unaligned window or rows behind the watermark would fail the same way after every restart.
 */
final class WindowTimestamps extends AbstractStreamOperator<RowData>
        implements OneInputStreamOperator<RowData, RowData> {
    private static final long serialVersionUID = 1L;

    private final String table;
    private final TableRowFormat format;

    /** Where {@link #windowMillis} comes from, for a refusal; null while no row has given it. */
    private String whence;

    /** 0 until the first row, when neither the table nor its input gives it. */
    private long windowMillis;

    private long watermark = Long.MIN_VALUE;

    /**
     * @param windowMillis 0: the first row's
     * @param whence where a given length comes from, e.g. "the table's 'window'"
     */
    WindowTimestamps(String table, long windowMillis, String whence, TableRowFormat format) {
        this.table = table;
        this.windowMillis = windowMillis;
        this.whence = windowMillis == 0 ? null : whence;
        this.format = format;
    }

    @Override
    public void processElement(StreamRecord<RowData> element) {
        RowData row = element.getValue();
        if (row.isNullAt(format.windowStart()) || row.isNullAt(format.windowEnd())) {
            throw refuse("a row without window_start or window_end: " + row);
        }
        long start = format.startMillis(row);
        long end = format.endMillis(row);
        if (whence == null) {
            try {
                WorkIdentity.requireWindowLength(end - start);
            } catch (IllegalArgumentException e) {
                throw refuse("a row of the window " + window(start, end) + ": " + e.getMessage());
            }
            windowMillis = end - start;
            whence = "its first rows' windows are";
        }
        if (end - start != windowMillis) {
            throw refuse(
                    "a row of the window "
                            + window(start, end)
                            + ", "
                            + Duration.ofMillis(end - start)
                            + " long, while "
                            + whence
                            + " "
                            + Duration.ofMillis(windowMillis)
                            + ": write one TUMBLE of that size into the table (a HOP or CUMULATE"
                            + " window cannot be written)");
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

    private static String window(long start, long end) {
        return "[" + Instant.ofEpochMilli(start) + ", " + Instant.ofEpochMilli(end) + ")";
    }

    private SuppressRestartsException refuse(String what) {
        return new SuppressRestartsException(
                new IllegalStateException("table " + table + " was given " + what));
    }
}
