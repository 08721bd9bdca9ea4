package dev.snapshots.table;

import dev.snapshots.format.RowFormat;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.apache.avro.Schema;
import org.apache.avro.SchemaParseException;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericRecord;
import org.apache.flink.annotation.Internal;
import org.apache.flink.table.api.ValidationException;
import org.apache.flink.table.catalog.ResolvedSchema;
import org.apache.flink.table.catalog.UniqueConstraint;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.types.logical.DecimalType;
import org.apache.flink.table.types.logical.LocalZonedTimestampType;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.table.types.logical.TimestampType;

/**
 * A canonical-snapshots table's rows as parts hold them: every physical column, in the table's
 * order, as a field of the matching Parquet logical type (a nullable column as an optional one);
 * sorted and bucketed by the primary key's columns other than the window's.
 *
 * <p>The fingerprint and the order of rows with equal keys come from a row's Avro encoding, in
 * which a null is a union branch of its own: both stay canonical whatever the type, null included.
 */
@Internal
public final class TableRowFormat implements RowFormat<RowData> {
    private static final long serialVersionUID = 1L;

    public static final String WINDOW_START = "window_start";
    public static final String WINDOW_END = "window_end";

    private final Schema schema;
    private final ColumnSpec[] columns;
    private final ColumnSpec[] key;
    private final int windowStart;
    private final int windowEnd;

    private TableRowFormat(
            Schema schema, ColumnSpec[] columns, ColumnSpec[] key, int windowStart, int windowEnd) {
        this.schema = schema;
        this.columns = columns;
        this.key = key;
        this.windowStart = windowStart;
        this.windowEnd = windowEnd;
    }

    /**
     * @throws ValidationException if a column's type or name cannot be written, the rows carry no
     *     window, or the table has no primary key
     */
    public static TableRowFormat of(String table, ResolvedSchema resolved) {
        RowType rowType = (RowType) resolved.toPhysicalRowDataType().getLogicalType();
        List<String> names = rowType.getFieldNames();
        ColumnSpec[] columns = new ColumnSpec[names.size()];
        List<Schema.Field> fields = new ArrayList<>();
        for (int pos = 0; pos < columns.length; pos++) {
            columns[pos] = column(table, names.get(pos), pos, rowType.getTypeAt(pos));
            Schema value = columns[pos].valueSchema();
            fields.add(
                    new Schema.Field(
                            names.get(pos),
                            columns[pos].nullable()
                                    ? Schema.createUnion(Schema.create(Schema.Type.NULL), value)
                                    : value));
        }
        int windowStart = windowColumn(table, names, rowType, WINDOW_START);
        int windowEnd = windowColumn(table, names, rowType, WINDOW_END);
        List<String> primaryKey =
                resolved.getPrimaryKey()
                        .map(UniqueConstraint::getColumns)
                        .orElseThrow(
                                () ->
                                        new ValidationException(
                                                "table "
                                                        + table
                                                        + " has no primary key: declare the"
                                                        + " columns that identify a row within a"
                                                        + " window, e.g. PRIMARY KEY (window_start,"
                                                        + " window_end, customer) NOT ENFORCED;"
                                                        + " parts are sorted and bucketed by them"));
        ColumnSpec[] key =
                primaryKey.stream()
                        .filter(c -> !c.equals(WINDOW_START) && !c.equals(WINDOW_END))
                        .map(c -> columns[names.indexOf(c)])
                        .toArray(ColumnSpec[]::new);
        return new TableRowFormat(
                Schema.createRecord("TableRow", null, "dev.snapshots.table", false, fields),
                columns,
                key,
                windowStart,
                windowEnd);
    }

    private static ColumnSpec column(String table, String name, int pos, LogicalType type) {
        ColumnType columnType =
                ColumnType.of(type)
                        .orElseThrow(
                                () ->
                                        new ValidationException(
                                                "column "
                                                        + name
                                                        + " of table "
                                                        + table
                                                        + " is "
                                                        + type
                                                        + ": a part holds "
                                                        + ColumnType.SUPPORTED
                                                        + " (CAST it to one of them)"));
        return new ColumnSpec(
                avroName(table, name),
                pos,
                columnType,
                type.isNullable(),
                precision(type),
                type instanceof DecimalType d ? d.getScale() : 0,
                columnType.avro(name, type));
    }

    /** Avro's rule for a field name, which also makes it a Parquet column any reader can query. */
    private static String avroName(String table, String name) {
        try {
            return new Schema.Field(name, Schema.create(Schema.Type.NULL)).name();
        } catch (SchemaParseException e) {
            throw new ValidationException(
                    "column name '"
                            + name
                            + "' of table "
                            + table
                            + " cannot name a Parquet column readers can query: use letters, digits"
                            + " and '_', starting with a letter or '_' (rename it with AS)",
                    e);
        }
    }

    private static int precision(LogicalType type) {
        if (type instanceof DecimalType d) {
            return d.getPrecision();
        }
        if (type instanceof TimestampType t) {
            return t.getPrecision();
        }
        return type instanceof LocalZonedTimestampType t ? t.getPrecision() : 0;
    }

    private static int windowColumn(
            String table, List<String> names, RowType rowType, String name) {
        int pos = names.indexOf(name);
        Optional<ColumnType> type =
                pos < 0 ? Optional.empty() : ColumnType.of(rowType.getTypeAt(pos));
        if (type.isEmpty()
                || (type.get() != ColumnType.TIMESTAMP && type.get() != ColumnType.TIMESTAMP_LTZ)) {
            throw new ValidationException(
                    "table "
                            + table
                            + " needs columns window_start and window_end of type TIMESTAMP(3):"
                            + " each part is one window, and the rows say which, as a window"
                            + " table-valued function gives them (SELECT window_start, window_end,"
                            + " ... FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL '1' HOUR))"
                            + " GROUP BY window_start, window_end, ...); "
                            + (pos < 0
                                    ? "it has no " + name
                                    : name + " is " + rowType.getTypeAt(pos)));
        }
        return pos;
    }

    @Override
    public Schema schema() {
        return schema;
    }

    /**
     * The primary key's columns other than the window's, as text that sorts as their values do (see
     * {@link ColumnType}); a single string column is its own key.
     */
    @Override
    public String key(RowData row) {
        StringBuilder text = new StringBuilder();
        for (int i = 0; i < key.length; i++) {
            ColumnSpec column = key[i];
            if (row.isNullAt(column.pos())) {
                throw new IllegalArgumentException(
                        "primary key column " + column.name() + " is null in " + row);
            }
            column.type().appendKey(row, column.pos(), column, i == key.length - 1, text);
        }
        return text.toString();
    }

    @Override
    public GenericRecord toRecord(RowData row) {
        GenericData.Record record = new GenericData.Record(schema);
        for (ColumnSpec column : columns) {
            record.put(
                    column.pos(),
                    row.isNullAt(column.pos())
                            ? null
                            : column.type().value(row, column.pos(), column));
        }
        return record;
    }

    /** The position of {@code window_start} in the table's rows. */
    int windowStart() {
        return windowStart;
    }

    int windowEnd() {
        return windowEnd;
    }

    /** The window columns' precision, which reading them needs. */
    int windowPrecision() {
        return columns[windowStart].precision();
    }
}
