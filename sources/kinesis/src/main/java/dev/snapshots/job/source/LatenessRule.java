package dev.snapshots.job.source;

import java.io.Serializable;
import java.time.Instant;
import org.apache.flink.annotation.Internal;

/**
 * When an event is late, judged per split against that split's {@link SplitProgress}.
 *
 * <p>A split's watermark trails the highest event time it delivered by the out-of-orderness bound;
 * an event whose window ends at or before it is late. Idleness is judged by arrival time, the clock
 * Kinesis writes into every record: a split with no record for longer than the idleness timeout may
 * have had its watermark moved on with the wall clock while it was quiet (see {@link
 * #idleWatermark}), so the first record after such a gap raises the watermark to where that could
 * have taken it. Both rules read only the split's own records, so a replay, a second deployment or
 * a run with another split assignment judges exactly the same events late; and the watermarks a
 * source emits never pass a window that a later on-time record of the split could still need.
 *
 * @param idlenessMillis 0: a quiet split is never idle and holds windows back until it delivers
 *     again
 */
@Internal
public record LatenessRule(long windowMillis, long outOfOrdernessMillis, long idlenessMillis)
        implements Serializable {

    /** Every record, event or not, is first recorded as arrived. */
    public void arrive(SplitProgress p, long arrivalMillis) {
        if (quietSince(p, arrivalMillis)) {
            p.raiseWatermark(quietWatermark(arrivalMillis));
        }
        p.arrived(arrivalMillis);
    }

    public boolean isLate(SplitProgress p, long eventTimeMillis) {
        long windowEnd =
                eventTimeMillis - Math.floorMod(eventTimeMillis, windowMillis) + windowMillis;
        return windowEnd - 1 <= p.watermark();
    }

    /** Why an event {@link #isLate} is: what a dead letter {@code late} says. */
    public String lateDetail(SplitProgress p, long eventTimeMillis) {
        return "event time "
                + Instant.ofEpochMilli(eventTimeMillis)
                + " is in a window its shard's watermark "
                + Instant.ofEpochMilli(p.watermark())
                + " has closed";
    }

    /** An on-time event moves its split's watermark. */
    public void accept(SplitProgress p, long eventTimeMillis) {
        p.raiseWatermark(eventTimeMillis - outOfOrdernessMillis - 1);
    }

    /**
     * An on-time event whose watermark someone else computed (a SQL table's {@code WATERMARK}
     * expression); as {@link #accept}, the split's watermark only rises.
     */
    public void acceptWithWatermark(SplitProgress p, long watermark) {
        p.raiseWatermark(watermark);
    }

    /**
     * The watermark a split may announce at wall-clock time {@code caughtUpToMillis}, when every
     * record that arrived before that time has been read: past its own, if it has been quiet for
     * longer than the idleness timeout. Any record arriving later raises the split's watermark at
     * least as far ({@link #arrive}), so nothing on time for the split is behind this.
     */
    public long idleWatermark(SplitProgress p, long caughtUpToMillis) {
        return quietSince(p, caughtUpToMillis)
                ? Math.max(p.watermark(), quietWatermark(caughtUpToMillis))
                : p.watermark();
    }

    /**
     * The event time given to a record that is not an on-time event (a dead letter): never behind
     * its split's watermark, so it is never late downstream, and a function of the split's records.
     * Before the split's first event its arrival time, which nothing can be behind yet.
     */
    public long timestampOfRejected(SplitProgress p, long arrivalMillis) {
        return p.watermark() == Long.MIN_VALUE ? arrivalMillis : p.watermark() + 1;
    }

    private boolean quietSince(SplitProgress p, long millis) {
        return idlenessMillis > 0
                && p.maxArrival() != Long.MIN_VALUE
                && millis - p.maxArrival() > idlenessMillis;
    }

    private long quietWatermark(long millis) {
        return millis - idlenessMillis - outOfOrdernessMillis - 1;
    }
}
