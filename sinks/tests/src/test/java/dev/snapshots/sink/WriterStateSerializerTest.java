package dev.snapshots.sink;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.snapshots.key.PartKind;
import java.io.IOException;
import java.util.Arrays;
import java.util.HexFormat;
import org.junit.jupiter.api.Test;

/** A writer's state sits in checkpoints and savepoints: its version 1 bytes never change. */
class WriterStateSerializerTest {
    private static final WriterStateSerializer SERIALIZER = new WriterStateSerializer();
    private static final SnapshotWriter.State STATE =
            new SnapshotWriter.State(
                    new SnapshotCommittable.Run("orders", 3, PartKind.DEAD_LETTER, "run-1"),
                    1796047800000L);
    private static final String GOLDEN_V1 =
            "00066f72646572730000000302000572756e2d31000001a22cca86c0";

    @Test
    void versionOneWritesAndReadsTheGoldenBytes() throws IOException {
        assertThat(SERIALIZER.getVersion()).isEqualTo(1);
        assertThat(HexFormat.of().formatHex(SERIALIZER.serialize(STATE))).isEqualTo(GOLDEN_V1);
        assertThat(SERIALIZER.deserialize(1, HexFormat.of().parseHex(GOLDEN_V1))).isEqualTo(STATE);
    }

    @Test
    void unknownVersionsAndTrailingBytesAreRejected() {
        byte[] golden = HexFormat.of().parseHex(GOLDEN_V1);
        assertThatThrownBy(() -> SERIALIZER.deserialize(2, golden))
                .hasMessageContaining("unknown snapshot writer state version 2");
        assertThatThrownBy(
                        () -> SERIALIZER.deserialize(1, Arrays.copyOf(golden, golden.length + 1)))
                .hasMessageContaining("1 unexpected trailing bytes");
    }
}
