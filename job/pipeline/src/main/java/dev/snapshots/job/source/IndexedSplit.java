package dev.snapshots.job.source;

import java.io.IOException;
import java.util.Objects;
import org.apache.flink.annotation.Internal;
import org.apache.flink.api.connector.source.SourceSplit;
import org.apache.flink.api.connector.source.lib.NumberSequenceSource;
import org.apache.flink.core.io.SimpleVersionedSerializer;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;

/**
 * A range of record indexes [next, end) of an {@link IndexedSource} and how far its events have
 * come.
 */
@Internal
public final class IndexedSplit implements SourceSplit {
    private final String id;
    private final long next;
    private final long end;
    private final SplitProgress progress;

    public IndexedSplit(String id, long next, long end, SplitProgress progress) {
        this.id = id;
        this.next = next;
        this.end = end;
        this.progress = progress;
    }

    @Override
    public String splitId() {
        return id;
    }

    public long next() {
        return next;
    }

    public long end() {
        return end;
    }

    public SplitProgress progress() {
        return progress;
    }

    /**
     * A range DataGeneratorSource checkpointed (its "to" is inclusive), which resumes with no
     * progress.
     */
    static IndexedSplit fromLegacy(NumberSequenceSource.NumberSequenceSplit legacy) {
        return new IndexedSplit(
                legacy.splitId(), legacy.from(), legacy.to() + 1, SplitProgress.none());
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof IndexedSplit s
                && s.id.equals(id)
                && s.next == next
                && s.end == end
                && s.progress.equals(progress);
    }

    @Override
    public int hashCode() {
        return Objects.hash(id, next, end, progress);
    }

    @Override
    public String toString() {
        return "IndexedSplit{" + id + " [" + next + ", " + end + "), " + progress + "}";
    }

    /**
     * Version 2: id, next, end, progress. Version 1 is what Flink's DataGeneratorSource wrote (a
     * NumberSequenceSplit) before splits carried their progress; such a split resumes with none.
     */
    public static final class Serializer implements SimpleVersionedSerializer<IndexedSplit> {
        static final int VERSION = 2;
        private static final int NUMBER_SEQUENCE = 1;
        private static final SimpleVersionedSerializer<NumberSequenceSource.NumberSequenceSplit>
                LEGACY = new NumberSequenceSource(0, 0).getSplitSerializer();

        @Override
        public int getVersion() {
            return VERSION;
        }

        @Override
        public byte[] serialize(IndexedSplit split) throws IOException {
            DataOutputSerializer out = new DataOutputSerializer(64);
            out.writeUTF(split.id);
            out.writeLong(split.next);
            out.writeLong(split.end);
            split.progress.write(out);
            return out.getCopyOfBuffer();
        }

        @Override
        public IndexedSplit deserialize(int version, byte[] bytes) throws IOException {
            if (version == NUMBER_SEQUENCE) {
                return fromLegacy(LEGACY.deserialize(version, bytes));
            }
            if (version != VERSION) {
                throw new IOException(
                        "IndexedSplit version "
                                + version
                                + " is newer than this release reads ("
                                + VERSION
                                + ")");
            }
            DataInputDeserializer in = new DataInputDeserializer(bytes);
            IndexedSplit split =
                    new IndexedSplit(
                            in.readUTF(), in.readLong(), in.readLong(), SplitProgress.read(in));
            if (in.available() > 0) {
                throw new IOException(in.available() + " trailing bytes after an IndexedSplit");
            }
            return split;
        }
    }
}
