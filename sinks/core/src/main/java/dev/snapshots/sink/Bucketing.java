package dev.snapshots.sink;

import java.util.Locale;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.KeyGroupRangeAssignment;

/**
 * Which rows of a window share a part: a pure function of the row's key and the job version's
 * settings (B, max parallelism), never of the parallelism. Fixed per job version: parts of one
 * window written under two bucketings would hold the same key twice.
 */
@PublicEvolving
public enum Bucketing {
    /**
     * The first release's: {@link Buckets#of FNV-1a} of the key mod B. A bucket's rows come from
     * every subtask of the window, so {@link CanonicalSnapshotSink#assemble} gathers them with a
     * second keyed window. Job versions started by that release keep it.
     */
    HASH,

    /**
     * A bucket is whole key groups of the key: bucket = key group x B / max parallelism, with B
     * dividing the max parallelism. Flink sends all keys of a key group to one subtask, so a window
     * keyed by the row's key emits each bucket's rows in one subtask, at any parallelism that keeps
     * buckets whole, and {@link CanonicalSnapshotSink#writeWindows} writes them there, with no
     * second shuffle and no state; at one that splits a bucket, it writes them at the largest below
     * that keeps buckets whole, after a keyBy on the row's key.
     */
    KEY_GROUPS;

    public int bucketOf(String key, int bucketCount, int maxParallelism) {
        return switch (this) {
            case HASH -> Buckets.of(key, bucketCount);
            case KEY_GROUPS ->
                    ofKeyGroup(
                            KeyGroupRangeAssignment.assignToKeyGroup(key, maxParallelism),
                            bucketCount,
                            maxParallelism);
        };
    }

    /** The bucket that holds a key group, with {@link #KEY_GROUPS}. */
    static int ofKeyGroup(int keyGroup, int bucketCount, int maxParallelism) {
        return (int) ((long) keyGroup * bucketCount / maxParallelism);
    }

    /**
     * With {@link #KEY_GROUPS}, refuses a B that does not split the key groups into buckets of the
     * same number of whole groups.
     */
    public void requireWholeKeyGroups(int bucketCount, int maxParallelism) {
        if (this == KEY_GROUPS && maxParallelism % bucketCount != 0) {
            throw new IllegalArgumentException(
                    String.format(
                            Locale.ROOT,
                            "%d buckets cannot each be whole key groups of max parallelism %d:"
                                    + " with key-group bucketing B must divide it (%s)",
                            bucketCount,
                            maxParallelism,
                            IntStream.rangeClosed(1, maxParallelism)
                                    .filter(d -> maxParallelism % d == 0)
                                    .mapToObj(Integer::toString)
                                    .collect(Collectors.joining(", "))));
        }
    }

    /**
     * With {@link #KEY_GROUPS}, refuses a writer parallelism at which a subtask's key groups would
     * end inside a bucket: that bucket's rows would come out of two subtasks. {@link
     * CanonicalSnapshotSink#writeWindows} never builds one; an in-place rescale of the writers'
     * task can ask for one.
     */
    public void requireWholeBuckets(int bucketCount, int maxParallelism, int parallelism) {
        if (this != KEY_GROUPS) {
            return;
        }
        int subtask = splittingSubtask(bucketCount, maxParallelism, parallelism);
        if (subtask < 0) {
            return;
        }
        int groupsPerBucket = maxParallelism / bucketCount;
        int start =
                KeyGroupRangeAssignment.computeKeyGroupRangeForOperatorIndex(
                                maxParallelism, parallelism, subtask)
                        .getStartKeyGroup();
        throw new IllegalArgumentException(
                String.format(
                        Locale.ROOT,
                        "parallelism %d splits bucket %d of %d between two subtasks (subtask %d"
                                + " starts at key group %d of %d): with key-group bucketing the"
                                + " writers run at a parallelism that keeps buckets whole: %s."
                                + " The window may run at any: writeWindows sets the writers'"
                                + " when the job is built; rescale the writers' task in place"
                                + " only to one of these",
                        parallelism,
                        start / groupsPerBucket,
                        bucketCount,
                        subtask,
                        start,
                        maxParallelism,
                        IntStream.rangeClosed(1, bucketCount)
                                .filter(p -> splittingSubtask(bucketCount, maxParallelism, p) < 0)
                                .mapToObj(Integer::toString)
                                .collect(Collectors.joining(", "))));
    }

    /**
     * The largest parallelism up to {@code upTo} that keeps every bucket in one subtask: where
     * {@link CanonicalSnapshotSink#writeWindows} runs the writers of a window at {@code upTo}.
     */
    public int largestWholeParallelism(int bucketCount, int maxParallelism, int upTo) {
        int p = upTo;
        while (this == KEY_GROUPS
                && p > 1
                && splittingSubtask(bucketCount, maxParallelism, p) >= 0) {
            p--;
        }
        return p;
    }

    /** The first subtask whose key groups start inside a bucket, or -1. */
    private static int splittingSubtask(int bucketCount, int maxParallelism, int parallelism) {
        int groupsPerBucket = maxParallelism / bucketCount;
        for (int subtask = 0; subtask < parallelism; subtask++) {
            KeyGroupRange range =
                    KeyGroupRangeAssignment.computeKeyGroupRangeForOperatorIndex(
                            maxParallelism, parallelism, subtask);
            if (range.getStartKeyGroup() % groupsPerBucket != 0) {
                return subtask;
            }
        }
        return -1;
    }
}
