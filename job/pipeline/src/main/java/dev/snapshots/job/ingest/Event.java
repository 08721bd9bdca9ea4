package dev.snapshots.job.ingest;

import org.apache.flink.annotation.Internal;

/**
 * A parsed telemetry reading. Measures are fixed-point (millionths) so that sums are exact and do
 * not depend on the order events arrive in: with doubles, two runs over the same input could add in
 * a different order, produce different bits and be reported as a divergence. A Flink POJO.
 */
@Internal
public class Event {
    public static final long MICROS = 1_000_000L;

    public String device;
    public long timestampMillis;
    public long valueMicros;
    public long bytes;
    public long latencyMicros;

    /** Where it came from, for the operator reading a log line about it. */
    public String origin;

    public Event() {}

    public Event(
            String device,
            long timestampMillis,
            long valueMicros,
            long bytes,
            long latencyMicros,
            String origin) {
        this.device = device;
        this.timestampMillis = timestampMillis;
        this.valueMicros = valueMicros;
        this.bytes = bytes;
        this.latencyMicros = latencyMicros;
        this.origin = origin;
    }
}
