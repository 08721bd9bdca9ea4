package dev.snapshots.format;

import java.io.ByteArrayInputStream;
import org.apache.flink.annotation.Internal;
import org.apache.parquet.io.DelegatingSeekableInputStream;
import org.apache.parquet.io.InputFile;
import org.apache.parquet.io.SeekableInputStream;

/**
 * A Parquet file held in memory, readable by any parquet-java reader without Hadoop's filesystems.
 */
@Internal
public final class ParquetBytes implements InputFile {
    private final byte[] content;

    public ParquetBytes(byte[] content) {
        this.content = content;
    }

    @Override
    public long getLength() {
        return content.length;
    }

    @Override
    public SeekableInputStream newStream() {
        SeekableBytes in = new SeekableBytes(content);
        return new DelegatingSeekableInputStream(in) {
            @Override
            public long getPos() {
                return in.position();
            }

            @Override
            public void seek(long newPos) {
                in.seek(newPos);
            }
        };
    }

    private static final class SeekableBytes extends ByteArrayInputStream {
        SeekableBytes(byte[] buf) {
            super(buf);
        }

        long position() {
            return pos;
        }

        void seek(long newPos) {
            pos = (int) newPos;
        }
    }
}
