package dev.snapshots.store;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.SequenceInputStream;
import java.nio.ByteBuffer;
import java.nio.channels.GatheringByteChannel;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.core.fs.FSDataOutputStream;

/**
 * An object's bytes written in fixed-size chunks that are filled and never moved, then read as
 * often as an upload is retried. A writer keeps one and {@linkplain #reset() reuses} its chunks for
 * every part: a part is built, staged and dropped before the next one starts, so a growing array
 * per part (allocated at twice the part's size as it doubles, copied at the end, and copied again
 * by an upload that takes an array) would be garbage the size of every part it ever wrote.
 *
 * <p>Not thread-safe: one writer fills it, and the store reads it before the writer goes on.
 */
@PublicEvolving
public final class Chunks extends FSDataOutputStream {
    /** Under G1's humongous size at any heap, so a chunk is an ordinary young object. */
    private static final int CHUNK = 1 << 16;

    /** Every chunk this buffer owns, filled or not; the first {@link #filled} are full. */
    private final List<byte[]> chunks = new ArrayList<>();

    private int filled;
    private byte[] chunk;
    private int used;

    public Chunks() {
        reset();
    }

    /** Content that is already one array, copied into chunks. */
    public static Chunks of(byte[] content) {
        Chunks c = new Chunks();
        c.write(content, 0, content.length);
        return c;
    }

    /** Empties this buffer for the next object, keeping its chunks. */
    public void reset() {
        filled = 0;
        used = 0;
        if (chunks.isEmpty()) {
            chunks.add(new byte[CHUNK]);
        }
        chunk = chunks.get(0);
    }

    public long length() {
        return (long) filled * CHUNK + used;
    }

    @Override
    public long getPos() {
        return length();
    }

    @Override
    public void write(int b) {
        if (used == CHUNK) {
            next();
        }
        chunk[used++] = (byte) b;
    }

    @Override
    public void write(byte[] b, int off, int len) {
        while (len > 0) {
            if (used == CHUNK) {
                next();
            }
            int n = Math.min(len, CHUNK - used);
            System.arraycopy(b, off, chunk, used, n);
            used += n;
            off += n;
            len -= n;
        }
    }

    private void next() {
        filled++;
        if (filled == chunks.size()) {
            chunks.add(new byte[CHUNK]);
        }
        chunk = chunks.get(filled);
        used = 0;
    }

    /** Writes all of it to {@code channel}. */
    public void writeTo(GatheringByteChannel channel) throws IOException {
        ByteBuffer[] buffers = new ByteBuffer[filled + 1];
        for (int i = 0; i <= filled; i++) {
            buffers[i] = ByteBuffer.wrap(chunks.get(i), 0, usedOf(i));
        }
        long left = length();
        while (left > 0) {
            left -= channel.write(buffers);
        }
    }

    /** A new stream over the content from its start: one per attempt of an upload. */
    public InputStream open() {
        List<InputStream> parts = new ArrayList<>(filled + 1);
        for (int i = 0; i <= filled; i++) {
            parts.add(new ByteArrayInputStream(chunks.get(i), 0, usedOf(i)));
        }
        return new SequenceInputStream(Collections.enumeration(parts));
    }

    /** A copy in one array, for what must outlive this buffer's next use (an inline part). */
    public byte[] toByteArray() {
        byte[] all = new byte[Math.toIntExact(length())];
        for (int i = 0; i <= filled; i++) {
            System.arraycopy(chunks.get(i), 0, all, i * CHUNK, usedOf(i));
        }
        return all;
    }

    /** Bytes of content in chunk {@code i}: all of it but in the chunk being filled. */
    private int usedOf(int i) {
        return i < filled ? CHUNK : used;
    }

    @Override
    public void flush() {}

    @Override
    public void sync() {}

    @Override
    public void close() {}
}
