package dev.snapshots.job.source.kinesis;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;
import org.apache.flink.api.connector.source.ReaderOutput;
import org.apache.flink.api.connector.source.SourceEvent;
import org.apache.flink.api.connector.source.SourceReaderContext;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.connector.base.source.reader.SingleThreadMultiplexSourceReaderBase;
import org.apache.flink.connector.base.source.reader.splitreader.SplitReader;
import org.apache.flink.core.io.InputStatus;

/**
 * A subtask's reader. Besides reading (fetcher thread, {@link ShardFetcher}) and emitting ({@link
 * ShardEmitter}), it announces each shard it is given: its starting watermark goes out on the
 * shard's output at once, before any record, and the enumerator hears that the shard started (or,
 * for a shard restored after being read to its end, that it finished, again). It drops or idles
 * finished shards when the enumerator says so.
 */
final class ShardReader<T>
        extends SingleThreadMultiplexSourceReaderBase<ShardBatch, T, ShardSplit, ShardSplitState> {
    private final Set<String> released;
    private final Map<String, ShardSplitState> shards = new HashMap<>();
    private final List<String> toAnnounce = new ArrayList<>();
    private final List<String> toIdle = new ArrayList<>();

    /**
     * Whether this reader should say it is idle: told it has no shards, or its last shard was
     * dropped.
     */
    private boolean idle;

    private boolean saidIdle;

    ShardReader(
            Supplier<SplitReader<ShardBatch, ShardSplit>> fetcher,
            ShardEmitter<T> emitter,
            Set<String> released,
            Configuration config,
            SourceReaderContext context) {
        super(fetcher, emitter, config, context);
        this.released = released;
    }

    @Override
    protected ShardSplitState initializedState(ShardSplit split) {
        ShardSplitState state = new ShardSplitState(split);
        shards.put(split.splitId(), state);
        toAnnounce.add(split.splitId());
        return state;
    }

    @Override
    protected ShardSplit toSplitType(String splitId, ShardSplitState state) {
        return state.toSplit();
    }

    @Override
    protected void onSplitFinished(Map<String, ShardSplitState> finished) {
        finished.keySet().forEach(shards::remove);
        idle = shards.isEmpty();
    }

    @Override
    public InputStatus pollNext(ReaderOutput<T> output) throws Exception {
        for (String id : toAnnounce) {
            ShardSplitState shard = shards.get(id);
            if (shard != null) {
                shard.watermark.advance(
                        output.createOutputForSplit(id), shard.progress.watermark());
                context.sendSourceEventToCoordinator(
                        shard.exhausted
                                ? ShardEmitter.finished(shard)
                                : new ShardEvents.Started(id));
            }
        }
        toAnnounce.clear();
        for (String id : toIdle) {
            if (shards.containsKey(id)) {
                output.createOutputForSplit(id).markIdle();
            }
        }
        toIdle.clear();
        InputStatus status = super.pollNext(output);
        boolean nowIdle = idle && shards.isEmpty();
        if (nowIdle != saidIdle) {
            saidIdle = nowIdle;
            if (nowIdle) {
                output.markIdle();
            } else {
                output.markActive();
            }
        }
        return status;
    }

    @Override
    public void addSplits(List<ShardSplit> splits) {
        super.addSplits(splits);
        splitFetcherManager
                .getQueue()
                .notifyAvailable(); // announce them now, not when the first batch comes
    }

    @Override
    public void handleSourceEvents(SourceEvent event) {
        if (event instanceof ShardEvents.Release release) {
            release.shardIds().stream()
                    .filter(id -> shards.containsKey(id) && shards.get(id).exhausted)
                    .forEach(released::add);
        } else if (event instanceof ShardEvents.Idle finished) {
            toIdle.addAll(finished.shardIds());
            splitFetcherManager.getQueue().notifyAvailable();
        } else if (event instanceof ShardEvents.NoShards) {
            idle = true;
            splitFetcherManager.getQueue().notifyAvailable();
        } else {
            super.handleSourceEvents(event);
        }
    }
}
