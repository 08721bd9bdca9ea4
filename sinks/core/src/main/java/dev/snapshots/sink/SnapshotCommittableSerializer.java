package dev.snapshots.sink;

import dev.snapshots.key.PartKind;
import dev.snapshots.store.StagedObject;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.flink.annotation.Internal;
import org.apache.flink.core.io.SimpleVersionedSerializer;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;

/**
 * Committables live in checkpoints and savepoints, so their bytes are a format: versioned, with
 * explicit type codes (never enum ordinals or Java serialization) and a trailing-bytes check. Each
 * version is pinned by a golden-bytes test. Version 2 adds a staged part's durable copy and a
 * mark's run; version 3 a mark's last window end. Versions 1 and 2 are still read (staged parts of
 * version 1 have no copy, its marks no run, and the committer ignores such marks; marks before
 * version 3 know no last window).
 */
@Internal
public final class SnapshotCommittableSerializer
        implements SimpleVersionedSerializer<SnapshotCommittable> {
    static final int VERSION = 3;
    private static final int VERSION_1 = 1;
    private static final int VERSION_2 = 2;

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
            writeRun(
                    out,
                    c.run().orElseThrow(() -> new IOException("a mark without its run: " + c)));
            out.writeInt(c.subtask());
            out.writeInt(c.parallelism());
            out.writeLong(c.watermark());
            out.writeLong(c.windowEndMillis());
            return out.getCopyOfBuffer();
        }
        out.writeByte(c.inline().isPresent() ? INLINE_PART : STAGED_PART);
        out.writeUTF(c.key());
        out.writeLong(c.windowStartMillis());
        out.writeLong(c.windowEndMillis());
        out.writeInt(c.bucket());
        out.writeUTF(c.fingerprint());
        out.writeLong(c.rowCount());
        Map<String, String> metadata =
                new TreeMap<>(c.metadata()); // sorted: equal committables, equal bytes
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
            out.writeUTF(staged.copy());
        }
        return out.getCopyOfBuffer();
    }

    @Override
    public SnapshotCommittable deserialize(int version, byte[] serialized) throws IOException {
        if (version < VERSION_1 || version > VERSION) {
            throw new IOException(
                    "unknown snapshot committable version "
                            + version
                            + " (this release reads versions 1 to "
                            + VERSION
                            + "); was the savepoint taken by a newer release?");
        }
        DataInputDeserializer in = new DataInputDeserializer(serialized);
        byte type = in.readByte();
        SnapshotCommittable result;
        if (type == MARK) {
            SnapshotCommittable.Run run = version == VERSION_1 ? null : readRun(in);
            int subtask = in.readInt();
            int parallelism = in.readInt();
            long watermark = in.readLong();
            result =
                    SnapshotCommittable.mark(
                            run,
                            subtask,
                            parallelism,
                            watermark,
                            version <= VERSION_2 ? Long.MIN_VALUE : in.readLong());
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
                result =
                        SnapshotCommittable.inline(
                                key,
                                windowStart,
                                windowEnd,
                                bucket,
                                fingerprint,
                                rows,
                                metadata,
                                content);
            } else {
                String handle = in.readUTF();
                int parts = in.readInt();
                List<String> etags = new ArrayList<>(parts);
                for (int i = 0; i < parts; i++) {
                    etags.add(in.readUTF());
                }
                String copy = version == VERSION_1 ? "" : in.readUTF();
                result =
                        SnapshotCommittable.staged(
                                windowStart,
                                windowEnd,
                                bucket,
                                fingerprint,
                                rows,
                                metadata,
                                new StagedObject(key, handle, etags, copy));
            }
        } else {
            throw new IOException("unknown snapshot committable type code " + type);
        }
        if (in.available() > 0) {
            throw new IOException(
                    in.available() + " unexpected trailing bytes after a snapshot committable");
        }
        return result;
    }

    /** A run as marks (and writers' states) carry it. */
    static void writeRun(DataOutputSerializer out, SnapshotCommittable.Run run) throws IOException {
        out.writeUTF(run.pipeline());
        out.writeInt(run.jobVersion());
        out.writeByte(kindCode(run.kind()));
        out.writeUTF(run.id());
    }

    static SnapshotCommittable.Run readRun(DataInputDeserializer in) throws IOException {
        return new SnapshotCommittable.Run(
                in.readUTF(), in.readInt(), kind(in.readByte()), in.readUTF());
    }

    /** Codes, not ordinals: a kind added later must not renumber these. */
    private static int kindCode(PartKind kind) {
        return switch (kind) {
            case SNAPSHOT -> 1;
            case DEAD_LETTER -> 2;
        };
    }

    private static PartKind kind(int code) throws IOException {
        return switch (code) {
            case 1 -> PartKind.SNAPSHOT;
            case 2 -> PartKind.DEAD_LETTER;
            default -> throw new IOException("unknown part kind code " + code);
        };
    }
}
