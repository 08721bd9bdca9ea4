package dev.snapshots.format;

import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericRecord;
import org.apache.flink.annotation.PublicEvolving;

/**
 * A {@link RowFormat} whose schema is a flat record of required strings, longs (timestamps
 * included) and doubles, and which hands over a row's fields one by one instead of as a record.
 *
 * <p>Why: the sink then writes Parquet and the fingerprint straight from the fields, with no Avro
 * record per row and no walk over the schema per field. The content is the same either way: the
 * record a reader gets back, and the fingerprint, equal those of {@link #toRecord}, which is built
 * from the same fields.
 */
@PublicEvolving
public interface FlatRowFormat<T> extends RowFormat<T> {

    /** Writes every field of the row, in the schema's order, each with its type's method. */
    void writeFields(T row, Fields out);

    /** The fields as a record: what a reader of the part gets back. */
    @Override
    default GenericRecord toRecord(T row) {
        GenericRecord record = new GenericData.Record(schema());
        writeFields(
                row,
                new Fields() {
                    private int field;

                    @Override
                    public void string(String value) {
                        record.put(field++, value);
                    }

                    @Override
                    public void int64(long value) {
                        record.put(field++, value);
                    }

                    @Override
                    public void float64(double value) {
                        record.put(field++, value);
                    }
                });
        return record;
    }

    /** Where a row's fields go, in the schema's order. */
    interface Fields {
        /** A required {@code string} field. */
        void string(String value);

        /** A required {@code long} field, or a timestamp held in one. */
        void int64(long value);

        /** A required {@code double} field. */
        void float64(double value);
    }
}
