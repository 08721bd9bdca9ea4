package dev.snapshots.format;

import java.io.Serializable;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericRecord;
import org.apache.flink.annotation.PublicEvolving;

/**
 * How rows of type {@code T} become Parquet rows: the Avro schema of a part, a row's sort key and
 * its record. The sink sorts every part by {@link #key}, so a part's content never depends on the
 * order rows arrived in.
 */
@PublicEvolving
public interface RowFormat<T> extends Serializable {

    Schema schema();

    /** The row's key: parts are sorted by it, and it picks the row's bucket. */
    String key(T row);

    /** The row as a record of {@link #schema()}; must depend on the row alone. */
    GenericRecord toRecord(T row);
}
