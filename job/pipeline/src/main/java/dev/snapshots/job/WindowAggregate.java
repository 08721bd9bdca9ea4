package dev.snapshots.job;

import dev.snapshots.format.FlatRowFormat;
import dev.snapshots.job.ingest.Event;
import org.apache.avro.LogicalTypes;
import org.apache.avro.Schema;
import org.apache.avro.SchemaBuilder;
import org.apache.flink.annotation.Internal;

/**
 * One device's totals over one window: a row of a snapshot. Accumulated in exact millionths, so the
 * result is the same whatever order the events arrived in. A Flink POJO, also the accumulator.
 */
@Internal
public class WindowAggregate {
    /** Schema version 1 of the snapshot rows. */
    public static final Schema SCHEMA =
            SchemaBuilder.record("WindowAggregate")
                    .namespace("dev.snapshots.job")
                    .fields()
                    .requiredString("device")
                    .name("window_start")
                    .type(timestamp())
                    .noDefault()
                    .name("window_end")
                    .type(timestamp())
                    .noDefault()
                    .requiredLong("count")
                    .requiredDouble("value_sum")
                    .requiredDouble("value_min")
                    .requiredDouble("value_max")
                    .requiredDouble("value_mean")
                    .requiredDouble("value_last")
                    .name("last_event_time")
                    .type(timestamp())
                    .noDefault()
                    .requiredLong("bytes_total")
                    .requiredDouble("latency_max_ms")
                    .endRecord();

    public String device;
    public long windowStart;
    public long windowEnd;
    public long count;
    public long sumMicros;
    public long minMicros = Long.MAX_VALUE;
    public long maxMicros = Long.MIN_VALUE;
    public long lastTimestamp = Long.MIN_VALUE;
    public long lastMicros;
    public long bytes;
    public long maxLatencyMicros;

    public WindowAggregate() {}

    /** Adds one event. Commutative and associative, so arrival order cannot show in the result. */
    public WindowAggregate add(Event e) {
        device = e.device;
        count++;
        sumMicros += e.valueMicros;
        minMicros = Math.min(minMicros, e.valueMicros);
        maxMicros = Math.max(maxMicros, e.valueMicros);
        // The last value by event time; among events at the same millisecond the highest value
        // wins.
        if (e.timestampMillis > lastTimestamp
                || (e.timestampMillis == lastTimestamp && e.valueMicros > lastMicros)) {
            lastTimestamp = e.timestampMillis;
            lastMicros = e.valueMicros;
        }
        bytes += e.bytes;
        maxLatencyMicros = Math.max(maxLatencyMicros, e.latencyMicros);
        return this;
    }

    public WindowAggregate merge(WindowAggregate o) {
        WindowAggregate m = new WindowAggregate();
        m.device = device != null ? device : o.device;
        m.count = count + o.count;
        m.sumMicros = sumMicros + o.sumMicros;
        m.minMicros = Math.min(minMicros, o.minMicros);
        m.maxMicros = Math.max(maxMicros, o.maxMicros);
        boolean mine =
                lastTimestamp > o.lastTimestamp
                        || (lastTimestamp == o.lastTimestamp && lastMicros >= o.lastMicros);
        m.lastTimestamp = mine ? lastTimestamp : o.lastTimestamp;
        m.lastMicros = mine ? lastMicros : o.lastMicros;
        m.bytes = bytes + o.bytes;
        m.maxLatencyMicros = Math.max(maxLatencyMicros, o.maxLatencyMicros);
        return m;
    }

    private static Schema timestamp() {
        return LogicalTypes.timestampMillis().addToSchema(Schema.create(Schema.Type.LONG));
    }

    private static double units(long micros) {
        return micros / (double) Event.MICROS;
    }

    /** How snapshot rows are encoded and sorted: from their fields, with no record per row. */
    public static final class Format implements FlatRowFormat<WindowAggregate> {
        private static final long serialVersionUID = 1L;

        @Override
        public Schema schema() {
            return SCHEMA;
        }

        @Override
        public String key(WindowAggregate row) {
            return row.device;
        }

        @Override
        public void writeFields(WindowAggregate a, Fields out) {
            out.string(a.device);
            out.int64(a.windowStart);
            out.int64(a.windowEnd);
            out.int64(a.count);
            out.float64(units(a.sumMicros));
            out.float64(units(a.minMicros));
            out.float64(units(a.maxMicros));
            out.float64(a.sumMicros / (double) a.count / Event.MICROS);
            out.float64(units(a.lastMicros));
            out.int64(a.lastTimestamp);
            out.int64(a.bytes);
            out.float64(units(a.maxLatencyMicros));
        }
    }
}
