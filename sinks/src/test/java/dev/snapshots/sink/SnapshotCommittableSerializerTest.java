package dev.snapshots.sink;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.snapshots.store.StagedObject;
import java.io.IOException;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/**
 * Committables sit in checkpoints and savepoints: every version's bytes must stay readable by
 * every later release. The golden bytes below were written by version 1 and must never change.
 */
class SnapshotCommittableSerializerTest {
    private static final SnapshotCommittableSerializer SERIALIZER = new SnapshotCommittableSerializer();

    static final SnapshotCommittable INLINE = SnapshotCommittable.inline(
            "orders/v=3/schema=1/date=2026-11-30/window=1405/part-00001-of-00004-0123456789abcdef.parquet",
            1796047500000L, 1796047800000L, 1, "ab".repeat(32), 42,
            Map.of(PartMetadata.FINGERPRINT, "ab".repeat(32), PartMetadata.ROWS, "42"), new byte[] {'P', 'A', 'R', '1'});
    static final SnapshotCommittable STAGED = SnapshotCommittable.staged(
            1796047500000L, 1796047800000L, 2, "cd".repeat(32), 7, Map.of(PartMetadata.WRITER_JOB, "j1"),
            new StagedObject("orders/v=3/x.parquet", "upload-1", List.of("\"etag-1\"")));
    static final SnapshotCommittable MARK = SnapshotCommittable.mark(1, 2, 1796047799999L);

    static final String GOLDEN_INLINE_V1 = "01005c6f72646572732f763d332f736368656d613d312f646174653d323032362d31312d33302f77696e646f773d3134"
            + "30352f706172742d30303030312d6f662d30303030342d303132333435363738396162636465662e7061727175657400"
            + "0001a22cc5f2e0000001a22cca86c0000000010040616261626162616261626162616261626162616261626162616261"
            + "62616261626162616261626162616261626162616261626162616261626162616261626162000000000000002a000000"
            + "02000b66696e6765727072696e7400406162616261626162616261626162616261626162616261626162616261626162"
            + "61626162616261626162616261626162616261626162616261626162616261620004726f777300023432000000045041"
            + "5231";
    static final String GOLDEN_STAGED_V1 = "0200146f72646572732f763d332f782e70617271756574000001a22cc5f2e0000001a22cca86c0000000020040636463"
            + "646364636463646364636463646364636463646364636463646364636463646364636463646364636463646364636463"
            + "64636463646364636463646364000000000000000700000001000a7772697465722d6a6f6200026a31000875706c6f61"
            + "642d3100000001000822657461672d3122";
    static final String GOLDEN_MARK_V1 = "030000000100000002000001a22cca86bf";

    @Example
    void versionOneBytesStillDeserializeToTheSameCommittables() throws IOException {
        assertThat(SERIALIZER.deserialize(1, HexFormat.of().parseHex(GOLDEN_INLINE_V1))).isEqualTo(INLINE);
        assertThat(SERIALIZER.deserialize(1, HexFormat.of().parseHex(GOLDEN_STAGED_V1))).isEqualTo(STAGED);
        assertThat(SERIALIZER.deserialize(1, HexFormat.of().parseHex(GOLDEN_MARK_V1))).isEqualTo(MARK);
    }

    @Example
    void theCurrentVersionWritesTheGoldenBytes() throws IOException {
        assertThat(SERIALIZER.getVersion()).isEqualTo(1);
        assertThat(HexFormat.of().formatHex(SERIALIZER.serialize(INLINE))).isEqualTo(GOLDEN_INLINE_V1);
        assertThat(HexFormat.of().formatHex(SERIALIZER.serialize(STAGED))).isEqualTo(GOLDEN_STAGED_V1);
        assertThat(HexFormat.of().formatHex(SERIALIZER.serialize(MARK))).isEqualTo(GOLDEN_MARK_V1);
    }

    @Property
    void everyCommittableSurvivesARoundTrip(@ForAll("committables") SnapshotCommittable c) throws IOException {
        assertThat(SERIALIZER.deserialize(SERIALIZER.getVersion(), SERIALIZER.serialize(c))).isEqualTo(c);
    }

    @Example
    void unknownVersionsTypesAndTrailingBytesAreRejected() throws IOException {
        byte[] mark = SERIALIZER.serialize(MARK);
        assertThatThrownBy(() -> SERIALIZER.deserialize(2, mark)).hasMessageContaining("unknown snapshot committable version 2");
        assertThatThrownBy(() -> SERIALIZER.deserialize(1, new byte[] {9})).hasMessageContaining("unknown snapshot committable type code 9");
        byte[] longer = java.util.Arrays.copyOf(mark, mark.length + 1);
        assertThatThrownBy(() -> SERIALIZER.deserialize(1, longer)).hasMessageContaining("1 unexpected trailing bytes");
    }

    @Provide
    Arbitrary<SnapshotCommittable> committables() {
        Arbitrary<String> text = Arbitraries.strings().ofMaxLength(40);
        Arbitrary<Map<String, String>> metadata = Arbitraries.maps(text, text).ofMaxSize(5);
        Arbitrary<SnapshotCommittable> inline = Combinators.combine(text, Arbitraries.longs(), Arbitraries.integers(), text,
                        metadata, Arbitraries.bytes().array(byte[].class).ofMaxSize(300))
                .as((k, w, b, f, m, bytes) -> SnapshotCommittable.inline("k" + k, w, w + 1, b, f, b, m, bytes));
        Arbitrary<SnapshotCommittable> staged = Combinators.combine(text, Arbitraries.longs(), text, metadata, text.list().ofMaxSize(4))
                .as((k, w, f, m, etags) -> SnapshotCommittable.staged(w, w + 2, 3, f, 9, m, new StagedObject("k" + k, f, etags)));
        Arbitrary<SnapshotCommittable> mark = Combinators.combine(Arbitraries.integers(), Arbitraries.integers(), Arbitraries.longs())
                .as(SnapshotCommittable::mark);
        return Arbitraries.oneOf(inline, staged, mark);
    }
}
