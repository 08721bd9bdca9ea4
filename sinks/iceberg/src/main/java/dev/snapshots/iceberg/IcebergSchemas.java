package dev.snapshots.iceberg;

import java.util.ArrayList;
import java.util.List;
import org.apache.avro.LogicalType;
import org.apache.avro.LogicalTypes;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;

/**
 * The Iceberg table of a sink's rows: its columns from the parts' Avro schema, partitioned by
 * {@code window_start} itself (identity), a partition per window.
 *
 * <p>Why a window, not a day (the store's {@code date=} directories): the parts hold timestamps in
 * milliseconds, and Iceberg's Parquet reader (Spark's, Flink's, the generic one, up to 1.11 at
 * least: apache/iceberg#18173) compares a row group's {@code TIMESTAMP(MILLIS)} statistics with its
 * filter's microseconds, so a filter on the column reaching the reader drops every row group:
 * {@code WHERE window_start = ...} read nothing under a day partition. With the window as the
 * partition, a filter on {@code window_start} is decided by the partition values when the scan is
 * planned and never reaches the reader (a filter on another timestamp column of the rows still
 * does: the README says so). A partition holds B files; Iceberg's partitions are metadata only, so
 * their number costs no directories.
 */
final class IcebergSchemas {
    /** The column every table is partitioned by: the start of a row's window. */
    static final String WINDOW_START = "window_start";

    private IcebergSchemas() {}

    /**
     * The table's schema: a column per field, in order, with ids from 1, required unless the field
     * is a union with null.
     *
     * @throws IllegalArgumentException for a field of a type parts never hold, or rows without a
     *     {@code window_start} timestamp
     */
    static Schema of(org.apache.avro.Schema rows) {
        List<Types.NestedField> columns = new ArrayList<>();
        int id = 1;
        for (org.apache.avro.Schema.Field field : rows.getFields()) {
            org.apache.avro.Schema value = field.schema();
            boolean optional = false;
            if (value.getType() == org.apache.avro.Schema.Type.UNION) {
                optional =
                        value.getTypes().stream()
                                .anyMatch(t -> t.getType() == org.apache.avro.Schema.Type.NULL);
                value =
                        value.getTypes().stream()
                                .filter(t -> t.getType() != org.apache.avro.Schema.Type.NULL)
                                .findFirst()
                                .orElseThrow();
            }
            Type type = type(field.name(), value);
            columns.add(
                    optional
                            ? Types.NestedField.optional(id++, field.name(), type)
                            : Types.NestedField.required(id++, field.name(), type));
        }
        Schema schema = new Schema(columns);
        Types.NestedField window = schema.findField(WINDOW_START);
        if (window == null || window.type().typeId() != Type.TypeID.TIMESTAMP) {
            throw new IllegalArgumentException(
                    "an Iceberg table needs the rows' window start as a timestamp column named "
                            + WINDOW_START
                            + " (what it is partitioned and deduplicated by); the rows have "
                            + rows.getFields().stream()
                                    .map(f -> f.name() + " " + f.schema())
                                    .toList());
        }
        return schema;
    }

    static PartitionSpec spec(Schema schema) {
        return PartitionSpec.builderFor(schema).identity(WINDOW_START).build();
    }

    private static Type type(String column, org.apache.avro.Schema value) {
        LogicalType logical = value.getLogicalType();
        if (logical instanceof LogicalTypes.Decimal d) {
            return Types.DecimalType.of(d.getPrecision(), d.getScale());
        } else if (logical instanceof LogicalTypes.Date) {
            return Types.DateType.get();
        } else if (logical instanceof LogicalTypes.TimestampMillis) {
            return Types.TimestampType.withZone();
        } else if (logical instanceof LogicalTypes.LocalTimestampMillis) {
            return Types.TimestampType.withoutZone();
        }
        return switch (value.getType()) {
            case STRING -> Types.StringType.get();
            case BOOLEAN -> Types.BooleanType.get();
            case INT -> Types.IntegerType.get();
            case LONG -> Types.LongType.get();
            case FLOAT -> Types.FloatType.get();
            case DOUBLE -> Types.DoubleType.get();
            default ->
                    throw new IllegalArgumentException(
                            "column " + column + " is " + value + ", which no part holds");
        };
    }
}
