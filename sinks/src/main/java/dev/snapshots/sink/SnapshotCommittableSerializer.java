package dev.snapshots.sink;

import dev.snapshots.store.StagedObject;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.flink.core.io.SimpleVersionedSerializer;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;

/**
 * Committables live in checkpoints and savepoints, so their bytes are a format: versioned, with
 * explicit type codes (never enum ordinals or Java serialization) and a trailing-bytes check.
 * Version 1 is pinned by a golden-bytes test; a new layout gets version 2 and keeps reading 1.
 */
public final class SnapshotCommittableSerializer implements SimpleVersionedSerializer<SnapshotCommittable> {
    static final int VERSION = 1;

    private static final byte INLINE_PART = 1;
    private static final byte STAGED_PART = 2;
    private static final byte MARK = 3;

    @Override
    public int getVersion() {
        return VERSION;
    }

    @Override
    public byte[] serialize(SnapshotCommittable c) throws IOException {
        DataOutputSerializer out = new DataOutputSerializer(256);
        if (c.isMark()) {
            out.writeByte(MARK);
            out.writeInt(c.subtask());
            out.writeInt(c.parallelism());
            out.writeLong(c.watermark());
            return out.getCopyOfBuffer();
        }
        out.writeByte(c.inline().isPresent() ? INLINE_PART : STAGED_PART);
        out.writeUTF(c.key());
        out.writeLong(c.windowStartMillis());
        out.writeLong(c.windowEndMillis());
        out.writeInt(c.bucket());
        out.writeUTF(c.fingerprint());
        out.writeLong(c.rowCount());
        Map<String, String> metadata = new TreeMap<>(c.metadata()); // sorted: equal committables, equal bytes
        out.writeInt(metadata.size());
        for (Map.Entry<String, String> e : metadata.entrySet()) {
            out.writeUTF(e.getKey());
            out.writeUTF(e.getValue());
        }
        if (c.inline().isPresent()) {
            byte[] content = c.inline().get();
            out.writeInt(content.length);
            out.write(content);
        } else {
            StagedObject staged = c.staged().get();
            out.writeUTF(staged.handle());
            out.writeInt(staged.partETags().size());
            for (String etag : staged.partETags()) {
                out.writeUTF(etag);
            }
        }
        return out.getCopyOfBuffer();
    }

    @Override
    public SnapshotCommittable deserialize(int version, byte[] serialized) throws IOException {
        if (version != VERSION) {
            throw new IOException("unknown snapshot committable version " + version
                    + " (this release reads version " + VERSION + "); was the savepoint taken by a newer release?");
        }
        DataInputDeserializer in = new DataInputDeserializer(serialized);
        byte type = in.readByte();
        SnapshotCommittable result;
        if (type == MARK) {
            result = SnapshotCommittable.mark(in.readInt(), in.readInt(), in.readLong());
        } else if (type == INLINE_PART || type == STAGED_PART) {
            String key = in.readUTF();
            long windowStart = in.readLong();
            long windowEnd = in.readLong();
            int bucket = in.readInt();
            String fingerprint = in.readUTF();
            long rows = in.readLong();
            int entries = in.readInt();
            Map<String, String> metadata = new TreeMap<>();
            for (int i = 0; i < entries; i++) {
                metadata.put(in.readUTF(), in.readUTF());
            }
            if (type == INLINE_PART) {
                byte[] content = new byte[in.readInt()];
                in.readFully(content);
                result = SnapshotCommittable.inline(key, windowStart, windowEnd, bucket, fingerprint, rows, metadata, content);
            } else {
                String handle = in.readUTF();
                int parts = in.readInt();
                List<String> etags = new ArrayList<>(parts);
                for (int i = 0; i < parts; i++) {
                    etags.add(in.readUTF());
                }
                result = SnapshotCommittable.staged(
                        windowStart, windowEnd, bucket, fingerprint, rows, metadata, new StagedObject(key, handle, etags));
            }
        } else {
            throw new IOException("unknown snapshot committable type code " + type);
        }
        if (in.available() > 0) {
            throw new IOException(in.available() + " unexpected trailing bytes after a snapshot committable");
        }
        return result;
    }
}
