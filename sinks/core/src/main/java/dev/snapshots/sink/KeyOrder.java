package dev.snapshots.sink;

import java.util.Arrays;
import java.util.function.IntFunction;

/**
 * The order of a part's rows: by key ({@link String#compareTo}), ties by content (unsigned bytes).
 * Sorting objects by a string comparator was the costliest step of a 250,000-row part, so rows are
 * sorted by primitive keys: the four chars after the part's common key prefix, which order as the
 * keys do (a key that sorts first never gets a larger one), then each run of rows whose four chars
 * are equal by the next four, and so on while some key of the run goes on. At a million keys the
 * first four chars left runs of 10 to 100 rows that were compared as boxed strings: 13 % of the
 * part's CPU samples. Only rows whose keys are equal to the end are compared as strings.
 */
final class KeyOrder {
    /** Runs this short are put in order by insertion; a radix pass costs 256 counts. */
    private static final int SMALL = 32;

    private KeyOrder() {}

    /**
     * @param content a row's canonical bytes, asked for only when two keys are equal
     * @return the row indexes in order
     */
    static int[] of(String[] keys, IntFunction<byte[]> content) {
        int[] order = new int[keys.length];
        for (int i = 0; i < order.length; i++) {
            order[i] = i;
        }
        sortRange(order, 0, order.length, commonPrefix(keys), keys, content);
        return order;
    }

    /** Sorts {@code order[from, to)}, whose keys agree on their first {@code offset} chars. */
    private static void sortRange(
            int[] order, int from, int to, int offset, String[] keys, IntFunction<byte[]> content) {
        int n = to - from;
        long[] prefix = new long[n];
        int[] range = Arrays.copyOfRange(order, from, to);
        for (int i = 0; i < n; i++) {
            prefix[i] = fourChars(keys[range[i]], offset);
        }
        if (n <= SMALL) {
            insertionSort(prefix, range);
        } else {
            radixSort(prefix, range);
        }
        System.arraycopy(range, 0, order, from, n);
        for (int a = 0; a < n; ) {
            int b = a + 1;
            boolean goesOn = keys[range[a]].length() > offset + 4;
            while (b < n && prefix[b] == prefix[a]) {
                goesOn |= keys[range[b]].length() > offset + 4;
                b++;
            }
            if (b - a > 1) {
                if (goesOn) {
                    sortRange(order, from + a, from + b, offset + 4, keys, content);
                } else {
                    sortRun(order, from + a, from + b, keys, content);
                }
            }
            a = b;
        }
    }

    /** By unsigned value, carrying the indexes along. */
    private static void insertionSort(long[] values, int[] order) {
        for (int i = 1; i < values.length; i++) {
            long v = values[i];
            int o = order[i];
            int j = i - 1;
            while (j >= 0 && Long.compareUnsigned(values[j], v) > 0) {
                values[j + 1] = values[j];
                order[j + 1] = order[j];
                j--;
            }
            values[j + 1] = v;
            order[j + 1] = o;
        }
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
