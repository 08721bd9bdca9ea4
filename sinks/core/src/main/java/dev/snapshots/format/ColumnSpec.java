package dev.snapshots.format;

import java.io.Serializable;
import org.apache.avro.Schema;
import org.apache.flink.annotation.Internal;

/**
 * One column of a part: its position in the rows, its type and the Avro type of its non-null
 * values.
 *
 * @param precision a decimal's precision or a timestamp's, else 0
 * @param scale a decimal's scale, else 0
 */
@Internal
public record ColumnSpec(
        String name,
        int pos,
        ColumnType type,
        boolean nullable,
        int precision,
        int scale,
        Schema valueSchema)
        implements Serializable {}
