package dev.snapshots.job.ingest;

import dev.snapshots.job.DeadLetter;
import dev.snapshots.job.source.LatenessRule;
import dev.snapshots.job.source.RawRecord;
import dev.snapshots.job.source.RecordJudge;
import dev.snapshots.job.source.SplitProgress;
import org.apache.flink.annotation.Internal;
import org.apache.flink.api.connector.source.SourceOutput;

/**
 * The job's judgement of a record, applied inside every source to each split's records in the
 * split's own order: parsed into an event or rejected with a reason, and an event late for its
 * split rejected as {@code late}. Events carry their event time; dead letters a time that is never
 * behind their split's watermark, so no window operator downstream drops one.
 */
@Internal
public final class EventJudge implements RecordJudge<Ingested> {
    private static final long serialVersionUID = 1L;
    private final EventParser parser;
    private final LatenessRule rule;

    public EventJudge(EventParser parser, LatenessRule rule) {
        this.parser = parser;
        this.rule = rule;
    }

    @Override
    public LatenessRule rule() {
        return rule;
    }

    @Override
    public void judge(RawRecord raw, SplitProgress progress, SourceOutput<Ingested> out) {
        rule.arrive(progress, raw.arrivalMillis);
        if (raw.defect != null) {
            reject(raw, Rejection.BAD_AGGREGATE, raw.defect, progress, out);
            return;
        }
        EventParser.Result result = parser.parse(raw);
        Event e = result.event();
        if (e == null) {
            reject(raw, result.rejection(), result.detail(), progress, out);
        } else if (rule.isLate(progress, e.timestampMillis)) {
            reject(
                    raw,
                    Rejection.LATE,
                    rule.lateDetail(progress, e.timestampMillis),
                    progress,
                    out);
        } else {
            rule.accept(progress, e.timestampMillis);
            out.collect(Ingested.of(e), e.timestampMillis);
        }
    }

    private void reject(
            RawRecord raw,
            Rejection reason,
            String detail,
            SplitProgress progress,
            SourceOutput<Ingested> out) {
        out.collect(
                Ingested.of(DeadLetter.of(raw, reason, detail)),
                rule.timestampOfRejected(progress, raw.arrivalMillis));
    }
}
