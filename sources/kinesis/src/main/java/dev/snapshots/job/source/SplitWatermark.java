package dev.snapshots.job.source;

import org.apache.flink.annotation.Internal;
import org.apache.flink.api.common.eventtime.Watermark;
import org.apache.flink.api.connector.source.SourceOutput;

/** The watermark one split has announced on its own output, so only a rise is emitted again. */
@Internal
public final class SplitWatermark {
    private long emitted = Long.MIN_VALUE;

    public void advance(SourceOutput<?> out, long watermark) {
        if (watermark > emitted) {
            emitted = watermark;
            out.emitWatermark(new Watermark(watermark));
        }
    }
}
