package dev.snapshots.format;

import java.lang.reflect.Field;
import java.math.BigDecimal;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;
import org.apache.avro.generic.GenericRecord;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.java.functions.KeySelector;
import org.apache.flink.api.java.typeutils.PojoField;
import org.apache.flink.api.java.typeutils.PojoTypeInfo;
import org.apache.flink.api.java.typeutils.TypeExtractor;
import org.apache.flink.table.annotation.DataTypeHint;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.types.logical.BigIntType;
import org.apache.flink.table.types.logical.BooleanType;
import org.apache.flink.table.types.logical.DateType;
import org.apache.flink.table.types.logical.DecimalType;
import org.apache.flink.table.types.logical.DoubleType;
import org.apache.flink.table.types.logical.IntType;
import org.apache.flink.table.types.logical.LocalZonedTimestampType;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.table.types.logical.TimestampType;
import org.apache.flink.table.types.logical.VarCharType;
import org.apache.flink.table.types.logical.utils.LogicalTypeParser;

/**
 * Fields of a Flink POJO as {@link Columns}, in the order Flink's {@link PojoTypeInfo} gives them
 * (by name): unlike reflection's order, it cannot change between JVMs, and the schema is part of a
 * job version's identity. Its {@link #getKey key} is the text of the key columns, so as the key
 * selector of a {@code keyBy} it puts a row in the key group its bucket is made of.
 */
final class PojoFields<T> implements KeySelector<T, String> {
    private static final long serialVersionUID = 1L;

    static final String JAVA_CLASSES =
            "String, boolean, int, long, double (or their boxes), BigDecimal with"
                    + " @DataTypeHint(\"DECIMAL(p, s)\"), LocalDate, LocalDateTime and Instant";

    /** The column type of each Java class, and its SQL type unless a hint says otherwise. */
    private static final Map<Class<?>, LogicalType> TYPES =
            Map.ofEntries(
                    Map.entry(String.class, new VarCharType(VarCharType.MAX_LENGTH)),
                    Map.entry(boolean.class, new BooleanType(false)),
                    Map.entry(Boolean.class, new BooleanType()),
                    Map.entry(int.class, new IntType(false)),
                    Map.entry(Integer.class, new IntType()),
                    Map.entry(long.class, new BigIntType(false)),
                    Map.entry(Long.class, new BigIntType()),
                    Map.entry(double.class, new DoubleType(false)),
                    Map.entry(Double.class, new DoubleType()),
                    Map.entry(LocalDate.class, new DateType()),
                    Map.entry(LocalDateTime.class, new TimestampType(3)),
                    Map.entry(Instant.class, new LocalZonedTimestampType(3)));

    private final Class<T> type;
    private final List<String> names;
    private final Columns columns;
    // Reflection's fields are not serializable: found again where the job runs.
    private transient Field[] fields;
    private transient ColumnSpec[] all;
    private transient ColumnSpec[] key;

    private PojoFields(Class<T> type, List<String> names, Columns columns) {
        this.type = type;
        this.names = names;
        this.columns = columns;
    }

    /**
     * The fields of {@code type} that {@code which} picks, keyed by {@code key}.
     *
     * @throws IllegalArgumentException if the class is not a Flink POJO, or a field's type or name
     *     cannot be a column, or a key field is missing
     */
    static <T> PojoFields<T> of(Class<T> type, Predicate<String> which, List<String> key) {
        if (key.isEmpty()) {
            throw new IllegalArgumentException(
                    "name the key fields of "
                            + type.getName()
                            + ": they sort a part's rows, pick their bucket, and key the window");
        }
        List<String> names = new ArrayList<>();
        List<RowType.RowField> rowFields = new ArrayList<>();
        for (Field field : fields(type)) {
            if (which.test(field.getName())) {
                names.add(field.getName());
                rowFields.add(new RowType.RowField(field.getName(), logicalType(type, field)));
            }
        }
        Columns columns =
                Columns.of(
                                "PojoRow",
                                "dev.snapshots.format",
                                new RowType(false, rowFields),
                                new Columns.Owner(
                                        "field",
                                        "class " + type.getName(),
                                        "from the Java classes " + JAVA_CLASSES,
                                        "rename the field"))
                        .keyedBy(key);
        return new PojoFields<>(type, List.copyOf(names), columns);
    }

    private static Field[] fields(Class<?> type) {
        TypeInformation<?> info = TypeExtractor.createTypeInfo(type);
        if (!(info instanceof PojoTypeInfo<?> pojo)) {
            throw new IllegalArgumentException(
                    type.getName()
                            + " is not a Flink POJO ("
                            + info
                            + "): make it a public class with a public no-argument constructor"
                            + " whose fields are public or have getters and setters");
        }
        Field[] fields = new Field[pojo.getArity()];
        for (int i = 0; i < fields.length; i++) {
            PojoField field = pojo.getPojoFieldAt(i);
            fields[i] = field.getField();
            // As Flink's PojoSerializer does: a private field with a getter and setter.
            fields[i].setAccessible(true);
        }
        return fields;
    }

    /** The field's SQL type: its class's, or its {@link DataTypeHint}'s of the same column type. */
    private static LogicalType logicalType(Class<?> owner, Field field) {
        Class<?> javaClass = field.getType();
        LogicalType byClass =
                javaClass == BigDecimal.class ? new DecimalType() : TYPES.get(javaClass);
        DataTypeHint hint = field.getAnnotation(DataTypeHint.class);
        LogicalType declared = byClass;
        if (hint != null && !hint.value().isEmpty()) {
            try {
                declared = LogicalTypeParser.parse(hint.value(), owner.getClassLoader());
            } catch (RuntimeException e) {
                throw new IllegalArgumentException(
                        "field "
                                + field.getName()
                                + " of class "
                                + owner.getName()
                                + " has a @DataTypeHint that is no SQL type: "
                                + e.getMessage(),
                        e);
            }
        }
        if (byClass == null
                || ColumnType.of(declared).isEmpty()
                || ColumnType.of(declared).get() != ColumnType.of(byClass).get()
                || (javaClass == BigDecimal.class && declared == byClass)) {
            throw new IllegalArgumentException(
                    "field "
                            + field.getName()
                            + " of class "
                            + owner.getName()
                            + " is "
                            + field.getGenericType().getTypeName()
                            + (declared == byClass ? "" : " declared " + declared)
                            + ": a part holds "
                            + ColumnType.SUPPORTED
                            + ", from the Java classes "
                            + JAVA_CLASSES);
        }
        return javaClass.isPrimitive() ? declared.copy(false) : declared;
    }

    Columns columns() {
        return columns;
    }

    /**
     * The key columns' names and types, which make a key's text: two selectors of the same
     * signature give equal values the same key.
     */
    List<String> keySignature() {
        return columns.key().stream()
                .map(c -> c.name() + " " + c.type() + "(" + c.precision() + ", " + c.scale() + ")")
                .toList();
    }

    @Override
    public String toString() {
        return "the key " + keySignature() + " of " + type.getName();
    }

    @Override
    public String getKey(T row) {
        return columns.key(row(row, true));
    }

    GenericRecord toRecord(T row) {
        return columns.toRecord(row(row, false));
    }

    /** The row's fields (only the key's, if {@code keyOnly}) as Flink's internal values. */
    private RowData row(T pojo, boolean keyOnly) {
        if (fields == null) {
            fields = new Field[names.size()];
            for (Field field : fields(type)) {
                int pos = names.indexOf(field.getName());
                if (pos >= 0) {
                    fields[pos] = field;
                }
            }
            all = columns.columns().toArray(ColumnSpec[]::new);
            key = columns.key().toArray(ColumnSpec[]::new);
        }
        GenericRowData row = new GenericRowData(fields.length);
        for (ColumnSpec column : keyOnly ? key : all) {
            Object value;
            try {
                value = fields[column.pos()].get(pojo);
            } catch (IllegalAccessException e) {
                throw new IllegalStateException("cannot read " + fields[column.pos()], e);
            }
            try {
                row.setField(
                        column.pos(), value == null ? null : column.type().internal(value, column));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException(
                        "class " + type.getName() + ": " + e.getMessage(), e);
            }
        }
        return row;
    }
}
