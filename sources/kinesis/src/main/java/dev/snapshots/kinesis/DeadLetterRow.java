package dev.snapshots.kinesis;

import dev.snapshots.format.DeadLetterRows;
import dev.snapshots.format.RowFormat;
import dev.snapshots.job.source.RawRecord;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericRecord;
import org.apache.flink.annotation.Internal;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.StringData;
import org.apache.flink.table.types.logical.BigIntType;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.table.types.logical.VarCharType;

/**
 * A dead letter of a SQL table as a row of {@link DeadLetterRows#SCHEMA}: a {@code RowData}, so it
 * travels through the dead letters' assembling window with Flink's binary row serializer and
 * publishes exactly as the bundled job's dead letters do.
 */
@Internal
final class DeadLetterRow {
    static final String BAD_FORMAT = "bad-format";
    static final String MISSING_TIMESTAMP = "missing-timestamp";
    static final String BAD_AGGREGATE = "bad-aggregate";
    static final String LATE = "late";

    static final RowType TYPE =
            RowType.of(
                    new org.apache.flink.table.types.logical.LogicalType[] {
                        new VarCharType(false, VarCharType.MAX_LENGTH),
                        new VarCharType(false, VarCharType.MAX_LENGTH),
                        new VarCharType(false, VarCharType.MAX_LENGTH),
                        new BigIntType(false),
                        new VarCharType(false, VarCharType.MAX_LENGTH)
                    },
                    new String[] {"origin", "reason", "detail", "arrival_millis", "payload"});

    private DeadLetterRow() {}

    static RowData of(RawRecord raw, String reason, String detail) {
        return GenericRowData.of(
                StringData.fromString(raw.origin),
                StringData.fromString(reason),
                StringData.fromString(detail == null ? "" : detail),
                raw.arrivalMillis,
                StringData.fromString(
                        DeadLetterRows.preview(raw.payload, reason.equals(BAD_AGGREGATE))));
    }

    static String reason(RowData row) {
        return row.getString(1).toString();
    }

    /** Sorted and bucketed by origin: one source position, one row. */
    static final class Format implements RowFormat<RowData> {
        private static final long serialVersionUID = 1L;

        @Override
        public Schema schema() {
            return DeadLetterRows.SCHEMA;
        }

        @Override
        public String key(RowData row) {
            return row.getString(0).toString();
        }

        @Override
        public GenericRecord toRecord(RowData row) {
            GenericRecord r = new GenericData.Record(DeadLetterRows.SCHEMA);
            r.put("origin", row.getString(0).toString());
            r.put("reason", row.getString(1).toString());
            r.put("detail", row.getString(2).toString());
            r.put("arrival_millis", row.getLong(3));
            r.put("payload", row.getString(4).toString());
            return r;
        }
    }
}
