package dev.snapshots.format;

import java.io.Serializable;
import java.util.ArrayList;
import java.util.List;
import org.apache.avro.Schema;
import org.apache.avro.SchemaParseException;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericRecord;
import org.apache.flink.annotation.Internal;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.types.logical.DecimalType;
import org.apache.flink.table.types.logical.LocalZonedTimestampType;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.table.types.logical.TimestampType;

/**
 * A part's columns derived from a Flink {@link RowType}: every field, in the row's order, as a
 * field of the matching Parquet logical type (a nullable one as an optional field), and the key
 * columns rows are sorted and bucketed by. What the SQL connector and {@link PojoRowFormat} share:
 * both hand over their rows as {@link RowData}.
 *
 * <p>The fingerprint and the order of rows with equal keys come from a row's Avro encoding, in
 * which a null is a union branch of its own: both stay canonical whatever the type, null included.
 */
@Internal
public final class Columns implements Serializable {
    private static final long serialVersionUID = 1L;

    /**
     * Who the columns belong to, for messages: "{@code column} x of {@code owner} is ...".
     *
     * @param column what a column is called there ("column", "field")
     * @param owner e.g. "table orders", "class com.example.Total"
     * @param typeFix how to get a type a part holds, e.g. "CAST it to one of them"
     * @param nameFix how to get a name readers can query, e.g. "rename it with AS"
     */
    public record Owner(String column, String owner, String typeFix, String nameFix)
            implements Serializable {}

    private final Schema schema;
    private final ColumnSpec[] columns;
    private final ColumnSpec[] key;
    private final Owner owner;

    private Columns(Schema schema, ColumnSpec[] columns, ColumnSpec[] key, Owner owner) {
        this.schema = schema;
        this.columns = columns;
        this.key = key;
        this.owner = owner;
    }

    /**
     * @param recordName the Avro record's name (readers never see it; the fingerprint does)
     * @throws IllegalArgumentException naming the first column whose type or name a part cannot
     *     hold
     */
    public static Columns of(String recordName, String namespace, RowType rowType, Owner owner) {
        List<String> names = rowType.getFieldNames();
        ColumnSpec[] columns = new ColumnSpec[names.size()];
        List<Schema.Field> fields = new ArrayList<>();
        for (int pos = 0; pos < columns.length; pos++) {
            columns[pos] = column(owner, names.get(pos), pos, rowType.getTypeAt(pos));
            Schema value = columns[pos].valueSchema();
            fields.add(
                    new Schema.Field(
                            names.get(pos),
                            columns[pos].nullable()
                                    ? Schema.createUnion(Schema.create(Schema.Type.NULL), value)
                                    : value));
        }
        return new Columns(
                Schema.createRecord(recordName, null, namespace, false, fields),
                columns,
                new ColumnSpec[0],
                owner);
    }

    /** These columns, sorted and bucketed by {@code keyColumns}, in that order. */
    public Columns keyedBy(List<String> keyColumns) {
        ColumnSpec[] keyed = new ColumnSpec[keyColumns.size()];
        for (int i = 0; i < keyed.length; i++) {
            keyed[i] = column(keyColumns.get(i));
        }
        return new Columns(schema, columns, keyed, owner);
    }

    private static ColumnSpec column(Owner owner, String name, int pos, LogicalType type) {
        ColumnType columnType =
                ColumnType.of(type)
                        .orElseThrow(
                                () ->
                                        new IllegalArgumentException(
                                                owner.column()
                                                        + " "
                                                        + name
                                                        + " of "
                                                        + owner.owner()
                                                        + " is "
                                                        + type
                                                        + ": a part holds "
                                                        + ColumnType.SUPPORTED
                                                        + " ("
                                                        + owner.typeFix()
                                                        + ")"));
        return new ColumnSpec(
                avroName(owner, name),
                pos,
                columnType,
                type.isNullable(),
                precision(type),
                type instanceof DecimalType d ? d.getScale() : 0,
                columnType.avro(name, type));
    }

    /** Avro's rule for a field name, which also makes it a Parquet column any reader can query. */
    private static String avroName(Owner owner, String name) {
        try {
            return new Schema.Field(name, Schema.create(Schema.Type.NULL)).name();
        } catch (SchemaParseException e) {
            throw new IllegalArgumentException(
                    owner.column()
                            + " name '"
                            + name
                            + "' of "
                            + owner.owner()
                            + " cannot name a Parquet column readers can query: use letters, digits"
                            + " and '_', starting with a letter or '_' ("
                            + owner.nameFix()
                            + ")",
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

    public Schema schema() {
        return schema;
    }

    /** The column named {@code name}. */
    public ColumnSpec column(String name) {
        for (ColumnSpec column : columns) {
            if (column.name().equals(name)) {
                return column;
            }
        }
        throw new IllegalArgumentException(
                owner.owner() + " has no " + owner.column() + " " + name);
    }

    public ColumnSpec column(int pos) {
        return columns[pos];
    }

    public int size() {
        return columns.length;
    }

    /** Every column, in the row's order. */
    public List<ColumnSpec> columns() {
        return List.of(columns);
    }

    /** The key columns, in key order. */
    public List<ColumnSpec> key() {
        return List.of(key);
    }

    /**
     * The key columns' values as text that sorts as they do (see {@link ColumnType}); a single
     * string column is its own key.
     *
     * @throws IllegalArgumentException if a key column is null
     */
    public String key(RowData row) {
        StringBuilder text = new StringBuilder();
        for (int i = 0; i < key.length; i++) {
            ColumnSpec column = key[i];
            if (row.isNullAt(column.pos())) {
                throw new IllegalArgumentException(
                        "key " + owner.column() + " " + column.name() + " is null in " + row);
            }
            column.type().appendKey(row, column.pos(), column, i == key.length - 1, text);
        }
        return text.toString();
    }

    /**
     * The row as a record of {@link #schema()}.
     *
     * @throws IllegalArgumentException if a column that is not nullable is null
     */
    public GenericRecord toRecord(RowData row) {
        GenericData.Record record = new GenericData.Record(schema);
        for (ColumnSpec column : columns) {
            if (row.isNullAt(column.pos())) {
                if (!column.nullable()) {
                    throw new IllegalArgumentException(
                            owner.column()
                                    + " "
                                    + column.name()
                                    + " of "
                                    + owner.owner()
                                    + " is NOT NULL but null in "
                                    + row);
                }
            } else {
                record.put(column.pos(), column.type().value(row, column.pos(), column));
            }
        }
        return record;
    }
}
