package dev.snapshots.job.source.kinesis;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.flink.connector.base.source.reader.RecordsBySplits;
import org.apache.flink.connector.base.source.reader.RecordsWithSplitIds;
import org.apache.flink.connector.base.source.reader.splitreader.SplitReader;
import org.apache.flink.connector.base.source.reader.splitreader.SplitsAddition;
import org.apache.flink.connector.base.source.reader.splitreader.SplitsChange;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import software.amazon.awssdk.services.kinesis.model.ExpiredIteratorException;
import software.amazon.awssdk.services.kinesis.model.GetRecordsResponse;
import software.amazon.awssdk.services.kinesis.model.LimitExceededException;
import software.amazon.awssdk.services.kinesis.model.ProvisionedThroughputExceededException;
import software.amazon.awssdk.services.kinesis.model.Record;

/**
 * The fetcher thread's side of a reader: one GetRecords call at a time, over the shards in turn,
 * each shard at most once per poll interval. Shards paused for watermark alignment are skipped; a
 * shard read to its end stays parked (its split keeps holding the watermark) until the enumerator
 * releases it, and is then reported finished.
 */
final class ShardFetcher implements SplitReader<ShardBatch, ShardSplit> {
    private static final Logger LOG = LoggerFactory.getLogger(ShardFetcher.class);
    private static final int MAX_RECORDS = 10_000;

    /** The longest a fetch waits for a shard to be due before returning empty-handed. */
    private static final long MAX_WAIT_MILLIS = 500;

    private static final long MAX_BACKOFF_MILLIS = 10_000;

    private final KinesisShardSource.Settings settings;
    private final Set<String> released;
    private final Map<String, Long> behind;
    private final LazyKinesisClient kinesis;
    private final Map<String, Cursor> cursors = new LinkedHashMap<>();
    private final Set<String> paused = new HashSet<>();
    private final Object wakeUp = new Object();
    private boolean wokenUp;

    /** Where the fetcher is in one shard. */
    private static final class Cursor {
        final String shardId;
        ShardPosition position;
        String iterator;
        boolean exhausted;
        long dueAtMillis;
        long backoffMillis;

        Cursor(ShardSplit split) {
            this.shardId = split.splitId();
            this.position = split.position();
            this.exhausted = split.exhausted();
        }
    }

    /**
     * @param released shards the reader was told to drop, filled on the reader's thread
     * @param behind each shard's MillisBehindLatest of its last GetRecords, read by the reader's
     *     gauge
     */
    ShardFetcher(
            KinesisShardSource.Settings settings, Set<String> released, Map<String, Long> behind) {
        this.settings = settings;
        this.released = released;
        this.behind = behind;
        this.kinesis = new LazyKinesisClient(settings, "reader");
    }

    @Override
    public RecordsWithSplitIds<ShardBatch> fetch() {
        long deadline = System.currentTimeMillis() + MAX_WAIT_MILLIS;
        while (true) {
            Set<String> drop = new HashSet<>();
            cursors.values().stream()
                    .filter(c -> c.exhausted && released.remove(c.shardId))
                    .forEach(c -> drop.add(c.shardId));
            if (!drop.isEmpty()) {
                drop.forEach(cursors::remove);
                drop.forEach(behind::remove);
                return new RecordsBySplits<>(Map.of(), drop);
            }
            long now = System.currentTimeMillis();
            Cursor due = null;
            long nextDue = deadline;
            for (Cursor c : cursors.values()) {
                if (c.exhausted || paused.contains(c.shardId)) {
                    continue;
                }
                if (c.dueAtMillis <= now) {
                    due = c;
                    break;
                }
                nextDue = Math.min(nextDue, c.dueAtMillis);
            }
            if (due != null) {
                // Round robin: the shard read now goes to the back of the line.
                cursors.remove(due.shardId);
                cursors.put(due.shardId, due);
                return read(due, now);
            }
            if (now >= deadline || !await(nextDue - now)) {
                return new RecordsBySplits<>(Map.of(), Set.of());
            }
        }
    }

    /** Waits up to {@code millis}; false when woken up (a split change is waiting). */
    private boolean await(long millis) {
        synchronized (wakeUp) {
            if (!wokenUp && millis > 0) {
                try {
                    wakeUp.wait(millis);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return false;
                }
            }
            boolean woken = wokenUp;
            wokenUp = false;
            return !woken;
        }
    }

    private RecordsWithSplitIds<ShardBatch> read(Cursor c, long now) {
        GetRecordsResponse response;
        try {
            if (c.iterator == null) {
                c.iterator = iterator(c);
            }
            String iterator = c.iterator;
            response = kinesis.get().getRecords(b -> b.shardIterator(iterator).limit(MAX_RECORDS));
        } catch (ExpiredIteratorException e) {
            c.iterator = null; // five minutes without a call (a long pause): start again from the
            // position
            return new RecordsBySplits<>(Map.of(), Set.of());
        } catch (ProvisionedThroughputExceededException | LimitExceededException e) {
            c.backoffMillis =
                    Math.min(
                            MAX_BACKOFF_MILLIS,
                            Math.max(2 * c.backoffMillis, settings.pollInterval().toMillis()));
            c.dueAtMillis = now + c.backoffMillis;
            LOG.info(
                    "Kinesis throttled reads of {}; next try in {} ms", c.shardId, c.backoffMillis);
            return new RecordsBySplits<>(Map.of(), Set.of());
        }
        c.backoffMillis = 0;
        c.dueAtMillis = now + settings.pollInterval().toMillis();
        List<Record> records = response.records();
        if (!records.isEmpty()) {
            c.position =
                    ShardPosition.continueFromSequenceNumber(
                            records.get(records.size() - 1).sequenceNumber());
        }
        c.iterator = response.nextShardIterator();
        c.exhausted = c.iterator == null;
        Long millisBehind = response.millisBehindLatest();
        if (millisBehind != null) {
            behind.put(c.shardId, millisBehind);
        }
        boolean atTip =
                records.isEmpty() && !c.exhausted && millisBehind != null && millisBehind == 0;
        ShardBatch batch = new ShardBatch(new ArrayList<>(records), atTip, c.exhausted, now);
        return new RecordsBySplits<>(Map.of(c.shardId, List.of(batch)), Set.of());
    }

    private String iterator(Cursor c) {
        ShardPosition p = c.position;
        return kinesis.get()
                .getShardIterator(
                        b ->
                                b.streamARN(settings.streamArn())
                                        .shardId(c.shardId)
                                        .shardIteratorType(p.type())
                                        .startingSequenceNumber(p.sequenceNumber())
                                        .timestamp(p.timestamp()))
                .shardIterator();
    }

    @Override
    public void handleSplitsChanges(SplitsChange<ShardSplit> change) {
        if (change instanceof SplitsAddition) {
            change.splits().forEach(s -> cursors.put(s.splitId(), new Cursor(s)));
        }
    }

    @Override
    public void pauseOrResumeSplits(
            Collection<ShardSplit> toPause, Collection<ShardSplit> toResume) {
        toPause.forEach(s -> paused.add(s.splitId()));
        toResume.forEach(s -> paused.remove(s.splitId()));
    }

    @Override
    public void wakeUp() {
        synchronized (wakeUp) {
            wokenUp = true;
            wakeUp.notifyAll();
        }
    }

    @Override
    public void close() {
        kinesis.close();
    }
}
