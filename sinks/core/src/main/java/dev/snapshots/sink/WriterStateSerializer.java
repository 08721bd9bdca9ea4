package dev.snapshots.sink;

import java.io.IOException;
import org.apache.flink.annotation.Internal;
import org.apache.flink.core.io.SimpleVersionedSerializer;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;

/**
 * A writer's state in checkpoints and savepoints, so a format: version 1 is the run (pipeline, job
 * version, kind code, id) and the end of the newest window it handed over, with a trailing-bytes
 * check.
 */
@Internal
final class WriterStateSerializer implements SimpleVersionedSerializer<SnapshotWriter.State> {
    static final int VERSION = 1;

    @Override
    public int getVersion() {
        return VERSION;
    }

    @Override
    public byte[] serialize(SnapshotWriter.State state) throws IOException {
        DataOutputSerializer out = new DataOutputSerializer(64);
        SnapshotCommittableSerializer.writeRun(out, state.run());
        out.writeLong(state.lastWindowEndMillis());
        return out.getCopyOfBuffer();
    }

    @Override
    public SnapshotWriter.State deserialize(int version, byte[] serialized) throws IOException {
        if (version != VERSION) {
            throw new IOException(
                    "unknown snapshot writer state version "
                            + version
                            + " (this release reads version 1); was the savepoint taken by a"
                            + " newer release?");
        }
        DataInputDeserializer in = new DataInputDeserializer(serialized);
        SnapshotWriter.State state =
                new SnapshotWriter.State(SnapshotCommittableSerializer.readRun(in), in.readLong());
        if (in.available() > 0) {
            throw new IOException(
                    in.available() + " unexpected trailing bytes after a snapshot writer's state");
        }
        return state;
    }
}
