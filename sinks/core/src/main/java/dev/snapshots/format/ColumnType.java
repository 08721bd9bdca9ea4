package dev.snapshots.format;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.Locale;
import java.util.Optional;
import org.apache.avro.LogicalTypes;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericData;
import org.apache.avro.util.Utf8;
import org.apache.flink.annotation.Internal;
import org.apache.flink.table.data.DecimalData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.StringData;
import org.apache.flink.table.data.TimestampData;
import org.apache.flink.table.types.logical.DecimalType;
import org.apache.flink.table.types.logical.LocalZonedTimestampType;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.TimestampType;

/**
 * The SQL types a part can hold, each with its Avro type (which parquet-avro turns into the
 * matching Parquet logical type), its value in a record, and its text in a row's key.
 *
 * <p>Key texts sort as the values do ({@link String#compareTo}), so a part's rows come out in
 * primary-key order: numbers as fixed-width hex with the sign flipped, decimals as a sign digit and
 * the unscaled value's digits (nines' complement below zero), strings as they are.
 *
 * <p>Shared by the SQL connector's rows ({@code RowData}) and {@link PojoRowFormat}, which hands
 * its fields over as the same internal values, so both write a type the same way.
 */
@Internal
public enum ColumnType {
    STRING,
    BOOLEAN,
    INT,
    BIGINT,
    DOUBLE,
    DECIMAL,
    DATE,
    /** {@code TIMESTAMP(3)}: a date and time without a zone, Parquet's local timestamp. */
    TIMESTAMP,
    /** {@code TIMESTAMP_LTZ(3)}: an instant, Parquet's timestamp adjusted to UTC. */
    TIMESTAMP_LTZ;

    public static final String SUPPORTED =
            "STRING, BOOLEAN, INT, BIGINT, DOUBLE, DECIMAL(p, s), DATE, TIMESTAMP(3) and"
                    + " TIMESTAMP_LTZ(3)";

    private static final HexFormat HEX = HexFormat.of();

    /** The type of a SQL column, if a part can hold it. */
    public static Optional<ColumnType> of(LogicalType type) {
        return Optional.ofNullable(
                switch (type.getTypeRoot()) {
                    case CHAR, VARCHAR -> STRING;
                    case BOOLEAN -> BOOLEAN;
                    case INTEGER -> INT;
                    case BIGINT -> BIGINT;
                    case DOUBLE -> DOUBLE;
                    case DECIMAL -> DECIMAL;
                    case DATE -> DATE;
                    case TIMESTAMP_WITHOUT_TIME_ZONE ->
                            ((TimestampType) type).getPrecision() <= 3 ? TIMESTAMP : null;
                    case TIMESTAMP_WITH_LOCAL_TIME_ZONE ->
                            ((LocalZonedTimestampType) type).getPrecision() <= 3
                                    ? TIMESTAMP_LTZ
                                    : null;
                    default -> null;
                });
    }

    /**
     * The Avro type of a non-null value of {@code type}; a decimal is a fixed of the fewest bytes
     * its precision needs, named after its column (named types must be unique in a schema).
     */
    public Schema avro(String column, LogicalType type) {
        return switch (this) {
            case STRING -> Schema.create(Schema.Type.STRING);
            case BOOLEAN -> Schema.create(Schema.Type.BOOLEAN);
            case INT -> Schema.create(Schema.Type.INT);
            case BIGINT -> Schema.create(Schema.Type.LONG);
            case DOUBLE -> Schema.create(Schema.Type.DOUBLE);
            case DECIMAL -> {
                DecimalType decimal = (DecimalType) type;
                yield LogicalTypes.decimal(decimal.getPrecision(), decimal.getScale())
                        .addToSchema(
                                Schema.createFixed(
                                        column + "_decimal",
                                        null,
                                        null,
                                        fixedSize(decimal.getPrecision())));
            }
            case DATE -> LogicalTypes.date().addToSchema(Schema.create(Schema.Type.INT));
            case TIMESTAMP ->
                    LogicalTypes.localTimestampMillis()
                            .addToSchema(Schema.create(Schema.Type.LONG));
            case TIMESTAMP_LTZ ->
                    LogicalTypes.timestampMillis().addToSchema(Schema.create(Schema.Type.LONG));
        };
    }

    /**
     * A Java value of this type as Flink's internal data holds it ({@code RowData}'s field): {@code
     * String}, {@code Boolean}, {@code Integer}, {@code Long}, {@code Double}, {@code BigDecimal}
     * (no more digits than the column keeps: never rounded), {@code LocalDate}, {@code
     * LocalDateTime} and {@code Instant} (milliseconds kept, as {@code TIMESTAMP(3)}).
     *
     * @throws IllegalArgumentException if the value is of another class, or a decimal does not fit
     */
    public Object internal(Object value, ColumnSpec column) {
        Object internal =
                switch (this) {
                    case STRING -> value instanceof String s ? StringData.fromString(s) : null;
                    case BOOLEAN -> value instanceof Boolean ? value : null;
                    case INT -> value instanceof Integer ? value : null;
                    case BIGINT -> value instanceof Long ? value : null;
                    case DOUBLE -> value instanceof Double ? value : null;
                    case DECIMAL -> value instanceof BigDecimal d ? decimal(d, column) : null;
                    case DATE -> value instanceof LocalDate d ? (int) d.toEpochDay() : null;
                    case TIMESTAMP ->
                            value instanceof LocalDateTime t
                                    ? TimestampData.fromLocalDateTime(t)
                                    : null;
                    case TIMESTAMP_LTZ ->
                            value instanceof Instant t ? TimestampData.fromInstant(t) : null;
                };
        if (internal == null) {
            throw new IllegalArgumentException(
                    column.name() + " holds a " + value.getClass().getName() + ", not a " + this);
        }
        return internal;
    }

    private static DecimalData decimal(BigDecimal value, ColumnSpec column) {
        DecimalData decimal;
        try {
            // setScale without rounding: a value with more digits than the column keeps is refused.
            decimal =
                    DecimalData.fromBigDecimal(
                            value.setScale(column.scale()), column.precision(), column.scale());
        } catch (ArithmeticException e) {
            decimal = null;
        }
        if (decimal == null) {
            throw new IllegalArgumentException(
                    String.format(
                            Locale.ROOT,
                            "%s holds %s, which DECIMAL(%d, %d) cannot keep without rounding",
                            column.name(),
                            value.toPlainString(),
                            column.precision(),
                            column.scale()));
        }
        return decimal;
    }

    /** The bytes of the two's complement of the largest unscaled value of {@code precision}. */
    static int fixedSize(int precision) {
        return BigInteger.TEN.pow(precision).subtract(BigInteger.ONE).bitLength() / 8 + 1;
    }

    /**
     * The value at {@code pos}, not null, as a record of the column's {@link #avro} type holds it
     * (raw, no Avro conversions: what the part's writer and fingerprint take).
     */
    public Object value(RowData row, int pos, ColumnSpec column) {
        return switch (this) {
            case STRING -> new Utf8(row.getString(pos).toBytes());
            case BOOLEAN -> row.getBoolean(pos);
            case INT, DATE -> row.getInt(pos);
            case BIGINT -> row.getLong(pos);
            case DOUBLE -> row.getDouble(pos);
            case DECIMAL -> {
                Schema fixed = column.valueSchema();
                yield new GenericData.Fixed(
                        fixed, signExtended(decimal(row, pos, column), fixed.getFixedSize()));
            }
            case TIMESTAMP, TIMESTAMP_LTZ ->
                    row.getTimestamp(pos, column.precision()).getMillisecond();
        };
    }

    /**
     * Appends the key text of the value at {@code pos}, not null. A string followed by more key
     * columns ends with {@code \0\0}, its own NULs written {@code \0\uFFFF}: a shorter string then
     * sorts first, and no two keys of different values give one text.
     */
    public void appendKey(
            RowData row, int pos, ColumnSpec column, boolean last, StringBuilder key) {
        switch (this) {
            case STRING -> {
                String s = row.getString(pos).toString();
                if (last) {
                    key.append(s);
                } else {
                    key.append(s.replace("\0", "\0\uffff")).append("\0\0");
                }
            }
            case BOOLEAN -> key.append(row.getBoolean(pos) ? '1' : '0');
            case INT, DATE -> key.append(HEX.toHexDigits(row.getInt(pos) ^ Integer.MIN_VALUE));
            case BIGINT -> key.append(HEX.toHexDigits(row.getLong(pos) ^ Long.MIN_VALUE));
            case TIMESTAMP, TIMESTAMP_LTZ ->
                    key.append(
                            HEX.toHexDigits(
                                    row.getTimestamp(pos, column.precision()).getMillisecond()
                                            ^ Long.MIN_VALUE));
            case DOUBLE -> {
                // The canonical NaN, as the part stores it; negative numbers' bits all flipped.
                long bits = Double.doubleToLongBits(row.getDouble(pos));
                key.append(HEX.toHexDigits(bits ^ (bits < 0 ? -1L : Long.MIN_VALUE)));
            }
            case DECIMAL -> {
                BigInteger unscaled = new BigInteger(decimal(row, pos, column));
                int digits = column.precision();
                BigInteger shown =
                        unscaled.signum() < 0 ? BigInteger.TEN.pow(digits).add(unscaled) : unscaled;
                String text = shown.toString();
                key.append(unscaled.signum() < 0 ? '0' : '1')
                        .append("0".repeat(digits - text.length()))
                        .append(text);
            }
        }
    }

    private static byte[] decimal(RowData row, int pos, ColumnSpec column) {
        DecimalData value = row.getDecimal(pos, column.precision(), column.scale());
        return value.toUnscaledBytes();
    }

    /** A two's complement number in {@code size} bytes, as a decimal's fixed holds it. */
    private static byte[] signExtended(byte[] minimal, int size) {
        if (minimal.length > size) {
            throw new IllegalArgumentException(
                    String.format(
                            Locale.ROOT,
                            "a decimal of %d bytes does not fit the column's %d",
                            minimal.length,
                            size));
        }
        byte[] out = new byte[size];
        Arrays.fill(out, 0, size - minimal.length, (byte) (minimal[0] < 0 ? -1 : 0));
        System.arraycopy(minimal, 0, out, size - minimal.length, minimal.length);
        return out;
    }
}
