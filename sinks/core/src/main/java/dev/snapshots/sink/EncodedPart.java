package dev.snapshots.sink;

import dev.snapshots.format.PartEncoding;
import dev.snapshots.format.RowFormat;
import dev.snapshots.key.PartKind;
import dev.snapshots.store.Chunks;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import org.apache.flink.annotation.Internal;

/**
 * One part as the writer makes it: its rows in key order, encoded and fingerprinted in one pass.
 * Public so that the part benchmark (job/jmh) measures exactly the writer's path.
 *
 * @param file the part's bytes, in the buffer it was built in: valid until that buffer's next use
 * @param fingerprint its content fingerprint
 * @param rows how many rows it holds
 */
@Internal
public record EncodedPart(Chunks file, String fingerprint, int rows) {

    /**
     * @param fingerprintScheme the scheme the part's job version recorded ({@link
     *     PartEncoding#FINGERPRINT_SCHEME} for a new one)
     * @param into the writer's buffer, emptied first and then holding the part
     */
    public static <T> EncodedPart of(
            PartKind kind,
            RowFormat<T> format,
            int schemaVersion,
            int fingerprintScheme,
            List<T> rows,
            Chunks into)
            throws IOException {
        PartEncoding.PartWriter<T> encoding =
                new PartEncoding.PartWriter<>(kind, format, schemaVersion, fingerprintScheme, into);
        for (T row : sorted(format, rows)) {
            encoding.add(row);
        }
        return new EncodedPart(encoding.finish(), encoding.fingerprint(), encoding.rows());
    }

    /** Rows in key order (ties by content), so a part's bytes never depend on arrival order. */
    private static <T> List<T> sorted(RowFormat<T> format, List<T> rows) {
        String[] keys = new String[rows.size()];
        for (int i = 0; i < keys.length; i++) {
            keys[i] = format.key(rows.get(i));
        }
        int[] order = KeyOrder.of(keys, i -> PartEncoding.canonicalBytes(format, rows.get(i)));
        List<T> sorted = new ArrayList<>(order.length);
        for (int i : order) {
            sorted.add(rows.get(i));
        }
        return sorted;
    }
}
