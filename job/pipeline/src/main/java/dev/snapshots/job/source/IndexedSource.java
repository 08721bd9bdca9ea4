package dev.snapshots.job.source;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.flink.annotation.Internal;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.connector.source.Boundedness;
import org.apache.flink.api.connector.source.Source;
import org.apache.flink.api.connector.source.SourceEvent;
import org.apache.flink.api.connector.source.SourceReader;
import org.apache.flink.api.connector.source.SourceReaderContext;
import org.apache.flink.api.connector.source.SplitEnumerator;
import org.apache.flink.api.connector.source.SplitEnumeratorContext;
import org.apache.flink.api.connector.source.SplitsAssignment;
import org.apache.flink.api.connector.source.lib.NumberSequenceSource;
import org.apache.flink.api.connector.source.util.ratelimit.RateLimiterStrategy;
import org.apache.flink.api.java.typeutils.ResultTypeQueryable;
import org.apache.flink.connector.datagen.source.GeneratorFunction;
import org.apache.flink.core.io.SimpleVersionedSerializer;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;

/**
 * Records by index (a generator function, the lines of a file), in {@code splits} ranges of the
 * index, each judged against its own progress like a Kinesis shard. A reader holding several ranges
 * reads them in turn, a record from each, and can pause one for watermark alignment.
 */
@Internal
public final class IndexedSource<T>
        implements Source<T, IndexedSplit, Collection<IndexedSplit>>, ResultTypeQueryable<T> {
    private static final long serialVersionUID = 1L;

    /** A count that never ends: the source is unbounded. */
    public static final long UNBOUNDED = Long.MAX_VALUE;

    private final GeneratorFunction<Long, RawRecord> records;
    private final long count;

    /** How many records each split holds, in index order. */
    private final long[] splitSizes;

    private final RecordJudge<T> judge;
    private final TypeInformation<T> type;
    private final RateLimiterStrategy rate;

    /**
     * {@code count} records in {@code splits} ranges as equal as can be.
     *
     * @param rate null: as fast as the job takes them
     */
    public IndexedSource(
            GeneratorFunction<Long, RawRecord> records,
            long count,
            int splits,
            RecordJudge<T> judge,
            TypeInformation<T> type,
            RateLimiterStrategy rate) {
        this(records, evenly(count, splits), judge, type, rate);
    }

    /**
     * Records in ranges of these sizes, in index order; one of {@link #UNBOUNDED} size alone makes
     * it unbounded.
     */
    public IndexedSource(
            GeneratorFunction<Long, RawRecord> records,
            long[] splitSizes,
            RecordJudge<T> judge,
            TypeInformation<T> type,
            RateLimiterStrategy rate) {
        if (splitSizes.length < 1
                || (splitSizes.length > 1
                        && Arrays.stream(splitSizes).anyMatch(n -> n == UNBOUNDED))) {
            throw new IllegalArgumentException(
                    "an indexed source has at least one split, and exactly one when unbounded");
        }
        this.records = records;
        this.splitSizes = splitSizes.clone();
        this.count = splitSizes.length == 1 ? splitSizes[0] : Arrays.stream(splitSizes).sum();
        this.judge = judge;
        this.type = type;
        this.rate = rate;
    }

    private static long[] evenly(long count, int splits) {
        if (splits < 1 || (count == UNBOUNDED && splits != 1)) {
            throw new IllegalArgumentException(
                    "an indexed source has at least one split, and exactly one when unbounded");
        }
        long[] sizes = new long[splits];
        for (int i = 0; i < splits; i++) {
            sizes[i] =
                    count == UNBOUNDED ? UNBOUNDED : count / splits + (i < count % splits ? 1 : 0);
        }
        return sizes;
    }

    @Override
    public Boundedness getBoundedness() {
        return count == UNBOUNDED ? Boundedness.CONTINUOUS_UNBOUNDED : Boundedness.BOUNDED;
    }

    @Override
    public SourceReader<T, IndexedSplit> createReader(SourceReaderContext context)
            throws Exception {
        records.open(context);
        return new IndexedReader<>(
                records,
                judge,
                rate == null ? null : rate.createRateLimiter(context.currentParallelism()),
                context);
    }

    @Override
    public SplitEnumerator<IndexedSplit, Collection<IndexedSplit>> createEnumerator(
            SplitEnumeratorContext<IndexedSplit> context) {
        List<IndexedSplit> all = new ArrayList<>();
        long from = 0;
        for (int i = 0; i < splitSizes.length; i++) {
            long to = splitSizes[i] == UNBOUNDED ? UNBOUNDED : from + splitSizes[i];
            all.add(new IndexedSplit(Integer.toString(i + 1), from, to, SplitProgress.none()));
            from = to;
        }
        return new Enumerator(context, all);
    }

    @Override
    public SplitEnumerator<IndexedSplit, Collection<IndexedSplit>> restoreEnumerator(
            SplitEnumeratorContext<IndexedSplit> context, Collection<IndexedSplit> unassigned) {
        return new Enumerator(context, unassigned);
    }

    @Override
    public SimpleVersionedSerializer<IndexedSplit> getSplitSerializer() {
        return new IndexedSplit.Serializer();
    }

    @Override
    public SimpleVersionedSerializer<Collection<IndexedSplit>> getEnumeratorCheckpointSerializer() {
        return new EnumeratorStateSerializer();
    }

    @Override
    public TypeInformation<T> getProducedType() {
        return type;
    }

    /**
     * Hands every split to a reader when the reader registers, split i to reader i mod parallelism,
     * so a reader holds its splits from the start and can read them in turn. "No more splits" is
     * said only to a reader with nothing to read: one that asks, having read all it had, or one
     * that was given nothing and holds nothing from a checkpoint ({@link Holding}). Flink 1.20's
     * coordinator stops sending watermark alignment to a reader told there are no more; one that
     * still reads would wait forever once its watermark passed the last maximum it had received
     * (seen after a failover: the restored reader got one, then the signal).
     */
    private static final class Enumerator
            implements SplitEnumerator<IndexedSplit, Collection<IndexedSplit>> {
        private final SplitEnumeratorContext<IndexedSplit> context;
        private final List<IndexedSplit> unassigned;

        /** Readers given splits since they registered: they ask once they have read them. */
        private final Set<Integer> given = new HashSet<>();

        Enumerator(
                SplitEnumeratorContext<IndexedSplit> context, Collection<IndexedSplit> unassigned) {
            this.context = context;
            this.unassigned = new ArrayList<>(unassigned);
        }

        @Override
        public void start() {}

        @Override
        public void handleSplitRequest(int subtask, String host) {
            assign(subtask);
            if (!given.contains(subtask)) {
                context.signalNoMoreSplits(subtask);
            }
        }

        @Override
        public void handleSourceEvent(int subtask, SourceEvent event) {
            if (event instanceof Holding h && h.splits() == 0 && !given.contains(subtask)) {
                context.signalNoMoreSplits(subtask);
            }
        }

        @Override
        public void addSplitsBack(List<IndexedSplit> splits, int subtask) {
            unassigned.addAll(splits);
        }

        @Override
        public void addReader(int subtask) {
            assign(subtask);
        }

        /** Hands reader {@code subtask} the unassigned splits that are its own, if any. */
        private void assign(int subtask) {
            given.remove(subtask);
            int parallelism = context.currentParallelism();
            List<IndexedSplit> mine = new ArrayList<>();
            for (IndexedSplit split : unassigned) {
                if (owner(split, parallelism) == subtask) {
                    mine.add(split);
                }
            }
            if (!mine.isEmpty()) {
                unassigned.removeAll(mine);
                given.add(subtask);
                // In one event: every split holds the reader's watermark before any moves it.
                context.assignSplits(new SplitsAssignment<>(Map.of(subtask, mine)));
            }
        }

        /**
         * Split n (its id, from 1) belongs to reader (n - 1) mod parallelism: a function of the
         * split, never of its place among the unassigned ones, which shifts as readers take theirs
         * (the second reader then found none of its own, was told "no more" and finished, and the
         * first read its split after its own, behind its own watermark: every event late at the
         * window when the two cover the same time, as the benchmark's do).
         */
        private static int owner(IndexedSplit split, int parallelism) {
            String id = split.splitId();
            return id.matches("\\d{1,9}")
                    ? Math.floorMod(Integer.parseInt(id) - 1, parallelism)
                    : Math.floorMod(id.hashCode(), parallelism);
        }

        @Override
        public Collection<IndexedSplit> snapshotState(long checkpointId) {
            return new ArrayList<>(unassigned);
        }

        @Override
        public void close() {}
    }

    /** What a reader tells the enumerator when it starts: how many splits it holds, restored. */
    record Holding(int splits) implements SourceEvent {}

    /**
     * Version 2: the splits, each as {@link IndexedSplit.Serializer} writes it. Version 1:
     * DataGeneratorSource's.
     */
    static final class EnumeratorStateSerializer
            implements SimpleVersionedSerializer<Collection<IndexedSplit>> {
        private static final SimpleVersionedSerializer<
                        Collection<NumberSequenceSource.NumberSequenceSplit>>
                LEGACY = new NumberSequenceSource(0, 0).getEnumeratorCheckpointSerializer();
        private final IndexedSplit.Serializer splits = new IndexedSplit.Serializer();

        @Override
        public int getVersion() {
            return IndexedSplit.Serializer.VERSION;
        }

        @Override
        public byte[] serialize(Collection<IndexedSplit> state) throws IOException {
            DataOutputSerializer out = new DataOutputSerializer(64);
            out.writeInt(state.size());
            for (IndexedSplit s : state) {
                byte[] bytes = splits.serialize(s);
                out.writeInt(bytes.length);
                out.write(bytes);
            }
            return out.getCopyOfBuffer();
        }

        @Override
        public Collection<IndexedSplit> deserialize(int version, byte[] bytes) throws IOException {
            List<IndexedSplit> out = new ArrayList<>();
            if (version == 1) {
                LEGACY.deserialize(version, bytes)
                        .forEach(s -> out.add(IndexedSplit.fromLegacy(s)));
                return out;
            }
            DataInputDeserializer in = new DataInputDeserializer(bytes);
            int n = in.readInt();
            for (int i = 0; i < n; i++) {
                byte[] split = new byte[in.readInt()];
                in.readFully(split);
                out.add(splits.deserialize(version, split));
            }
            if (in.available() > 0) {
                throw new IOException(
                        in.available()
                                + " trailing bytes after the indexed source's enumerator state");
            }
            return out;
        }
    }
}
