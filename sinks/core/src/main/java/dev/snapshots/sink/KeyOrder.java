package dev.snapshots.sink;

import java.util.Arrays;
import java.util.function.IntFunction;

/**
 * The order of a part's rows: by key ({@link String#compareTo}), ties by content (unsigned bytes).
 * Sorting objects by a string comparator was the costliest step of a 250,000-row part, so rows are
 * sorted by a primitive key first: the four chars after the part's common key prefix, which orders
 * as the keys do (a key that sorts first never gets a larger one) and separates nearly all of them.
 * Only rows whose four chars are equal are compared as strings.
 */
final class KeyOrder {
    private KeyOrder() {}

    /**
     * @param content a row's canonical bytes, asked for only when two keys are equal
     * @return the row indexes in order
     */
    static int[] of(String[] keys, IntFunction<byte[]> content) {
        int n = keys.length;
        int common = commonPrefix(keys);
        long[] prefix = new long[n];
        int[] order = new int[n];
        for (int i = 0; i < n; i++) {
            prefix[i] = fourChars(keys[i], common);
            order[i] = i;
        }
        radixSort(prefix, order);
        for (int from = 0; from < n; ) {
            int to = from + 1;
            while (to < n && prefix[to] == prefix[from]) {
                to++;
            }
            if (to - from > 1) {
                sortRun(order, from, to, keys, content);
            }
            from = to;
        }
        return order;
    }

    private static int commonPrefix(String[] keys) {
        if (keys.length == 0) {
            return 0;
        }
        int common = keys[0].length();
        for (String key : keys) {
            common = Math.min(common, key.length());
            for (int c = 0; c < common; c++) {
                if (key.charAt(c) != keys[0].charAt(c)) {
                    common = c;
                }
            }
        }
        return common;
    }

    /** Chars from {@code from}, 16 bits each, a missing char as 0 (a tie the run sort settles). */
    private static long fourChars(String key, int from) {
        long p = 0;
        for (int c = from; c < from + 4; c++) {
            p = (p << 16) | (c < key.length() ? key.charAt(c) : 0);
        }
        return p;
    }

    /**
     * LSD radix sort by unsigned 64-bit value, a byte a pass, carrying the indexes along; a pass in
     * which every value has the same byte (the high byte of an ASCII char) is skipped.
     */
    private static void radixSort(long[] values, int[] order) {
        int n = values.length;
        if (n < 2) {
            return;
        }
        long[] v2 = new long[n];
        int[] o2 = new int[n];
        int[] count = new int[256];
        for (int shift = 0; shift < 64; shift += 8) {
            Arrays.fill(count, 0);
            for (long v : values) {
                count[(int) (v >>> shift) & 0xff]++;
            }
            if (count[(int) (values[0] >>> shift) & 0xff] == n) {
                continue;
            }
            for (int d = 0, sum = 0; d < count.length; d++) {
                int c = count[d];
                count[d] = sum;
                sum += c;
            }
            for (int i = 0; i < n; i++) {
                int d = (int) (values[i] >>> shift) & 0xff;
                v2[count[d]] = values[i];
                o2[count[d]++] = order[i];
            }
            System.arraycopy(v2, 0, values, 0, n);
            System.arraycopy(o2, 0, order, 0, n);
        }
    }

    private static void sortRun(
            int[] order, int from, int to, String[] keys, IntFunction<byte[]> content) {
        Integer[] run = new Integer[to - from];
        for (int i = from; i < to; i++) {
            run[i - from] = order[i];
        }
        Arrays.sort(
                run,
                (a, b) -> {
                    int byKey = keys[a].compareTo(keys[b]);
                    return byKey != 0
                            ? byKey
                            : Arrays.compareUnsigned(content.apply(a), content.apply(b));
                });
        for (int i = from; i < to; i++) {
            order[i] = run[i - from];
        }
    }
}
