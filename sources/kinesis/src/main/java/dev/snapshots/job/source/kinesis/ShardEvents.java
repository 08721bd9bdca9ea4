package dev.snapshots.job.source.kinesis;

import dev.snapshots.job.source.SplitProgress;
import java.util.Set;
import org.apache.flink.api.connector.source.SourceEvent;

/**
 * The messages between the readers and the enumerator that hand a shard's place in event time over
 * to its children when Kinesis splits or merges it. A reader that reads a shard to its end keeps
 * the shard's watermark in place and says so ({@link Finished}); the enumerator gives the children
 * that shard's progress, and once every child has announced its watermark ({@link Started}) it lets
 * the parent go ({@link Release}). Until then no window can close over events the children still
 * hold. A merge parent whose co-parent is still being read holds nothing the co-parent does not
 * ({@link Idle}), which keeps alignment from pausing the co-parent forever. Every message is sent
 * again after a restore; receiving one twice changes nothing.
 */
final class ShardEvents {
    private ShardEvents() {}

    /**
     * Reader to enumerator: the shard was read to its end; its children continue from this
     * progress.
     */
    record Finished(String shardId, long watermark, long maxArrival) implements SourceEvent {
        SplitProgress progress() {
            return new SplitProgress(watermark, maxArrival);
        }
    }

    /** Reader to enumerator: the shard's split output exists and carries its starting watermark. */
    record Started(String shardId) implements SourceEvent {}

    /** Enumerator to readers: these finished shards are no longer needed; drop them. */
    record Release(Set<String> shardIds) implements SourceEvent {}

    /** Enumerator to readers: these finished shards may stop holding the watermark back. */
    record Idle(Set<String> shardIds) implements SourceEvent {}

    /**
     * Enumerator to a reader: every shard there is went to other readers (more subtasks than
     * shards), so this one need not hold windows back. Until told, a reader without shards holds
     * them back: shards may still be on their way, and its watermark must not pass theirs.
     */
    record NoShards() implements SourceEvent {}
}
