package dev.snapshots.sink;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Arrays;
import org.apache.flink.runtime.state.KeyGroupRangeAssignment;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class PartAssemblerTest {
    /**
     * Every bucket its own key, in its target group. Up to max parallelism the keys are what
     * earlier releases chose, the smallest int of the group: the assembling window's state in a
     * savepoint is keyed by them.
     */
    @ParameterizedTest(name = "B={0} maxParallelism={1}")
    @CsvSource({"1, 128", "4, 128", "128, 128", "7, 4", "13, 4", "129, 128", "1000, 128", "300, 1"})
    void everyBucketGetsItsOwnKeyInItsTargetGroup(int buckets, int maxParallelism) {
        int[] keys = PartAssembler.routingKeys(buckets, maxParallelism);

        assertThat(Arrays.stream(keys).distinct().count())
                .as("distinct routing keys")
                .isEqualTo(buckets);
        for (int b = 0; b < buckets; b++) {
            int target =
                    buckets <= maxParallelism
                            ? (int) ((long) b * maxParallelism / buckets)
                            : b % maxParallelism;
            assertThat(KeyGroupRangeAssignment.assignToKeyGroup(keys[b], maxParallelism))
                    .as("bucket %d", b)
                    .isEqualTo(target);
            if (buckets <= maxParallelism) {
                for (int smaller = 0; smaller < keys[b]; smaller++) {
                    assertThat(KeyGroupRangeAssignment.assignToKeyGroup(smaller, maxParallelism))
                            .isNotEqualTo(target);
                }
            }
        }
    }
}
