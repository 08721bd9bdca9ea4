package dev.snapshots.sink;

import java.nio.charset.StandardCharsets;
import org.apache.flink.annotation.PublicEvolving;

/**
 * The bucket of a key: FNV-1a (64 bit) over its UTF-8 bytes, mod B. Defined by bytes alone, so it
 * is the same in every JVM, release and language; {@code String.hashCode} would do too, but this
 * spreads similar keys (device-0001, device-0002...) better and is easy to reproduce elsewhere.
 */
@PublicEvolving
public final class Buckets {
    private static final long FNV_OFFSET = 0xcbf29ce484222325L;
    private static final long FNV_PRIME = 0x100000001b3L;

    private Buckets() {}

    public static int of(String key, int bucketCount) {
        long h = FNV_OFFSET;
        for (byte b : key.getBytes(StandardCharsets.UTF_8)) {
            h ^= (b & 0xff);
            h *= FNV_PRIME;
        }
        return (int) Long.remainderUnsigned(h, bucketCount);
    }
}
