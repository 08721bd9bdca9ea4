package dev.snapshots.sink;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.snapshots.key.PartKind;
import dev.snapshots.key.PartMetadata;
import dev.snapshots.store.StagedObject;
import dev.snapshots.testkit.RandomInputs;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Committables sit in checkpoints and savepoints: every version's bytes must stay readable by every
 * later release. The golden bytes below were written by versions 1, 2 and 3 and must never change.
 */
class SnapshotCommittableSerializerTest {
    private static final SnapshotCommittableSerializer SERIALIZER =
            new SnapshotCommittableSerializer();

    static final SnapshotCommittable INLINE =
            SnapshotCommittable.inline(
                    "orders/v=3/schema=1/date=2026-11-30/window=1405/part-00001-of-00004-0123456789abcdef.parquet",
                    1796047500000L,
                    1796047800000L,
                    1,
                    "ab".repeat(32),
                    42,
                    Map.of(PartMetadata.FINGERPRINT, "ab".repeat(32), PartMetadata.ROWS, "42"),
                    new byte[] {'P', 'A', 'R', '1'});
    static final SnapshotCommittable STAGED =
            SnapshotCommittable.staged(
                    1796047500000L,
                    1796047800000L,
                    2,
                    "cd".repeat(32),
                    7,
                    Map.of(PartMetadata.WRITER_JOB, "j1"),
                    new StagedObject("orders/v=3/x.parquet", "upload-1", List.of("\"etag-1\"")));
    static final SnapshotCommittable MARK_V1 = SnapshotCommittable.mark(null, 1, 2, 1796047799999L);
    static final SnapshotCommittable STAGED_V2 =
            SnapshotCommittable.staged(
                    1796047500000L,
                    1796047800000L,
                    2,
                    "cd".repeat(32),
                    7,
                    Map.of(PartMetadata.WRITER_JOB, "j1"),
                    new StagedObject(
                            "orders/v=3/x.parquet",
                            "upload-1",
                            List.of("\"etag-1\""),
                            "_staging/orders/v=3/x.parquet.u1"));
    static final SnapshotCommittable MARK_V2 =
            SnapshotCommittable.mark(
                    new SnapshotCommittable.Run("orders", 3, PartKind.SNAPSHOT, "run-1"),
                    1,
                    2,
                    1796047799999L);

    static final String GOLDEN_INLINE_V1 =
            "01005c6f72646572732f763d332f736368656d613d312f646174653d323032362d31312d33302f77696e646f773d3134"
                    + "30352f706172742d30303030312d6f662d30303030342d303132333435363738396162636465662e7061727175657400"
                    + "0001a22cc5f2e0000001a22cca86c0000000010040616261626162616261626162616261626162616261626162616261"
                    + "62616261626162616261626162616261626162616261626162616261626162616261626162000000000000002a000000"
                    + "02000b66696e6765727072696e7400406162616261626162616261626162616261626162616261626162616261626162"
                    + "61626162616261626162616261626162616261626162616261626162616261620004726f777300023432000000045041"
                    + "5231";
    static final String GOLDEN_STAGED_V1 =
            "0200146f72646572732f763d332f782e70617271756574000001a22cc5f2e0000001a22cca86c0000000020040636463"
                    + "646364636463646364636463646364636463646364636463646364636463646364636463646364636463646364636463"
                    + "64636463646364636463646364000000000000000700000001000a7772697465722d6a6f6200026a31000875706c6f61"
                    + "642d3100000001000822657461672d3122";
    static final String GOLDEN_MARK_V1 = "030000000100000002000001a22cca86bf";

    /**
     * Version 2 writes inline parts as version 1 did; staged parts gain their copy, marks their
     * run.
     */
    static final String GOLDEN_STAGED_V2 =
            GOLDEN_STAGED_V1
                    + "00205f73746167696e672f6f72646572732f763d332f782e706172717565742e7531";

    static final String GOLDEN_MARK_V2 =
            "0300066f72646572730000000301000572756e2d310000000100000002000001a22cca86bf";

    /**
     * Version 3 writes parts as version 2 did; marks gain the end of their writer's last window.
     */
    static final SnapshotCommittable MARK_V3 =
            SnapshotCommittable.mark(
                    new SnapshotCommittable.Run("orders", 3, PartKind.SNAPSHOT, "run-1"),
                    1,
                    2,
                    1796047799999L,
                    1796047800000L);

    static final String GOLDEN_MARK_V3 = GOLDEN_MARK_V2 + "000001a22cca86c0";

    @Test
    void versionOneBytesStillDeserializeToTheSameCommittables() throws IOException {
        assertThat(SERIALIZER.deserialize(1, HexFormat.of().parseHex(GOLDEN_INLINE_V1)))
                .isEqualTo(INLINE);
        assertThat(SERIALIZER.deserialize(1, HexFormat.of().parseHex(GOLDEN_STAGED_V1)))
                .as("a staged part without a copy")
                .isEqualTo(STAGED);
        assertThat(SERIALIZER.deserialize(1, HexFormat.of().parseHex(GOLDEN_MARK_V1)))
                .as("a mark without its run")
                .isEqualTo(MARK_V1);
    }

    @Test
    void theCurrentVersionWritesTheGoldenBytes() throws IOException {
        assertThat(SERIALIZER.getVersion()).isEqualTo(3);
        assertThat(HexFormat.of().formatHex(SERIALIZER.serialize(INLINE)))
                .isEqualTo(GOLDEN_INLINE_V1);
        assertThat(HexFormat.of().formatHex(SERIALIZER.serialize(STAGED_V2)))
                .isEqualTo(GOLDEN_STAGED_V2);
        assertThat(HexFormat.of().formatHex(SERIALIZER.serialize(MARK_V3)))
                .isEqualTo(GOLDEN_MARK_V3);
        assertThat(SERIALIZER.deserialize(3, HexFormat.of().parseHex(GOLDEN_STAGED_V2)))
                .isEqualTo(STAGED_V2);
        assertThat(SERIALIZER.deserialize(3, HexFormat.of().parseHex(GOLDEN_MARK_V3)))
                .isEqualTo(MARK_V3);
    }

    @Test
    void versionTwoBytesStillDeserializeToTheSameCommittables() throws IOException {
        assertThat(SERIALIZER.deserialize(2, HexFormat.of().parseHex(GOLDEN_STAGED_V2)))
                .isEqualTo(STAGED_V2);
        assertThat(SERIALIZER.deserialize(2, HexFormat.of().parseHex(GOLDEN_MARK_V2)))
                .as("a mark that knows no last window")
                .isEqualTo(MARK_V2)
                .extracting(SnapshotCommittable::windowEndMillis)
                .isEqualTo(Long.MIN_VALUE);
    }

    static LongStream seeds() {
        return LongStream.rangeClosed(1, 1000);
    }

    @ParameterizedTest(name = "seed {0}")
    @MethodSource("seeds")
    void everyCommittableSurvivesARoundTrip(long seed) throws IOException {
        SnapshotCommittable c = committable(new RandomInputs(seed));
        assertThat(SERIALIZER.deserialize(SERIALIZER.getVersion(), SERIALIZER.serialize(c)))
                .as("seed %d", seed)
                .isEqualTo(c);
    }

    @Test
    void unknownVersionsTypesAndTrailingBytesAreRejected() throws IOException {
        byte[] mark = SERIALIZER.serialize(MARK_V3);
        assertThatThrownBy(() -> SERIALIZER.deserialize(4, mark))
                .hasMessageContaining("unknown snapshot committable version 4");
        assertThatThrownBy(() -> SERIALIZER.deserialize(2, new byte[] {9}))
                .hasMessageContaining("unknown snapshot committable type code 9");
        byte[] longer = Arrays.copyOf(mark, mark.length + 1);
        assertThatThrownBy(() -> SERIALIZER.deserialize(3, longer))
                .hasMessageContaining("1 unexpected trailing bytes");
        assertThatThrownBy(() -> SERIALIZER.serialize(MARK_V1))
                .hasMessageContaining("a mark without its run");
    }

    /**
     * An inline part, a staged part or a progress mark, about a third of the time each: texts of
     * 0-40 characters (any text, not just ASCII), up to 5 metadata entries, up to 300 inline bytes,
     * up to 4 ETags and a staged copy, a mark's run, and any long or int where the committable
     * holds one.
     */
    private static SnapshotCommittable committable(RandomInputs in) {
        switch (in.between(0, 2)) {
            case 0:
                {
                    String key = "k" + in.string(0, 40);
                    long windowStart = in.anyLong();
                    int bucket = in.anyInt();
                    return SnapshotCommittable.inline(
                            key,
                            windowStart,
                            windowStart + 1,
                            bucket,
                            in.string(0, 40),
                            bucket,
                            metadata(in),
                            in.bytes(300));
                }
            case 1:
                {
                    String key = "k" + in.string(0, 40);
                    long windowStart = in.anyLong();
                    String fingerprint = in.string(0, 40);
                    Map<String, String> metadata = metadata(in);
                    List<String> etags = new ArrayList<>();
                    for (int n = in.between(0, 4); etags.size() < n; ) {
                        etags.add(in.string(0, 40));
                    }
                    return SnapshotCommittable.staged(
                            windowStart,
                            windowStart + 2,
                            3,
                            fingerprint,
                            9,
                            metadata,
                            new StagedObject(key, fingerprint, etags, in.string(0, 40)));
                }
            default:
                SnapshotCommittable.Run run =
                        new SnapshotCommittable.Run(
                                in.string(0, 40),
                                in.anyInt(),
                                PartKind.values()[in.between(0, PartKind.values().length - 1)],
                                in.string(0, 40));
                return SnapshotCommittable.mark(
                        run, in.anyInt(), in.anyInt(), in.anyLong(), in.anyLong());
        }
    }

    private static Map<String, String> metadata(RandomInputs in) {
        Map<String, String> metadata = new HashMap<>();
        for (int n = in.between(0, 5); metadata.size() < n; ) {
            metadata.put(in.string(0, 40), in.string(0, 40));
        }
        return metadata;
    }
}
