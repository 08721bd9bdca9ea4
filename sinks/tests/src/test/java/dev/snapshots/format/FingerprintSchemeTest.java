package dev.snapshots.format;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.snapshots.format.FlatRowFormatTest.Reading;
import dev.snapshots.key.PartKind;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.avro.Schema;
import org.apache.avro.SchemaBuilder;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Each fingerprint scheme gives, for fixed rows, the hex it gave when it was introduced: a part
 * written by any later release, or recomputed by any later audit, keeps the fingerprint its job
 * version's first parts had, or two executions of one version would report each other as divergent.
 * The hex below is golden: never edit it; a change of definition is a new scheme.
 */
class FingerprintSchemeTest {
    /** Four readings, one with a NaN of other bits than Java's own, one of -0.0. */
    private static final List<Reading> READINGS =
            List.of(
                    new Reading("sensor-b", 1_764_547_200_000L, 3, 21.5),
                    new Reading(
                            "sensor-a",
                            1_764_547_260_000L,
                            -1,
                            Double.longBitsToDouble(0x7ff8_0000_0000_0001L)),
                    new Reading("", 0, Long.MIN_VALUE, -0.0),
                    new Reading("sensör-ü", -1, Long.MAX_VALUE, Double.NEGATIVE_INFINITY));

    private static final String READINGS_SCHEME_1 =
            "565f688081c1ae59b16b65f94be670e2160eabbd464423996643b0c981299f8b";
    private static final String READINGS_SCHEME_2 =
            "44c1398ee23eea0e43294aab1806417f167550e10f82cc9143c3a98684d8c4c7";

    /** Every Avro type a {@link RowFormat}'s record may hold. */
    private static final Schema EVERY_TYPE =
            SchemaBuilder.record("Everything")
                    .namespace("dev.snapshots.test")
                    .fields()
                    .requiredString("key")
                    .optionalString("note")
                    .requiredInt("small")
                    .requiredFloat("ratio")
                    .requiredBoolean("ok")
                    .requiredBytes("blob")
                    .name("hash")
                    .type()
                    .fixed("Hash")
                    .size(4)
                    .noDefault()
                    .name("level")
                    .type()
                    .enumeration("Level")
                    .symbols("LOW", "HIGH")
                    .noDefault()
                    .name("tags")
                    .type()
                    .array()
                    .items()
                    .stringType()
                    .noDefault()
                    .name("counts")
                    .type()
                    .map()
                    .values()
                    .longType()
                    .noDefault()
                    .name("where")
                    .type()
                    .record("Where")
                    .fields()
                    .requiredDouble("lat")
                    .optionalLong("floor")
                    .endRecord()
                    .noDefault()
                    .endRecord();

    private static final String EVERY_TYPE_SCHEME_1 =
            "ef17169fd4c2e3d92f33543d73cf8c0896a14bce92bb57ea6db15f7059e311f6";
    private static final String EVERY_TYPE_SCHEME_2 =
            "9dff33905224b0d4b3427fee32ee7ca420a55a3762f9bc42647ad37b375d8926";

    @ParameterizedTest(name = "scheme {0}")
    @ValueSource(ints = {PartEncoding.FINGERPRINT_AVRO, PartEncoding.FINGERPRINT_TYPED})
    void fixedReadingsGiveTheSchemesGoldenHexWrittenFromFieldsFromRecordsOrReadBack(int scheme)
            throws Exception {
        String golden =
                scheme == PartEncoding.FINGERPRINT_AVRO ? READINGS_SCHEME_1 : READINGS_SCHEME_2;
        PartEncoding.PartWriter<Reading> fields =
                new PartEncoding.PartWriter<>(
                        PartKind.SNAPSHOT, new FlatRowFormatTest.Flat(), 3, scheme);
        PartEncoding.PartWriter<Reading> records =
                new PartEncoding.PartWriter<>(
                        PartKind.SNAPSHOT, new FlatRowFormatTest.ByName(), 3, scheme);
        for (Reading r : READINGS) {
            fields.add(r);
            records.add(r);
        }
        byte[] file = fields.finish().toByteArray();
        records.finish();

        assertThat(fields.fingerprint()).isEqualTo(golden);
        assertThat(records.fingerprint()).isEqualTo(golden);
        assertThat(
                        PartEncoding.fingerprint(
                                PartEncoding.decode(file),
                                new FlatRowFormatTest.Flat().schema(),
                                3,
                                scheme))
                .as("the audit's recomputation from the file")
                .isEqualTo(golden);
    }

    @ParameterizedTest(name = "scheme {0}")
    @ValueSource(ints = {PartEncoding.FINGERPRINT_AVRO, PartEncoding.FINGERPRINT_TYPED})
    void fixedRecordsOfEveryTypeGiveTheSchemesGoldenHex(int scheme) {
        String golden =
                scheme == PartEncoding.FINGERPRINT_AVRO ? EVERY_TYPE_SCHEME_1 : EVERY_TYPE_SCHEME_2;
        assertThat(PartEncoding.fingerprint(everything(), EVERY_TYPE, 1, scheme)).isEqualTo(golden);
    }

    @Test
    void theTypedSchemeTellsApartBytesThatMoveBetweenFieldsOrRows() {
        String ab = typed(keyAndNote("ab", "c"));
        assertThat(typed(keyAndNote("ab", "c"))).isEqualTo(ab);
        assertThat(typed(keyAndNote("a", "bc"))).isNotEqualTo(ab);
        List<GenericRecord> more = keyAndNote("ab", "c");
        more.addAll(keyAndNote("", ""));
        assertThat(typed(more)).isNotEqualTo(ab);
    }

    @Test
    void theTypedSchemeDependsOnAMapsEntriesNotTheirOrder() {
        List<GenericRecord> rows = everything();
        List<GenericRecord> reordered = everything();
        Map<String, Long> backwards = new LinkedHashMap<>();
        backwards.put("b", 2L);
        backwards.put("a", 1L);
        reordered.get(0).put("counts", backwards);

        assertThat(
                        PartEncoding.fingerprint(
                                reordered, EVERY_TYPE, 1, PartEncoding.FINGERPRINT_TYPED))
                .isEqualTo(
                        PartEncoding.fingerprint(
                                rows, EVERY_TYPE, 1, PartEncoding.FINGERPRINT_TYPED));
    }

    @Test
    void aSchemeThisReleaseDoesNotKnowIsRefusedByName() {
        assertThatThrownBy(() -> PartEncoding.fingerprint(everything(), EVERY_TYPE, 1, 3))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("fingerprint scheme 3 is not one this release knows");
    }

    /** Two rows of {@link #EVERY_TYPE}: every field set, then the nullable ones null. */
    private static List<GenericRecord> everything() {
        Schema where = EVERY_TYPE.getField("where").schema();
        List<GenericRecord> rows = new ArrayList<>();
        for (int i = 0; i < 2; i++) {
            GenericRecord w = new GenericData.Record(where);
            w.put("lat", i == 0 ? 52.52 : Double.NaN);
            w.put("floor", i == 0 ? 3L : null);
            Map<String, Long> counts = new LinkedHashMap<>();
            counts.put("a", 1L);
            counts.put("b", 2L);
            GenericRecord r = new GenericData.Record(EVERY_TYPE);
            r.put("key", "k" + i);
            r.put("note", i == 0 ? "noted" : null);
            r.put("small", i == 0 ? 7 : Integer.MIN_VALUE);
            r.put("ratio", i == 0 ? 0.25f : Float.NaN);
            r.put("ok", i == 0);
            r.put("blob", ByteBuffer.wrap(new byte[] {1, 2, (byte) i}));
            r.put(
                    "hash",
                    new GenericData.Fixed(
                            EVERY_TYPE.getField("hash").schema(), new byte[] {9, 8, 7, (byte) i}));
            r.put(
                    "level",
                    new GenericData.EnumSymbol(
                            EVERY_TYPE.getField("level").schema(), i == 0 ? "LOW" : "HIGH"));
            r.put("tags", i == 0 ? List.of("x", "yz") : List.of());
            r.put("counts", counts);
            r.put("where", w);
            rows.add(r);
        }
        return rows;
    }

    /** The first row of {@link #everything} with its key and note replaced. */
    private static List<GenericRecord> keyAndNote(String key, String note) {
        GenericRecord row = everything().get(0);
        row.put("key", key);
        row.put("note", note);
        return new ArrayList<>(List.of(row));
    }

    private static String typed(List<GenericRecord> rows) {
        return PartEncoding.fingerprint(rows, EVERY_TYPE, 1, PartEncoding.FINGERPRINT_TYPED);
    }
}
