package dev.snapshots.job.source;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import org.apache.flink.api.connector.source.ReaderOutput;
import org.apache.flink.api.connector.source.SourceOutput;
import org.apache.flink.api.connector.source.SourceReader;
import org.apache.flink.api.connector.source.SourceReaderContext;
import org.apache.flink.api.connector.source.util.ratelimit.RateLimiter;
import org.apache.flink.connector.datagen.source.GeneratorFunction;
import org.apache.flink.core.io.InputStatus;

/**
 * Reads its splits in turn, one record from each, so that they move through event time together;
 * each split's records are judged against that split's progress and emitted on the split's own
 * output, which carries the split's watermark.
 */
final class IndexedReader<T> implements SourceReader<T, IndexedSplit> {
    private final GeneratorFunction<Long, RawRecord> records;
    private final RecordJudge<T> judge;
    private final RateLimiter rate;
    private final SourceReaderContext context;
    private final List<Split> splits = new ArrayList<>();
    private final Set<String> paused = new HashSet<>();
    private CompletableFuture<Void> available = new CompletableFuture<>();
    private CompletableFuture<Void> permit;
    private boolean noMoreSplits;
    private int turn;

    /** A split being read: where it is, and the watermark it has announced. */
    private static final class Split {
        final String id;
        long next;
        final long end;
        final SplitProgress progress;
        final SplitWatermark watermark = new SplitWatermark();

        Split(IndexedSplit s) {
            this.id = s.splitId();
            this.next = s.next();
            this.end = s.end();
            this.progress = s.progress().copy();
        }
    }

    /**
     * @param rate null: as fast as the job takes them
     */
    IndexedReader(
            GeneratorFunction<Long, RawRecord> records,
            RecordJudge<T> judge,
            RateLimiter rate,
            SourceReaderContext context) {
        this.records = records;
        this.judge = judge;
        this.rate = rate;
        this.context = context;
    }

    /** Restored splits have been added by now; the enumerator hears how many (see Holding). */
    @Override
    public void start() {
        context.sendSourceEventToCoordinator(new IndexedSource.Holding(splits.size()));
    }

    @Override
    public InputStatus pollNext(ReaderOutput<T> output) throws Exception {
        if (rate != null) {
            if (permit == null) {
                return InputStatus.NOTHING_AVAILABLE; // isAvailable() takes the next permit first
            }
            permit = null;
        }
        Split split = nextUnpaused();
        if (split == null) {
            return splits.isEmpty() && noMoreSplits
                    ? InputStatus.END_OF_INPUT
                    : InputStatus.NOTHING_AVAILABLE;
        }
        SourceOutput<T> out = output.createOutputForSplit(split.id);
        judge.judge(records.map(split.next), split.progress, out);
        split.watermark.advance(out, split.progress.watermark());
        if (++split.next == split.end) {
            splits.remove(split);
            output.releaseOutputForSplit(split.id);
            if (splits.isEmpty()) {
                context.sendSplitRequest(); // more, or "no more"
            }
        }
        // Rate-limited: back through isAvailable(), where the next permit is taken.
        return rate == null ? InputStatus.MORE_AVAILABLE : InputStatus.NOTHING_AVAILABLE;
    }

    private Split nextUnpaused() {
        for (int i = 0; i < splits.size(); i++) {
            Split s = splits.get((turn + i) % splits.size());
            if (!paused.contains(s.id)) {
                turn = (turn + i + 1) % splits.size();
                return s;
            }
        }
        return null;
    }

    @Override
    public CompletableFuture<Void> isAvailable() {
        boolean readable =
                splits.stream().anyMatch(s -> !paused.contains(s.id))
                        || (splits.isEmpty() && noMoreSplits);
        if (!readable) {
            if (available.isDone()) {
                available = new CompletableFuture<>();
            }
            return available;
        }
        if (rate == null) {
            return CompletableFuture.completedFuture(null);
        }
        if (permit == null) {
            permit = rate.acquire().toCompletableFuture();
        }
        return permit;
    }

    @Override
    public List<IndexedSplit> snapshotState(long checkpointId) {
        return splits.stream()
                .map(s -> new IndexedSplit(s.id, s.next, s.end, s.progress.copy()))
                .toList();
    }

    @Override
    public void addSplits(List<IndexedSplit> added) {
        added.stream().filter(s -> s.next() < s.end()).forEach(s -> splits.add(new Split(s)));
        if (splits.isEmpty() && !added.isEmpty()) {
            context.sendSplitRequest(); // given only empty splits: nothing to read
        }
        available.complete(null);
    }

    @Override
    public void notifyNoMoreSplits() {
        noMoreSplits = true;
        available.complete(null);
    }

    @Override
    public void pauseOrResumeSplits(Collection<String> toPause, Collection<String> toResume) {
        paused.addAll(toPause);
        paused.removeAll(toResume);
        available.complete(null);
    }

    @Override
    public void notifyCheckpointComplete(long checkpointId) throws Exception {
        if (rate != null) {
            rate.notifyCheckpointComplete(checkpointId);
        }
    }

    @Override
    public void close() {}
}
