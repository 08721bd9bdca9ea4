package dev.snapshots.job.source.kinesis;

import dev.snapshots.job.source.SplitProgress;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.flink.core.io.SimpleVersionedSerializer;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;

/**
 * What the enumerator knows of the stream's shards, checkpointed with the job.
 *
 * @param streamCreatedMillis when the stream was created: where a root shard's arrivals begin; MIN
 *     until read
 * @param listed whether the first listing was seen (it alone takes the initial position)
 * @param legacyLastSeen restored from flink-connector-kinesis 4.3.0: the last shard it had
 *     assigned, until the next listing
 */
record ShardEnumeratorState(
        long streamCreatedMillis,
        boolean listed,
        String legacyLastSeen,
        Map<String, Shard> shards) {

    /** Where a shard is in its life. */
    enum Status {
        /** Listed; a parent is still being read. */
        WAITING,
        /** Its split is made and waits for a reader. */
        READY,
        ASSIGNED,
        /** Read to its end; its reader holds its watermark for its children. */
        FINISHED,
        /** Finished, and every child has started: nothing holds it any more. */
        RELEASED
    }

    /**
     * @param split the split to assign (READY)
     * @param progress where the shard ended (FINISHED, RELEASED)
     * @param started its reader announced it (ASSIGNED)
     */
    record Shard(
            String id,
            List<String> parents,
            Status status,
            ShardSplit split,
            SplitProgress progress,
            boolean started) {
        Shard with(Status s) {
            return new Shard(id, parents, s, split, progress, started);
        }
    }

    static ShardEnumeratorState initial() {
        return new ShardEnumeratorState(Long.MIN_VALUE, false, null, new TreeMap<>());
    }

    /**
     * Version 1: ours. Version 0: flink-connector-kinesis 4.3.0's ({@link Connector430State}), its
     * unassigned splits becoming ready ones.
     */
    static final class Serializer implements SimpleVersionedSerializer<ShardEnumeratorState> {
        private static final ShardSplit.Serializer SPLITS = new ShardSplit.Serializer();

        @Override
        public int getVersion() {
            return ShardSplit.Serializer.VERSION;
        }

        @Override
        public byte[] serialize(ShardEnumeratorState state) throws IOException {
            DataOutputSerializer out = new DataOutputSerializer(256);
            out.writeLong(state.streamCreatedMillis);
            out.writeBoolean(state.listed);
            out.writeBoolean(state.legacyLastSeen != null);
            if (state.legacyLastSeen != null) {
                out.writeUTF(state.legacyLastSeen);
            }
            out.writeInt(state.shards.size());
            for (Shard s : state.shards.values()) {
                out.writeUTF(s.id);
                out.writeInt(s.parents.size());
                for (String p : s.parents) {
                    out.writeUTF(p);
                }
                out.writeByte(code(s.status));
                out.writeBoolean(s.started);
                if (s.status == Status.READY) {
                    byte[] split = SPLITS.serialize(s.split);
                    out.writeInt(split.length);
                    out.write(split);
                } else if (s.status == Status.FINISHED || s.status == Status.RELEASED) {
                    s.progress.write(out);
                }
            }
            return out.getCopyOfBuffer();
        }

        @Override
        public ShardEnumeratorState deserialize(int version, byte[] bytes) throws IOException {
            if (version == ShardSplit.Serializer.CONNECTOR_4_3) {
                return Connector430State.enumerator(bytes);
            }
            if (version != ShardSplit.Serializer.VERSION) {
                throw new IOException(
                        "Kinesis enumerator state version "
                                + version
                                + " is newer than this release reads");
            }
            DataInputDeserializer in = new DataInputDeserializer(bytes);
            long created = in.readLong();
            boolean listed = in.readBoolean();
            String legacyLastSeen = in.readBoolean() ? in.readUTF() : null;
            Map<String, Shard> shards = new TreeMap<>();
            for (int n = in.readInt(); n > 0; n--) {
                String id = in.readUTF();
                List<String> parents = new ArrayList<>();
                for (int p = in.readInt(); p > 0; p--) {
                    parents.add(in.readUTF());
                }
                Status status = status(in.readByte());
                boolean started = in.readBoolean();
                ShardSplit split = null;
                SplitProgress progress = null;
                if (status == Status.READY) {
                    byte[] b = new byte[in.readInt()];
                    in.readFully(b);
                    split = SPLITS.deserialize(ShardSplit.Serializer.VERSION, b);
                } else if (status == Status.FINISHED || status == Status.RELEASED) {
                    progress = SplitProgress.read(in);
                }
                shards.put(id, new Shard(id, parents, status, split, progress, started));
            }
            if (in.available() > 0) {
                throw new IOException(
                        in.available() + " trailing bytes after the Kinesis enumerator state");
            }
            return new ShardEnumeratorState(created, listed, legacyLastSeen, shards);
        }

        /** Codes, not ordinals: a status added later must not renumber these. */
        private static int code(Status s) {
            return switch (s) {
                case WAITING -> 0;
                case READY -> 1;
                case ASSIGNED -> 2;
                case FINISHED -> 3;
                case RELEASED -> 4;
            };
        }

        private static Status status(int code) throws IOException {
            return switch (code) {
                case 0 -> Status.WAITING;
                case 1 -> Status.READY;
                case 2 -> Status.ASSIGNED;
                case 3 -> Status.FINISHED;
                case 4 -> Status.RELEASED;
                default -> throw new IOException("unknown shard status code " + code);
            };
        }
    }
}
