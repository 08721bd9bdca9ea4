package dev.snapshots.job.source;

import static org.assertj.core.api.Assertions.assertThat;

import dev.snapshots.job.testutils.Golden;
import java.io.IOException;
import java.util.Collection;
import java.util.List;
import org.apache.flink.api.connector.source.lib.NumberSequenceSource;
import org.apache.flink.api.connector.source.lib.NumberSequenceSource.NumberSequenceSplit;
import org.junit.jupiter.api.Test;

/**
 * The generator and file source's checkpointed formats: today's, and what DataGeneratorSource wrote
 * before it.
 */
class IndexedSplitSerializerTest {
    private static final IndexedSplit.Serializer SPLITS = new IndexedSplit.Serializer();
    private static final IndexedSource.EnumeratorStateSerializer STATES =
            new IndexedSource.EnumeratorStateSerializer();
    private static final IndexedSplit SPLIT =
            new IndexedSplit(
                    "1", 1_200, 48_000, new SplitProgress(1_796_000_000_000L, 1_796_000_001_000L));

    @Test
    void version2ReadsBackAsWritten() throws IOException {
        byte[] split = Golden.bytes("indexed-split-v2.bin", SPLITS.serialize(SPLIT));
        assertThat(SPLITS.serialize(SPLIT)).isEqualTo(split);
        assertThat(SPLITS.deserialize(2, split)).isEqualTo(SPLIT);
        byte[] state = Golden.bytes("indexed-enumerator-v2.bin", STATES.serialize(List.of(SPLIT)));
        assertThat(STATES.serialize(List.of(SPLIT))).isEqualTo(state);
        assertThat(STATES.deserialize(2, state)).containsExactly(SPLIT);
    }

    @Test
    void rangesDataGeneratorSourceCheckpointedResumeWhereTheyWereWithNoProgress()
            throws IOException {
        NumberSequenceSource legacy = new NumberSequenceSource(0, 0);
        NumberSequenceSplit split =
                new NumberSequenceSplit("2", 24_000, 47_999); // "to" is inclusive
        byte[] splitBytes =
                Golden.bytes(
                        "indexed-split-v1-datagen.bin",
                        legacy.getSplitSerializer().serialize(split));
        assertThat(SPLITS.deserialize(1, splitBytes))
                .isEqualTo(new IndexedSplit("2", 24_000, 48_000, SplitProgress.none()));

        Collection<NumberSequenceSplit> unassigned = List.of(split);
        byte[] stateBytes =
                Golden.bytes(
                        "indexed-enumerator-v1-datagen.bin",
                        legacy.getEnumeratorCheckpointSerializer().serialize(unassigned));
        assertThat(STATES.deserialize(1, stateBytes))
                .containsExactly(new IndexedSplit("2", 24_000, 48_000, SplitProgress.none()));
    }
}
