package dev.snapshots.job.source.kinesis;

import dev.snapshots.job.source.LatenessRule;
import dev.snapshots.job.source.RawRecord;
import dev.snapshots.job.source.RecordJudge;
import org.apache.flink.api.connector.source.SourceOutput;
import org.apache.flink.api.connector.source.SourceReaderContext;
import org.apache.flink.connector.base.source.reader.RecordEmitter;
import software.amazon.awssdk.services.kinesis.model.Record;

/**
 * Turns a shard's batch into output on the reader's thread: each Kinesis record de-aggregated into
 * its user records, each judged against the shard's progress; then the shard's watermark (moved on
 * with the clock if the shard is caught up and has been quiet); and a shard read to its end is
 * announced to the enumerator.
 */
final class ShardEmitter<T> implements RecordEmitter<ShardBatch, T, ShardSplitState> {
    /**
     * How far behind the TaskManager's clock a caught-up shard's arrivals are taken to reach:
     * allowance for clock skew between this host and Kinesis, and for a record that is written but
     * not yet readable.
     */
    static final long ARRIVAL_ALLOWANCE_MILLIS = 1_000;

    private final RecordJudge<T> judge;
    private final LatenessRule rule;
    private final SourceReaderContext context;

    ShardEmitter(RecordJudge<T> judge, SourceReaderContext context) {
        this.judge = judge;
        this.rule = judge.rule();
        this.context = context;
    }

    @Override
    public void emitRecord(ShardBatch batch, SourceOutput<T> out, ShardSplitState shard) {
        for (Record r : batch.records()) {
            long arrival = r.approximateArrivalTimestamp().toEpochMilli();
            for (RawRecord user :
                    KplAggregate.userRecords(
                            shard.shardId + ":" + r.sequenceNumber(),
                            arrival,
                            r.data().asByteArray())) {
                judge.judge(user, shard.progress, out);
            }
            shard.position = ShardPosition.continueFromSequenceNumber(r.sequenceNumber());
        }
        shard.watermark.advance(
                out,
                batch.atTip()
                        ? rule.idleWatermark(
                                shard.progress, batch.polledAtMillis() - ARRIVAL_ALLOWANCE_MILLIS)
                        : shard.progress.watermark());
        if (batch.exhausted()) {
            shard.exhausted = true;
            context.sendSourceEventToCoordinator(finished(shard));
        }
    }

    static ShardEvents.Finished finished(ShardSplitState shard) {
        return new ShardEvents.Finished(
                shard.shardId, shard.progress.watermark(), shard.progress.maxArrival());
    }
}
