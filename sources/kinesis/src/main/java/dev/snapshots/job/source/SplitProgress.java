package dev.snapshots.job.source;

import java.io.IOException;
import java.util.Collection;
import org.apache.flink.annotation.Internal;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputView;

/**
 * How far one split (a Kinesis shard, a generator range) has come: the watermark its own records
 * imply and the latest arrival among them. Lateness is judged against this and nothing else, so
 * whether an event is late is a function of its own split's record sequence: not of which other
 * splits share its subtask, the order splits were assigned in, or how reads interleave. It lives in
 * the split's checkpointed state, so it survives restores, rescales and reassignment, and a child
 * shard starts from its parents' ({@link #inherit}).
 */
@Internal
public final class SplitProgress {
    /** Events whose window ends at or before this are late. Only rises. */
    private long watermark;

    /** The latest arrival time of any record of this split (or its parents). */
    private long maxArrival;

    public SplitProgress(long watermark, long maxArrival) {
        this.watermark = watermark;
        this.maxArrival = maxArrival;
    }

    /** A split that has seen nothing: nothing is late, and no arrival is known. */
    public static SplitProgress none() {
        return new SplitProgress(Long.MIN_VALUE, Long.MIN_VALUE);
    }

    /** A child shard continues where all of its parents ended: the highest of each. */
    public static SplitProgress inherit(Collection<SplitProgress> parents) {
        SplitProgress p = none();
        for (SplitProgress parent : parents) {
            p.raiseWatermark(parent.watermark);
            p.maxArrival = Math.max(p.maxArrival, parent.maxArrival);
        }
        return p;
    }

    public long watermark() {
        return watermark;
    }

    public long maxArrival() {
        return maxArrival;
    }

    void raiseWatermark(long candidate) {
        watermark = Math.max(watermark, candidate);
    }

    void arrived(long arrivalMillis) {
        maxArrival = Math.max(maxArrival, arrivalMillis);
    }

    public SplitProgress copy() {
        return new SplitProgress(watermark, maxArrival);
    }

    public void write(DataOutputView out) throws IOException {
        out.writeLong(watermark);
        out.writeLong(maxArrival);
    }

    public static SplitProgress read(DataInputView in) throws IOException {
        return new SplitProgress(in.readLong(), in.readLong());
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof SplitProgress p
                && p.watermark == watermark
                && p.maxArrival == maxArrival;
    }

    @Override
    public int hashCode() {
        return Long.hashCode(watermark) * 31 + Long.hashCode(maxArrival);
    }

    @Override
    public String toString() {
        return "SplitProgress{watermark=" + watermark + ", maxArrival=" + maxArrival + "}";
    }
}
