package dev.snapshots.format;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.snapshots.key.PartKind;
import dev.snapshots.testkit.RandomInputs;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.LongStream;
import java.util.stream.Stream;
import org.apache.avro.LogicalTypes;
import org.apache.avro.Schema;
import org.apache.avro.SchemaBuilder;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A part written from a {@link FlatRowFormat}'s fields holds the same rows, and has the same
 * fingerprint, as the part written from records built independently of it, by name.
 */
class FlatRowFormatTest {
    private static final Schema SCHEMA =
            SchemaBuilder.record("Reading")
                    .namespace("dev.snapshots.test")
                    .fields()
                    .requiredString("key")
                    .name("at")
                    .type(
                            LogicalTypes.timestampMillis()
                                    .addToSchema(Schema.create(Schema.Type.LONG)))
                    .noDefault()
                    .requiredLong("count")
                    .requiredDouble("value")
                    .endRecord();

    private static final double[] SPECIAL = {
        0.0, -0.0, Double.NaN, Double.POSITIVE_INFINITY, Double.NEGATIVE_INFINITY, Double.MIN_VALUE
    };

    record Reading(String key, long at, long count, double value) {}

    /** The schema and the sort key, which both ways share. */
    abstract static class ReadingFormat {
        public Schema schema() {
            return SCHEMA;
        }

        public String key(Reading row) {
            return row.key();
        }
    }

    /** What the sink writes from. */
    static class Flat extends ReadingFormat implements FlatRowFormat<Reading> {
        @Override
        public void writeFields(Reading row, Fields out) {
            out.string(row.key());
            out.int64(row.at());
            out.int64(row.count());
            out.float64(row.value());
        }
    }

    /** The reference: records put together by field name, with no code of the flat path. */
    static final class ByName extends ReadingFormat implements RowFormat<Reading> {
        @Override
        public GenericRecord toRecord(Reading row) {
            GenericRecord r = new GenericData.Record(SCHEMA);
            r.put("key", row.key());
            r.put("at", row.at());
            r.put("count", row.count());
            r.put("value", row.value());
            return r;
        }
    }

    /** Each seed under each fingerprint scheme. */
    static Stream<Arguments> seeds() {
        return LongStream.rangeClosed(1, 100)
                .boxed()
                .flatMap(
                        seed ->
                                Stream.of(
                                        Arguments.of(seed, PartEncoding.FINGERPRINT_AVRO),
                                        Arguments.of(seed, PartEncoding.FINGERPRINT_TYPED)));
    }

    @ParameterizedTest(name = "seed {0}, fingerprint scheme {1}")
    @MethodSource("seeds")
    void fieldsGiveTheRowsAndTheFingerprintOfTheRecords(long seed, int scheme) throws Exception {
        List<Reading> rows = rows(new RandomInputs(seed));
        ByName reference = new ByName();
        PartEncoding.PartWriter<Reading> flat =
                new PartEncoding.PartWriter<>(PartKind.SNAPSHOT, new Flat(), 3, scheme);
        PartEncoding.PartWriter<Reading> records =
                new PartEncoding.PartWriter<>(PartKind.SNAPSHOT, reference, 3, scheme);
        List<GenericRecord> expected = new ArrayList<>();
        for (Reading row : rows) {
            flat.add(row);
            records.add(row);
            expected.add(reference.toRecord(row));
            assertThat(PartEncoding.canonicalBytes(new Flat(), row))
                    .as("seed %d, %s", seed, row)
                    .isEqualTo(PartEncoding.canonicalBytes(reference, row));
            assertThat(new Flat().toRecord(row)).isEqualTo(reference.toRecord(row));
        }
        byte[] file = flat.finish().toByteArray();
        records.finish();

        assertThat(flat.fingerprint()).as("seed %d", seed).isEqualTo(records.fingerprint());
        assertThat(PartEncoding.decode(file))
                .as("seed %d: read back with parquet-avro", seed)
                .containsExactlyElementsOf(expected);
        assertThat(PartEncoding.fingerprint(PartEncoding.decode(file), SCHEMA, 3, scheme))
                .as("seed %d: the audit's recomputation from the file", seed)
                .isEqualTo(flat.fingerprint());
    }

    @Test
    void aFormatThatWritesItsFieldsWronglyIsToldWhich() throws Exception {
        FlatRowFormat<Reading> swapped =
                new Flat() {
                    @Override
                    public void writeFields(Reading row, Fields out) {
                        out.string(row.key());
                        out.int64(row.at());
                        out.float64(row.value());
                        out.int64(row.count());
                    }
                };
        FlatRowFormat<Reading> short_ =
                new Flat() {
                    @Override
                    public void writeFields(Reading row, Fields out) {
                        out.string(row.key());
                    }
                };
        Reading row = new Reading("k", 0, 1, 2.5);
        assertThatThrownBy(() -> writeOne(swapped, row))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("wrote a DOUBLE as field 2");
        assertThatThrownBy(() -> writeOne(short_, row))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("wrote 1 of the 4 fields");
        assertThatThrownBy(() -> writeOne(new Flat(), new Reading(null, 0, 1, 2.5)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("field 'key' is a required string, got null");
    }

    @Test
    void aSchemaWithMoreThanRequiredStringsLongsAndDoublesIsRefused() {
        Schema nullable = SchemaBuilder.record("R").fields().optionalString("note").endRecord();
        assertThatThrownBy(() -> PartEncoding.requireFlat(nullable))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("field 'note'")
                .hasMessageContaining("implement RowFormat instead");
    }

    private static void writeOne(FlatRowFormat<Reading> format, Reading row) throws Exception {
        PartEncoding.PartWriter<Reading> writer =
                new PartEncoding.PartWriter<>(
                        PartKind.SNAPSHOT, format, 1, PartEncoding.FINGERPRINT_AVRO);
        writer.add(row);
        writer.finish();
    }

    /** 1-300 rows: keys of any text, any longs, doubles of any bits with the special ones. */
    private static List<Reading> rows(RandomInputs in) {
        List<Reading> rows = new ArrayList<>();
        for (int i = in.between(1, 300); i > 0; i--) {
            double value =
                    in.between(0, 4) == 0
                            ? SPECIAL[in.between(0, SPECIAL.length - 1)]
                            : Double.longBitsToDouble(in.anyLong());
            rows.add(new Reading(in.string(0, 16), in.anyLong(), in.anyLong(), value));
        }
        return rows;
    }
}
