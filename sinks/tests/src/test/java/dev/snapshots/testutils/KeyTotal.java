package dev.snapshots.testutils;

import dev.snapshots.format.RowFormat;
import java.util.Objects;
import org.apache.avro.Schema;
import org.apache.avro.SchemaBuilder;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericRecord;

/** The per-key, per-window result the test pipelines publish. A Flink POJO. */
public class KeyTotal {
    public static final Schema SCHEMA =
            SchemaBuilder.record("KeyTotal")
                    .namespace("dev.snapshots.test")
                    .fields()
                    .requiredString("key")
                    .requiredLong("window_start")
                    .requiredLong("count")
                    .requiredLong("sum")
                    .endRecord();

    public String key;
    public long windowStart;
    public long count;
    public long sum;

    public KeyTotal() {}

    public KeyTotal(String key, long windowStart, long count, long sum) {
        this.key = key;
        this.windowStart = windowStart;
        this.count = count;
        this.sum = sum;
    }

    public static KeyTotal fromRecord(GenericRecord r) {
        return new KeyTotal(
                r.get("key").toString(),
                (Long) r.get("window_start"),
                (Long) r.get("count"),
                (Long) r.get("sum"));
    }

    /** How the sink encodes KeyTotal rows. */
    public static final class Format implements RowFormat<KeyTotal> {
        private static final long serialVersionUID = 1L;

        @Override
        public Schema schema() {
            return SCHEMA;
        }

        @Override
        public String key(KeyTotal row) {
            return row.key;
        }

        @Override
        public GenericRecord toRecord(KeyTotal row) {
            GenericRecord r = new GenericData.Record(SCHEMA);
            r.put("key", row.key);
            r.put("window_start", row.windowStart);
            r.put("count", row.count);
            r.put("sum", row.sum);
            return r;
        }
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof KeyTotal)) {
            return false;
        }
        KeyTotal t = (KeyTotal) o;
        return key.equals(t.key)
                && windowStart == t.windowStart
                && count == t.count
                && sum == t.sum;
    }

    @Override
    public int hashCode() {
        return Objects.hash(key, windowStart, count, sum);
    }

    @Override
    public String toString() {
        return key + "[" + windowStart + "] count=" + count + " sum=" + sum;
    }
}
