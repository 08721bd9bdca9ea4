package dev.snapshots.job;

/**
 * One record as a source delivered it, before parsing: where it came from (so a dead letter can
 * name it), when it arrived (the clock dead letters and the time horizon are judged by), and its
 * bytes. A Flink POJO.
 */
public class RawRecord {
    /** Source and position, e.g. {@code shardId-000000000001:49650...} or {@code generator:000000000042}. */
    public String origin;
    /** Kinesis' approximate arrival time, the generator's clock, or the replayed file's clock. */
    public long arrivalMillis;

    public byte[] payload;

    public RawRecord() {}

    public RawRecord(String origin, long arrivalMillis, byte[] payload) {
        this.origin = origin;
        this.arrivalMillis = arrivalMillis;
        this.payload = payload;
    }
}
