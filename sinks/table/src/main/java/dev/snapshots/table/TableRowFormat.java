package dev.snapshots.table;

import dev.snapshots.format.ColumnType;
import dev.snapshots.format.Columns;
import dev.snapshots.format.RowFormat;
import dev.snapshots.sink.RowWindow;
import java.util.List;
import java.util.Optional;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericRecord;
import org.apache.flink.annotation.Internal;
import org.apache.flink.table.api.ValidationException;
import org.apache.flink.table.catalog.ResolvedSchema;
import org.apache.flink.table.catalog.UniqueConstraint;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.types.logical.RowType;

/**
 * A canonical-snapshots table's rows as parts hold them: every physical column, in the table's
 * order, as a field of the matching Parquet logical type (a nullable column as an optional one);
 * sorted and bucketed by the primary key's columns other than the window's.
 *
 * <p>The columns are {@link Columns}, as {@link dev.snapshots.format.PojoRowFormat}'s are: the same
 * SQL type is the same Parquet type, key text and fingerprint on both paths.
 */
@Internal
public final class TableRowFormat implements RowFormat<RowData>, RowWindow<RowData> {
    private static final long serialVersionUID = 1L;

    public static final String WINDOW_START = "window_start";
    public static final String WINDOW_END = "window_end";

    private final Columns columns;
    private final int windowStart;
    private final int windowEnd;

    private TableRowFormat(Columns columns, int windowStart, int windowEnd) {
        this.columns = columns;
        this.windowStart = windowStart;
        this.windowEnd = windowEnd;
    }

    /**
     * @throws ValidationException if a column's type or name cannot be written, the rows carry no
     *     window, or the table has no primary key
     */
    public static TableRowFormat of(String table, ResolvedSchema resolved) {
        RowType rowType = (RowType) resolved.toPhysicalRowDataType().getLogicalType();
        Columns columns;
        try {
            columns =
                    Columns.of(
                            "TableRow",
                            "dev.snapshots.table",
                            rowType,
                            new Columns.Owner(
                                    "column",
                                    "table " + table,
                                    "CAST it to one of them",
                                    "rename it with AS"));
        } catch (IllegalArgumentException e) {
            throw new ValidationException(e.getMessage(), e);
        }
        List<String> names = rowType.getFieldNames();
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
        return new TableRowFormat(
                columns.keyedBy(
                        primaryKey.stream()
                                .filter(c -> !c.equals(WINDOW_START) && !c.equals(WINDOW_END))
                                .toList()),
                windowStart,
                windowEnd);
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
        return columns.schema();
    }

    /**
     * The primary key's columns other than the window's, as text that sorts as their values do (see
     * {@link ColumnType}); a single string column is its own key.
     */
    @Override
    public String key(RowData row) {
        return columns.key(row);
    }

    @Override
    public GenericRecord toRecord(RowData row) {
        return columns.toRecord(row);
    }

    @Override
    public long startMillis(RowData row) {
        return row.getTimestamp(windowStart, windowPrecision()).getMillisecond();
    }

    @Override
    public long endMillis(RowData row) {
        return row.getTimestamp(windowEnd, windowPrecision()).getMillisecond();
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
        return columns.column(windowStart).precision();
    }
}
