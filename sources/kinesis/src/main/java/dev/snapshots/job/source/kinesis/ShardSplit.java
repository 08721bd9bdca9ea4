package dev.snapshots.job.source.kinesis;

import dev.snapshots.job.source.SplitProgress;
import java.io.IOException;
import java.time.Instant;
import java.util.Objects;
import org.apache.flink.annotation.Internal;
import org.apache.flink.api.connector.source.SourceSplit;
import org.apache.flink.core.io.SimpleVersionedSerializer;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;
import software.amazon.awssdk.services.kinesis.model.ShardIteratorType;

/**
 * One Kinesis shard as a split: where to read from next, how far its events have come, and whether
 * it has been read to its end (then it is kept, holding its watermark, until its children run).
 */
@Internal
public final class ShardSplit implements SourceSplit {
    private final String shardId;
    private final ShardPosition position;
    private final SplitProgress progress;
    private final boolean exhausted;

    public ShardSplit(
            String shardId, ShardPosition position, SplitProgress progress, boolean exhausted) {
        this.shardId = shardId;
        this.position = position;
        this.progress = progress;
        this.exhausted = exhausted;
    }

    @Override
    public String splitId() {
        return shardId;
    }

    public ShardPosition position() {
        return position;
    }

    public SplitProgress progress() {
        return progress;
    }

    public boolean exhausted() {
        return exhausted;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof ShardSplit s
                && s.shardId.equals(shardId)
                && s.position.equals(position)
                && s.progress.equals(progress)
                && s.exhausted == exhausted;
    }

    @Override
    public int hashCode() {
        return Objects.hash(shardId, position, progress, exhausted);
    }

    @Override
    public String toString() {
        return "ShardSplit{"
                + shardId
                + ", "
                + position
                + ", "
                + progress
                + (exhausted ? ", exhausted" : "")
                + "}";
    }

    /**
     * Version 1: shard id, position (iterator type and its marker), progress, exhausted. Version 0
     * is the KinesisShardSplit of flink-connector-kinesis 4.3.0, which this source replaced ({@link
     * Connector430State}); such a split resumes at its position with no progress.
     */
    public static final class Serializer implements SimpleVersionedSerializer<ShardSplit> {
        static final int VERSION = 1;
        static final int CONNECTOR_4_3 = 0;

        @Override
        public int getVersion() {
            return VERSION;
        }

        @Override
        public byte[] serialize(ShardSplit split) throws IOException {
            DataOutputSerializer out = new DataOutputSerializer(96);
            out.writeUTF(split.shardId);
            out.writeUTF(split.position.type().toString());
            if (split.position.timestamp() != null) {
                out.writeByte(1);
                out.writeLong(split.position.timestamp().toEpochMilli());
            } else if (split.position.sequenceNumber() != null) {
                out.writeByte(2);
                out.writeUTF(split.position.sequenceNumber());
            } else {
                out.writeByte(0);
            }
            split.progress.write(out);
            out.writeBoolean(split.exhausted);
            return out.getCopyOfBuffer();
        }

        @Override
        public ShardSplit deserialize(int version, byte[] bytes) throws IOException {
            if (version == CONNECTOR_4_3) {
                return Connector430State.split(bytes);
            }
            if (version != VERSION) {
                throw new IOException(
                        "ShardSplit version "
                                + version
                                + " is newer than this release reads ("
                                + VERSION
                                + ")");
            }
            DataInputDeserializer in = new DataInputDeserializer(bytes);
            String shardId = in.readUTF();
            ShardIteratorType type = ShardIteratorType.fromValue(in.readUTF());
            byte marker = in.readByte();
            ShardPosition position;
            if (marker == 1) {
                position = ShardPosition.fromTimestamp(Instant.ofEpochMilli(in.readLong()));
            } else if (marker == 2) {
                position = ShardPosition.continueFromSequenceNumber(in.readUTF());
            } else if (type == ShardIteratorType.TRIM_HORIZON) {
                position = ShardPosition.fromStart();
            } else {
                throw new IOException(
                        "a ShardSplit of " + shardId + " starts at " + type + " with no marker");
            }
            ShardSplit split =
                    new ShardSplit(shardId, position, SplitProgress.read(in), in.readBoolean());
            if (in.available() > 0) {
                throw new IOException(in.available() + " trailing bytes after a ShardSplit");
            }
            return split;
        }
    }
}
