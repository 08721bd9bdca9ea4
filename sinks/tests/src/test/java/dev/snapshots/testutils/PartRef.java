package dev.snapshots.testutils;

/** One logical part: a (window, bucket) pair. */
public record PartRef(long windowStartMillis, int bucket) implements Comparable<PartRef> {
    @Override
    public int compareTo(PartRef o) {
        int c = Long.compare(windowStartMillis, o.windowStartMillis);
        return c != 0 ? c : Integer.compare(bucket, o.bucket);
    }
}
