package dev.snapshots.job;

import org.apache.flink.api.common.eventtime.Watermark;
import org.apache.flink.api.common.eventtime.WatermarkGenerator;
import org.apache.flink.api.common.eventtime.WatermarkOutput;

/**
 * Bounded out-of-orderness, with the watermark moved as soon as an event moves it rather than on a
 * timer: which events are late then depends on the order of the input alone, not on how fast it
 * was read, so a replay dead-letters exactly the events the live run did.
 */
final class EveryEventWatermarks<T> implements WatermarkGenerator<T> {
    private final long outOfOrdernessMillis;
    private long emitted = Long.MIN_VALUE;

    EveryEventWatermarks(long outOfOrdernessMillis) {
        this.outOfOrdernessMillis = outOfOrdernessMillis;
    }

    @Override
    public void onEvent(T event, long timestamp, WatermarkOutput output) {
        long candidate = timestamp - outOfOrdernessMillis - 1;
        if (candidate > emitted) {
            emitted = candidate;
            output.emitWatermark(new Watermark(candidate));
        }
    }

    @Override
    public void onPeriodicEmit(WatermarkOutput output) {
        // Watermarks follow the events; idleness is handled by the strategy.
    }
}
