package dev.snapshots.sink;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.snapshots.key.PartKind;
import java.io.IOException;
import java.util.Arrays;
import java.util.HexFormat;
import org.junit.jupiter.api.Test;

/** A writer's state sits in checkpoints and savepoints: the bytes of every version never change. */
class WriterStateSerializerTest {
    private static final WriterStateSerializer SERIALIZER = new WriterStateSerializer();
    private static final SnapshotCommittable.Run RUN =
            new SnapshotCommittable.Run("orders", 3, PartKind.DEAD_LETTER, "run-1");
    private static final SnapshotWriter.State STATE =
            new SnapshotWriter.State(RUN, 1796047800000L, 2, 300_000L);

    /**
     * Written by 0.3.0's builds until its writers kept what the store told them (0.2.0 had none).
     */
    private static final String GOLDEN_V1 =
            "00066f72646572730000000302000572756e2d31000001a22cca86c0";

    private static final String GOLDEN_V2 =
            "00066f72646572730000000302000572756e2d31000001a22cca86c0"
                    + "00000002" // fingerprint scheme
                    + "00000000000493e0"; // window length, ms

    @Test
    void versionTwoWritesAndReadsTheGoldenBytes() throws IOException {
        assertThat(SERIALIZER.getVersion()).isEqualTo(2);
        assertThat(HexFormat.of().formatHex(SERIALIZER.serialize(STATE))).isEqualTo(GOLDEN_V2);
        assertThat(SERIALIZER.deserialize(2, HexFormat.of().parseHex(GOLDEN_V2))).isEqualTo(STATE);
    }

    /** A version 1 state knows neither: its writer reads the job version's identity as before. */
    @Test
    void versionOneIsReadAsKnowingNeitherSchemeNorWindowLength() throws IOException {
        assertThat(SERIALIZER.deserialize(1, HexFormat.of().parseHex(GOLDEN_V1)))
                .isEqualTo(
                        new SnapshotWriter.State(
                                RUN,
                                1796047800000L,
                                SnapshotWriter.State.UNKNOWN,
                                SnapshotWriter.State.UNKNOWN));
    }

    @Test
    void unknownVersionsAndTrailingBytesAreRejected() {
        byte[] golden = HexFormat.of().parseHex(GOLDEN_V1);
        assertThatThrownBy(() -> SERIALIZER.deserialize(3, golden))
                .hasMessageContaining("unknown snapshot writer state version 3");
        assertThatThrownBy(
                        () -> SERIALIZER.deserialize(1, Arrays.copyOf(golden, golden.length + 1)))
                .hasMessageContaining("1 unexpected trailing bytes");
        byte[] golden2 = HexFormat.of().parseHex(GOLDEN_V2);
        assertThatThrownBy(
                        () -> SERIALIZER.deserialize(2, Arrays.copyOf(golden2, golden2.length + 1)))
                .hasMessageContaining("1 unexpected trailing bytes");
    }
}
