package dev.snapshots.table;

import static org.assertj.core.api.Assertions.assertThat;

import dev.snapshots.format.PartEncoding;
import dev.snapshots.key.PartKind;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.stream.IntStream;
import org.apache.avro.generic.GenericRecord;
import org.apache.flink.table.api.DataTypes;
import org.apache.flink.table.catalog.Column;
import org.apache.flink.table.catalog.ResolvedSchema;
import org.apache.flink.table.catalog.UniqueConstraint;
import org.apache.flink.table.data.DecimalData;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.StringData;
import org.apache.flink.table.data.TimestampData;
import org.apache.flink.table.runtime.typeutils.RowDataSerializer;
import org.apache.flink.table.types.DataType;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.RowType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * How a table's rows become a part: each SQL type as the Parquet logical type a reader (DuckDB
 * here) reads back as that type, nulls included; keys that sort as their values do; and a row's key
 * and content independent of how Flink happens to hold it.
 */
class TableRowFormatTest {
    private static final long HOUR = 3_600_000L;
    private static final long WINDOW = 1_796_083_200_000L; // 2026-12-01T00:00Z

    @TempDir Path tmp;

    @Test
    void everyTypeReadsBackInDuckDbAsTheMatchingSqlTypeNullsIncluded() throws Exception {
        Map<String, DataType> columns = new LinkedHashMap<>();
        columns.put("window_start", DataTypes.TIMESTAMP(3).notNull());
        columns.put("window_end", DataTypes.TIMESTAMP(3).notNull());
        columns.put("customer", DataTypes.STRING().notNull());
        columns.put("coupon", DataTypes.STRING());
        columns.put("gift", DataTypes.BOOLEAN());
        columns.put("items", DataTypes.INT());
        columns.put("orders", DataTypes.BIGINT().notNull());
        columns.put("mean", DataTypes.DOUBLE());
        columns.put("revenue", DataTypes.DECIMAL(38, 2).notNull());
        columns.put("discount", DataTypes.DECIMAL(5, 3));
        columns.put("day", DataTypes.DATE());
        columns.put("last_order", DataTypes.TIMESTAMP(3));
        columns.put("seen_at", DataTypes.TIMESTAMP_LTZ(3));
        TableRowFormat format = format(columns, "window_start", "window_end", "customer");
        RowData full =
                GenericRowData.of(
                        ts(WINDOW),
                        ts(WINDOW + HOUR),
                        StringData.fromString("c-1"),
                        StringData.fromString("SPRING"),
                        true,
                        7,
                        3L,
                        2.5,
                        DecimalData.fromBigDecimal(
                                new BigDecimal("-12345678901234567890.25"), 38, 2),
                        DecimalData.fromBigDecimal(new BigDecimal("-0.125"), 5, 3),
                        (int) LocalDate.of(2026, 12, 1).toEpochDay(),
                        ts(WINDOW + 59_000),
                        ts(WINDOW + 1));
        RowData nulls =
                GenericRowData.of(
                        ts(WINDOW),
                        ts(WINDOW + HOUR),
                        StringData.fromString("c-2"),
                        null,
                        null,
                        null,
                        0L,
                        null,
                        DecimalData.fromBigDecimal(BigDecimal.ZERO, 38, 2),
                        null,
                        null,
                        null,
                        null);
        Path file = tmp.resolve("part.parquet");
        PartEncoding.PartWriter<RowData> part = part(format, List.of(full, nulls));
        Files.write(file, part.finish().toByteArray());

        try (Connection duckdb = DriverManager.getConnection("jdbc:duckdb:");
                Statement st = duckdb.createStatement()) {
            Map<String, String> types = new LinkedHashMap<>();
            try (ResultSet rs = st.executeQuery("DESCRIBE SELECT * FROM '" + file + "'")) {
                while (rs.next()) {
                    types.put(rs.getString("column_name"), rs.getString("column_type"));
                }
            }
            assertThat(types)
                    .containsExactly(
                            Map.entry("window_start", "TIMESTAMP"),
                            Map.entry("window_end", "TIMESTAMP"),
                            Map.entry("customer", "VARCHAR"),
                            Map.entry("coupon", "VARCHAR"),
                            Map.entry("gift", "BOOLEAN"),
                            Map.entry("items", "INTEGER"),
                            Map.entry("orders", "BIGINT"),
                            Map.entry("mean", "DOUBLE"),
                            Map.entry("revenue", "DECIMAL(38,2)"),
                            Map.entry("discount", "DECIMAL(5,3)"),
                            Map.entry("day", "DATE"),
                            Map.entry("last_order", "TIMESTAMP"),
                            Map.entry("seen_at", "TIMESTAMP WITH TIME ZONE"));
            try (ResultSet rs =
                    st.executeQuery(
                            "SELECT window_start, revenue, discount, day, last_order,"
                                    + " epoch_ms(seen_at), coupon, gift, items, mean"
                                    + " FROM '"
                                    + file
                                    + "' ORDER BY customer")) {
                assertThat(rs.next()).isTrue();
                assertThat(rs.getObject(1, LocalDateTime.class))
                        .isEqualTo(LocalDateTime.of(2026, 12, 1, 0, 0));
                assertThat(rs.getBigDecimal(2))
                        .isEqualTo(new BigDecimal("-12345678901234567890.25"));
                assertThat(rs.getBigDecimal(3)).isEqualTo(new BigDecimal("-0.125"));
                assertThat(rs.getObject(4, LocalDate.class)).isEqualTo(LocalDate.of(2026, 12, 1));
                assertThat(rs.getObject(5, LocalDateTime.class))
                        .isEqualTo(LocalDateTime.of(2026, 12, 1, 0, 0, 59));
                assertThat(rs.getLong(6)).isEqualTo(WINDOW + 1);
                assertThat(rs.getString(7)).isEqualTo("SPRING");
                assertThat(rs.getBoolean(8)).isTrue();
                assertThat(rs.getInt(9)).isEqualTo(7);
                assertThat(rs.getDouble(10)).isEqualTo(2.5);
                assertThat(rs.next()).isTrue();
                assertThat(rs.getBigDecimal(2)).isEqualByComparingTo(BigDecimal.ZERO);
                for (int c = 3; c <= 10; c++) {
                    assertThat(rs.getObject(c)).as("column %s of the row of nulls", c).isNull();
                }
            }
        }
        List<GenericRecord> decoded = PartEncoding.decode(Files.readAllBytes(file));
        assertThat(decoded).hasSize(2);
        assertThat(decoded.get(1).get("coupon")).isNull();
        assertThat(PartEncoding.fingerprint(decoded, format.schema(), 1))
                .as("the fingerprint recomputed from the file, as the audit does")
                .isEqualTo(part.fingerprint());
    }

    /** Property: for random values, comparing keys' texts compares the values. */
    @ParameterizedTest(name = "seed {0}")
    @ValueSource(longs = {1, 2, 3, 4, 5})
    void keysSortAsTheirValuesDoForEveryKeyType(long seed) {
        Random random = new Random(seed);
        List<Object[]> values = new ArrayList<>();
        for (int i = 0; i < 400; i++) {
            values.add(
                    new Object[] {
                        randomString(random),
                        random.nextBoolean(),
                        random.nextInt(7) - 3 + (random.nextBoolean() ? 0 : random.nextInt()),
                        random.nextLong() >> random.nextInt(64),
                        randomDouble(random),
                        new BigDecimal(
                                        BigInteger.valueOf(random.nextLong())
                                                .multiply(BigInteger.valueOf(random.nextInt(1000))),
                                        3)
                                .remainder(new BigDecimal("1E+20")),
                        random.nextInt(40_000) - 20_000,
                        random.nextLong() % (400L * 365 * 86_400_000L),
                        randomString(random)
                    });
        }
        Map<String, DataType> columns = new LinkedHashMap<>();
        columns.put("window_start", DataTypes.TIMESTAMP(3).notNull());
        columns.put("window_end", DataTypes.TIMESTAMP(3).notNull());
        columns.put("s", DataTypes.STRING().notNull());
        columns.put("b", DataTypes.BOOLEAN().notNull());
        columns.put("i", DataTypes.INT().notNull());
        columns.put("l", DataTypes.BIGINT().notNull());
        columns.put("d", DataTypes.DOUBLE().notNull());
        columns.put("m", DataTypes.DECIMAL(24, 3).notNull());
        columns.put("day", DataTypes.DATE().notNull());
        columns.put("t", DataTypes.TIMESTAMP(3).notNull());
        columns.put("last", DataTypes.STRING().notNull());
        List<String> names = List.copyOf(columns.keySet());
        for (int c = 2; c < names.size(); c++) {
            // Each type alone, and as the first of two key columns (a string after it).
            for (List<String> key : List.of(List.of(names.get(c)), List.of(names.get(c), "last"))) {
                TableRowFormat format = format(columns, key.toArray(String[]::new));
                int column = c - 2;
                Comparator<Object[]> byValue =
                        Comparator.<Object[], Comparable<Object>>comparing(
                                v -> comparable(v[column]));
                if (key.size() == 2) {
                    byValue = byValue.thenComparing(v -> (String) v[8]);
                }
                for (int i = 0; i + 1 < values.size(); i++) {
                    Object[] a = values.get(i);
                    Object[] b = values.get(random.nextInt(values.size()));
                    assertThat(Integer.signum(format.key(row(a)).compareTo(format.key(row(b)))))
                            .as(
                                    "seed %s, key %s: %s vs %s",
                                    seed, key, Arrays.toString(a), Arrays.toString(b))
                            .isEqualTo(Integer.signum(byValue.compare(a, b)));
                }
            }
        }
    }

    @Test
    void aRowsKeyAndContentDoNotDependOnHowFlinkHoldsIt() {
        Map<String, DataType> columns = new LinkedHashMap<>();
        columns.put("window_start", DataTypes.TIMESTAMP(3).notNull());
        columns.put("window_end", DataTypes.TIMESTAMP(3).notNull());
        columns.put("customer", DataTypes.STRING().notNull());
        columns.put("region", DataTypes.INT().notNull());
        columns.put("note", DataTypes.STRING());
        columns.put("amount", DataTypes.DECIMAL(10, 2));
        TableRowFormat format = format(columns, "customer", "region");
        RowType type = rowType(columns);
        GenericRowData generic =
                GenericRowData.of(
                        ts(WINDOW),
                        ts(WINDOW + HOUR),
                        StringData.fromString("ä\0b"),
                        -4,
                        StringData.fromString(""),
                        DecimalData.fromBigDecimal(new BigDecimal("1.50"), 10, 2));
        RowData binary = new RowDataSerializer(type).toBinaryRow(generic);

        assertThat(format.key(binary)).isEqualTo(format.key(generic));
        assertThat(PartEncoding.canonicalBytes(format, binary))
                .isEqualTo(PartEncoding.canonicalBytes(format, generic));
        GenericRowData nullNote =
                GenericRowData.of(
                        generic.getField(0),
                        generic.getField(1),
                        generic.getField(2),
                        generic.getField(3),
                        null,
                        generic.getField(5));
        assertThat(PartEncoding.canonicalBytes(format, nullNote))
                .as("a null and an empty string are different content")
                .isNotEqualTo(PartEncoding.canonicalBytes(format, generic));
    }

    /** A part of {@code rows}, in the order given, encoded and fingerprinted. */
    private static PartEncoding.PartWriter<RowData> part(TableRowFormat format, List<RowData> rows)
            throws Exception {
        PartEncoding.PartWriter<RowData> writer =
                new PartEncoding.PartWriter<>(
                        PartKind.SNAPSHOT, format, 1, PartEncoding.FINGERPRINT_AVRO);
        for (RowData row : rows) {
            writer.add(row);
        }
        return writer;
    }

    static TableRowFormat format(Map<String, DataType> columns, String... primaryKey) {
        List<Column> physical = new ArrayList<>();
        columns.forEach((name, type) -> physical.add(Column.physical(name, type)));
        return TableRowFormat.of(
                "t",
                new ResolvedSchema(
                        physical,
                        List.of(),
                        UniqueConstraint.primaryKey("pk", List.of(primaryKey))));
    }

    private static RowType rowType(Map<String, DataType> columns) {
        return RowType.of(
                columns.values().stream().map(DataType::getLogicalType).toArray(LogicalType[]::new),
                columns.keySet().toArray(String[]::new));
    }

    private static TimestampData ts(long millis) {
        return TimestampData.fromEpochMillis(millis);
    }

    private static RowData row(Object[] v) {
        return GenericRowData.of(
                ts(WINDOW),
                ts(WINDOW + HOUR),
                StringData.fromString((String) v[0]),
                v[1],
                v[2],
                v[3],
                v[4],
                DecimalData.fromBigDecimal((BigDecimal) v[5], 24, 3),
                v[6],
                ts((Long) v[7]),
                StringData.fromString((String) v[8]));
    }

    @SuppressWarnings("unchecked")
    private static Comparable<Object> comparable(Object value) {
        return (Comparable<Object>) value;
    }

    /** Short strings over a small alphabet with NULs, so prefixes and ties are common. */
    private static String randomString(Random random) {
        return IntStream.range(0, random.nextInt(4))
                .mapToObj(i -> String.valueOf("\0ab\u00e9z".charAt(random.nextInt(5))))
                .reduce("", String::concat);
    }

    private static double randomDouble(Random random) {
        return switch (random.nextInt(6)) {
            case 0 -> 0.0;
            case 1 -> -random.nextInt(3);
            case 2 -> Double.MAX_VALUE * (random.nextBoolean() ? 1 : -1);
            default -> random.nextGaussian() * Math.pow(10, random.nextInt(20) - 10);
        };
    }
}
