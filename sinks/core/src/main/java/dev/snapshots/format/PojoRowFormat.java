package dev.snapshots.format;

import java.util.List;
import java.util.Set;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericRecord;
import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.api.java.functions.KeySelector;

/**
 * The row format of a Flink POJO, with no Avro schema to write: every field a column of the Parquet
 * logical type the SQL connector writes for the same SQL type, and the key named once, here.
 *
 * <pre>{@code
 * PojoRowFormat<Total> format = PojoRowFormat.of(Total.class, "customer");
 * sink.writeWindows(orders.keyBy(format.keySelector(Order.class)).window(...).aggregate(...));
 * }</pre>
 *
 * <p>Fields, by Java class: {@code String} (STRING), {@code boolean} (BOOLEAN), {@code int} (INT),
 * {@code long} (BIGINT), {@code double} (DOUBLE), their boxes (nullable), {@code BigDecimal} with
 * {@code @DataTypeHint("DECIMAL(p, s)")} (a value with more digits than that is refused, never
 * rounded), {@code LocalDate} (DATE), {@code LocalDateTime} (TIMESTAMP(3)) and {@code Instant}
 * (TIMESTAMP_LTZ(3)); sub-millisecond digits are dropped. A primitive is NOT NULL; a {@link
 * org.apache.flink.table.annotation.DataTypeHint} may say so of any other ({@code "STRING NOT
 * NULL"}). Columns come in field-name order, as Flink's {@code PojoTypeInfo} orders them.
 *
 * <p>Why the key selector: with key-group buckets a row's bucket is the key group of its key, so
 * the window must be keyed by exactly that text. {@link #keySelector()} and {@link
 * #keySelector(Class)} compute it from the same declaration, and {@code writeWindows} refuses a
 * window keyed by anything else.
 */
@PublicEvolving
public final class PojoRowFormat<T> implements RowFormat<T> {
    private static final long serialVersionUID = 1L;

    private final PojoFields<T> fields;
    private final List<String> keyFields;

    private PojoRowFormat(PojoFields<T> fields, List<String> keyFields) {
        this.fields = fields;
        this.keyFields = keyFields;
    }

    /**
     * @param keyFields the fields that identify a row within a window, in sort order
     * @throws IllegalArgumentException if {@code type} is not a Flink POJO, a field's type cannot
     *     be a column (naming the field), or a key field is missing
     */
    public static <T> PojoRowFormat<T> of(Class<T> type, String... keyFields) {
        List<String> key = List.of(keyFields);
        return new PojoRowFormat<>(PojoFields.of(type, name -> true, key), key);
    }

    @Override
    public Schema schema() {
        return fields.columns().schema();
    }

    /** The key fields as text that sorts as their values do; a single string field is itself. */
    @Override
    public String key(T row) {
        return fields.getKey(row);
    }

    @Override
    public GenericRecord toRecord(T row) {
        return fields.toRecord(row);
    }

    /** The selector to key the window by when it aggregates rows of this type. */
    public KeySelector<T, String> keySelector() {
        return fields;
    }

    /**
     * The selector to key the window by when its input is another POJO carrying the key fields (the
     * events the window aggregates into rows of this format): the same key text for the same
     * values.
     *
     * @throws IllegalArgumentException if {@code eventType} lacks a key field or holds one of
     *     another type
     */
    public <E> KeySelector<E, String> keySelector(Class<E> eventType) {
        PojoFields<E> events = PojoFields.of(eventType, Set.copyOf(keyFields)::contains, keyFields);
        if (!events.keySignature().equals(fields.keySignature())) {
            throw new IllegalArgumentException(
                    "the key fields of "
                            + eventType.getName()
                            + " are "
                            + events.keySignature()
                            + ", not "
                            + fields.keySignature()
                            + " as in the rows: give them the same types");
        }
        return events;
    }

    /**
     * Refuses a window keyed by anything but this format's key selectors.
     *
     * @throws IllegalArgumentException naming the key fields to key by
     */
    public void requireKeyedBy(KeySelector<?, ?> selector) {
        if (!(selector instanceof PojoFields<?> keyed)
                || !keyed.keySignature().equals(fields.keySignature())) {
            throw new IllegalArgumentException(
                    "the window is keyed by "
                            + selector
                            + ", not by the format's key fields "
                            + keyFields
                            + ": a row's bucket is the key group of its key, so key the window"
                            + " by format.keySelector() (rows) or format.keySelector(Event.class)");
        }
    }
}
