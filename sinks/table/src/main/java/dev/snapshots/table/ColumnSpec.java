package dev.snapshots.table;

import java.io.Serializable;
import org.apache.avro.Schema;

/**
 * One column of a part: its position in the table's rows, its type and the Avro type of its
 * non-null values.
 *
 * @param precision a decimal's precision or a timestamp's, else 0
 * @param scale a decimal's scale, else 0
 */
record ColumnSpec(
        String name,
        int pos,
        ColumnType type,
        boolean nullable,
        int precision,
        int scale,
        Schema valueSchema)
        implements Serializable {}
