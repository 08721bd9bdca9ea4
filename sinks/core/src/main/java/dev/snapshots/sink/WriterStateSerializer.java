package dev.snapshots.sink;

import java.io.IOException;
import org.apache.flink.annotation.Internal;
import org.apache.flink.core.io.SimpleVersionedSerializer;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;

/**
 * A writer's state in checkpoints and savepoints, so a format, with a trailing-bytes check: version
 * 1 is the run (pipeline, job version, kind code, id) and the end of the newest window it handed
 * over; version 2 adds the fingerprint scheme and the window length (0: not known) the run learned
 * from the store. Version 1 is still read, as knowing neither.
 */
@Internal
final class WriterStateSerializer implements SimpleVersionedSerializer<SnapshotWriter.State> {
    static final int VERSION = 2;

    @Override
    public int getVersion() {
        return VERSION;
    }

    @Override
    public byte[] serialize(SnapshotWriter.State state) throws IOException {
        DataOutputSerializer out = new DataOutputSerializer(64);
        SnapshotCommittableSerializer.writeRun(out, state.run());
        out.writeLong(state.lastWindowEndMillis());
        out.writeInt(state.fingerprintScheme());
        out.writeLong(state.windowLengthMillis());
        return out.getCopyOfBuffer();
    }

    @Override
    public SnapshotWriter.State deserialize(int version, byte[] serialized) throws IOException {
        if (version != 1 && version != VERSION) {
            throw new IOException(
                    "unknown snapshot writer state version "
                            + version
                            + " (this release reads versions 1 and 2); was the savepoint taken by a"
                            + " newer release?");
        }
        DataInputDeserializer in = new DataInputDeserializer(serialized);
        SnapshotCommittable.Run run = SnapshotCommittableSerializer.readRun(in);
        long lastWindowEnd = in.readLong();
        SnapshotWriter.State state =
                version == 1
                        ? new SnapshotWriter.State(
                                run,
                                lastWindowEnd,
                                SnapshotWriter.State.UNKNOWN,
                                SnapshotWriter.State.UNKNOWN)
                        : new SnapshotWriter.State(run, lastWindowEnd, in.readInt(), in.readLong());
        if (in.available() > 0) {
            throw new IOException(
                    in.available() + " unexpected trailing bytes after a snapshot writer's state");
        }
        return state;
    }
}
