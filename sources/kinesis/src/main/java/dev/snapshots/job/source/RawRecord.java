package dev.snapshots.job.source;

import org.apache.flink.annotation.Internal;

/**
 * One record as a source read it, before parsing: where it came from (so a dead letter can name
 * it), when it arrived (the clock the time horizon and idleness are judged by), and its bytes.
 */
@Internal
public class RawRecord {
    /**
     * Source and position, e.g. {@code shardId-000000000001:49650...} or {@code
     * generator:000000000042}.
     */
    public String origin;

    /** Kinesis' approximate arrival time, the generator's clock, or the replayed file's clock. */
    public long arrivalMillis;

    public byte[] payload;

    /**
     * Why the source could not unpack the record into user records (a KPL aggregate whose digest
     * does not match), or null. Such a record becomes one dead letter.
     */
    public String defect;

    public RawRecord(String origin, long arrivalMillis, byte[] payload) {
        this.origin = origin;
        this.arrivalMillis = arrivalMillis;
        this.payload = payload;
    }

    public static RawRecord defective(
            String origin, long arrivalMillis, byte[] payload, String defect) {
        RawRecord r = new RawRecord(origin, arrivalMillis, payload);
        r.defect = defect;
        return r;
    }
}
