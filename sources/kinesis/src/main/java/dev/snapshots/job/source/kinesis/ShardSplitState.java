package dev.snapshots.job.source.kinesis;

import dev.snapshots.job.source.SplitProgress;
import dev.snapshots.job.source.SplitWatermark;

/**
 * A shard being read, on the reader's thread: what a checkpoint of it holds, and the watermark it
 * announced.
 */
final class ShardSplitState {
    final String shardId;
    ShardPosition position;
    final SplitProgress progress;
    boolean exhausted;
    final SplitWatermark watermark = new SplitWatermark();

    ShardSplitState(ShardSplit split) {
        this.shardId = split.splitId();
        this.position = split.position();
        this.progress = split.progress().copy();
        this.exhausted = split.exhausted();
    }

    ShardSplit toSplit() {
        return new ShardSplit(shardId, position, progress.copy(), exhausted);
    }
}
