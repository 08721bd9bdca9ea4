package dev.snapshots.sink;

import dev.snapshots.format.PartEncoding;
import dev.snapshots.format.RowFormat;
import dev.snapshots.key.PartKind;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import org.apache.flink.annotation.Internal;

/**
 * One part as the writer makes it: its rows in key order, encoded and fingerprinted in one pass.
 * Public so that the part benchmark (job/jmh) measures exactly the writer's path.
 *
 * @param file the part's bytes
 * @param fingerprint its content fingerprint
 * @param rows how many rows it holds
 */
@Internal
public record EncodedPart(byte[] file, String fingerprint, int rows) {

    /**
     * @param fingerprintScheme the scheme the part's job version recorded ({@link
     *     PartEncoding#FINGERPRINT_SCHEME} for a new one)
     */
    public static <T> EncodedPart of(
            PartKind kind,
            RowFormat<T> format,
            int schemaVersion,
            int fingerprintScheme,
            List<T> rows)
            throws IOException {
        PartEncoding.PartWriter<T> encoding =
                new PartEncoding.PartWriter<>(kind, format, schemaVersion, fingerprintScheme);
        for (T row : sorted(format, rows)) {
            encoding.add(row);
        }
        byte[] file = encoding.finish();
        return new EncodedPart(file, encoding.fingerprint(), encoding.rows());
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
