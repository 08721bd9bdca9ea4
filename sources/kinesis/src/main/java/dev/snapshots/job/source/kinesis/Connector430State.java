package dev.snapshots.job.source.kinesis;

import dev.snapshots.job.source.SplitProgress;
import dev.snapshots.job.source.kinesis.ShardEnumeratorState.Shard;
import dev.snapshots.job.source.kinesis.ShardEnumeratorState.Status;
import java.io.IOException;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.flink.core.memory.DataInputDeserializer;
import software.amazon.awssdk.services.kinesis.model.ShardIteratorType;

/**
 * Reads what flink-connector-kinesis 4.3.0's KinesisStreamsSource checkpointed, the source this one
 * replaced: its split and its enumerator state, both at its version 0. Savepoints of jobs that ran
 * it hold these bytes; the connector itself is no longer a dependency (it has no build for Flink
 * 2), so its format is read here. Golden files of both are in ShardSerializersTest.
 *
 * <pre>
 *   split:       UTF stream ARN, UTF shard id, UTF iterator type, boolean has marker,
 *                  [boolean is a timestamp, [long epoch millis], boolean is a string, [UTF]]
 *   enumerator:  boolean has last seen, [UTF last seen shard id], int splits, int split version (0),
 *                  splits times (int length, that many bytes of a split)
 * </pre>
 *
 * Strings are Java's modified UTF-8 with a two-byte length (DataOutputStream.writeUTF).
 */
final class Connector430State {
    private Connector430State() {}

    /** The connector's split, resuming at its position with no progress. */
    static ShardSplit split(byte[] bytes) throws IOException {
        DataInputDeserializer in = new DataInputDeserializer(bytes);
        in.readUTF(); // the stream's ARN: the job's own, given by its settings
        String shardId = in.readUTF();
        String type = in.readUTF();
        Instant timestamp = null;
        String sequenceNumber = null;
        if (in.readBoolean()) {
            if (in.readBoolean()) {
                timestamp = Instant.ofEpochMilli(in.readLong());
            }
            if (in.readBoolean()) {
                sequenceNumber = in.readUTF();
            }
        }
        if (in.available() > 0) {
            throw new IOException(
                    in.available() + " trailing bytes after a flink-connector-kinesis 4.3.0 split");
        }
        ShardPosition position;
        try {
            position =
                    new ShardPosition(ShardIteratorType.fromValue(type), sequenceNumber, timestamp);
        } catch (IllegalArgumentException e) {
            throw new IOException(
                    "a flink-connector-kinesis 4.3.0 split of " + shardId + " that cannot resume",
                    e);
        }
        return new ShardSplit(shardId, position, SplitProgress.none(), false);
    }

    /**
     * The connector's enumerator state: its unassigned splits become ready ones, and the last shard
     * it saw is kept until the next listing (shards up to it were assigned before the restore).
     */
    static ShardEnumeratorState enumerator(byte[] bytes) throws IOException {
        DataInputDeserializer in = new DataInputDeserializer(bytes);
        String lastSeen = in.readBoolean() ? in.readUTF() : null;
        int count = in.readInt();
        int splitVersion = in.readInt();
        if (splitVersion != 0) {
            throw new IOException(
                    "flink-connector-kinesis 4.3.0 enumerator state with splits of version "
                            + splitVersion
                            + "; it wrote 0");
        }
        Map<String, Shard> shards = new TreeMap<>();
        for (int i = 0; i < count; i++) {
            byte[] split = new byte[in.readInt()];
            in.readFully(split);
            ShardSplit s = split(split);
            shards.put(
                    s.splitId(), new Shard(s.splitId(), List.of(), Status.READY, s, null, false));
        }
        if (in.available() > 0) {
            throw new IOException(
                    in.available()
                            + " trailing bytes after flink-connector-kinesis 4.3.0 enumerator state");
        }
        return new ShardEnumeratorState(Long.MIN_VALUE, true, lastSeen, shards);
    }
}
