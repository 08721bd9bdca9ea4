package dev.snapshots.job;

import dev.snapshots.format.DeadLetterRows;
import dev.snapshots.format.RowFormat;
import dev.snapshots.job.ingest.Rejection;
import dev.snapshots.job.source.RawRecord;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericRecord;
import org.apache.flink.annotation.Internal;

/** A record the job could not use, with why and where it came from. A Flink POJO. */
@Internal
public class DeadLetter {
    public static final Schema SCHEMA = DeadLetterRows.SCHEMA;

    public String origin;
    public String reason;
    public String detail;
    public long arrivalMillis;
    public String payload;

    public DeadLetter() {}

    public DeadLetter(
            String origin, Rejection reason, String detail, long arrivalMillis, String payload) {
        this.origin = origin;
        this.reason = reason.code();
        this.detail = detail == null ? "" : detail;
        this.arrivalMillis = arrivalMillis;
        this.payload = payload;
    }

    public static DeadLetter of(RawRecord raw, Rejection reason, String detail) {
        return new DeadLetter(
                raw.origin, reason, detail, raw.arrivalMillis, preview(raw.payload, reason));
    }

    static String preview(byte[] payload, Rejection reason) {
        return DeadLetterRows.preview(
                payload, reason == Rejection.INVALID_UTF8 || reason == Rejection.BAD_AGGREGATE);
    }

    /** Dead letters are sorted and bucketed by origin: one source position, one row. */
    public static final class Format implements RowFormat<DeadLetter> {
        private static final long serialVersionUID = 1L;

        @Override
        public Schema schema() {
            return SCHEMA;
        }

        @Override
        public String key(DeadLetter row) {
            return row.origin;
        }

        @Override
        public GenericRecord toRecord(DeadLetter d) {
            GenericRecord r = new GenericData.Record(SCHEMA);
            r.put("origin", d.origin);
            r.put("reason", d.reason);
            r.put("detail", d.detail);
            r.put("arrival_millis", d.arrivalMillis);
            r.put("payload", d.payload);
            return r;
        }
    }
}
