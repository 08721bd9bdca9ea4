package dev.snapshots.format;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.snapshots.key.PartKind;
import java.math.BigDecimal;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericRecord;
import org.apache.flink.api.java.functions.KeySelector;
import org.apache.flink.table.annotation.DataTypeHint;
import org.apache.flink.util.InstantiationUtil;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A POJO's row format: each field as the Parquet logical type a reader (DuckDB) reads back as its
 * SQL type, nulls included; keys that sort as the key fields do and that the events' key selector
 * gives alike; every field a part cannot hold refused by name.
 */
class PojoRowFormatTest {
    private static final long WINDOW = 1_796_083_200_000L; // 2026-12-01T00:00Z

    @TempDir Path tmp;

    /** Every type a part holds, boxed (nullable) and primitive (NOT NULL). */
    public static class Everything {
        public String customer;
        public String coupon;
        public Boolean gift;
        public boolean vip;
        public Integer items;
        public int visits;
        public Long points;
        public long orders;
        public Double mean;
        public double score;

        @DataTypeHint("DECIMAL(38, 2)")
        public BigDecimal revenue;

        @DataTypeHint("DECIMAL(5, 3)")
        public BigDecimal discount;

        public LocalDate day;
        public LocalDateTime lastOrder;
        public Instant seenAt;
        private String note; // read through Flink's POJO rules: a getter and a setter

        public String getNote() {
            return note;
        }

        public void setNote(String note) {
            this.note = note;
        }
    }

    @Test
    void everyFieldReadsBackInDuckDbAsTheMatchingSqlTypeNullsIncluded() throws Exception {
        PojoRowFormat<Everything> format = PojoRowFormat.of(Everything.class, "customer");
        Everything full = new Everything();
        full.customer = "c-1";
        full.coupon = "SPRING";
        full.gift = true;
        full.vip = true;
        full.items = 7;
        full.visits = 2;
        full.points = -3L;
        full.orders = 3;
        full.mean = 2.5;
        full.score = -0.5;
        full.revenue = new BigDecimal("-12345678901234567890.25");
        full.discount = new BigDecimal("-0.125");
        full.day = LocalDate.of(2026, 12, 1);
        full.lastOrder = LocalDateTime.of(2026, 12, 1, 0, 0, 59);
        full.seenAt = Instant.ofEpochMilli(WINDOW + 1);
        full.note = "n";
        Everything nulls = new Everything();
        nulls.customer = "c-2";
        Path file = tmp.resolve("part.parquet");
        PartEncoding.PartWriter<Everything> part = part(format, List.of(full, nulls));
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
                    .as("in field-name order, as Flink's PojoTypeInfo gives them")
                    .containsExactly(
                            Map.entry("coupon", "VARCHAR"),
                            Map.entry("customer", "VARCHAR"),
                            Map.entry("day", "DATE"),
                            Map.entry("discount", "DECIMAL(5,3)"),
                            Map.entry("gift", "BOOLEAN"),
                            Map.entry("items", "INTEGER"),
                            Map.entry("lastOrder", "TIMESTAMP"),
                            Map.entry("mean", "DOUBLE"),
                            Map.entry("note", "VARCHAR"),
                            Map.entry("orders", "BIGINT"),
                            Map.entry("points", "BIGINT"),
                            Map.entry("revenue", "DECIMAL(38,2)"),
                            Map.entry("score", "DOUBLE"),
                            Map.entry("seenAt", "TIMESTAMP WITH TIME ZONE"),
                            Map.entry("vip", "BOOLEAN"),
                            Map.entry("visits", "INTEGER"));
            try (ResultSet rs =
                    st.executeQuery(
                            "SELECT revenue, discount, day, lastOrder, epoch_ms(seenAt), coupon,"
                                    + " gift, items, mean, points, note, vip, visits, orders, score"
                                    + " FROM '"
                                    + file
                                    + "' ORDER BY customer")) {
                assertThat(rs.next()).isTrue();
                assertThat(rs.getBigDecimal(1))
                        .isEqualTo(new BigDecimal("-12345678901234567890.25"));
                assertThat(rs.getBigDecimal(2)).isEqualTo(new BigDecimal("-0.125"));
                assertThat(rs.getObject(3, LocalDate.class)).isEqualTo(full.day);
                assertThat(rs.getObject(4, LocalDateTime.class)).isEqualTo(full.lastOrder);
                assertThat(rs.getLong(5)).isEqualTo(WINDOW + 1);
                assertThat(rs.getString(6)).isEqualTo("SPRING");
                assertThat(rs.getBoolean(7)).isTrue();
                assertThat(rs.getInt(8)).isEqualTo(7);
                assertThat(rs.getDouble(9)).isEqualTo(2.5);
                assertThat(rs.getLong(10)).isEqualTo(-3L);
                assertThat(rs.getString(11)).isEqualTo("n");
                assertThat(rs.next()).isTrue();
                for (int c = 1; c <= 11; c++) {
                    assertThat(rs.getObject(c)).as("column %s of the row of nulls", c).isNull();
                }
                assertThat(rs.getBoolean(12)).isFalse();
                assertThat(rs.getInt(13)).isZero();
                assertThat(rs.getLong(14)).isZero();
                assertThat(rs.getDouble(15)).isZero();
            }
        }
        for (String primitive : List.of("vip", "visits", "orders", "score")) {
            assertThat(format.schema().getField(primitive).schema().getType())
                    .as("a primitive is NOT NULL: %s", primitive)
                    .isNotEqualTo(Schema.Type.UNION);
        }
        List<GenericRecord> decoded = PartEncoding.decode(Files.readAllBytes(file));
        assertThat(PartEncoding.fingerprint(decoded, format.schema(), 1))
                .as("the fingerprint recomputed from the file, as the audit does")
                .isEqualTo(part.fingerprint());
    }

    /** An order of one customer on one day, and the row its window makes of them. */
    public static class Event {
        public String customer;
        public LocalDate day;
        public int shop;
        public List<String> tags; // not a column type: only the key fields of events are read
    }

    public static class Total {
        public String customer;
        public LocalDate day;
        public int shop;
        public Double mean;

        @Override
        public String toString() {
            return customer + "/" + day + "/" + shop;
        }
    }

    /** Property: the key sorts as the key fields do, and the events' selector gives it too. */
    @ParameterizedTest(name = "seed {0}")
    @ValueSource(longs = {1, 2, 3, 4, 5})
    void keysSortAsTheKeyFieldsDoAndTheEventsKeySelectorGivesTheSameKey(long seed)
            throws Exception {
        PojoRowFormat<Total> format = PojoRowFormat.of(Total.class, "customer", "day", "shop");
        KeySelector<Event, String> events =
                InstantiationUtil.clone(format.keySelector(Event.class)); // as the job ships it
        Random random = new Random(seed);
        List<Total> totals = new ArrayList<>();
        for (int i = 0; i < 300; i++) {
            Total t = new Total();
            t.customer =
                    List.of("", "a", "a\0", "ab", "b", "é", "Zoë").get(random.nextInt(7))
                            + (random.nextBoolean() ? "" : "x");
            // Days close together half the time, so that rows often differ only by shop.
            t.day =
                    LocalDate.ofEpochDay(
                            random.nextBoolean()
                                    ? random.nextInt(3) - 1
                                    : random.nextInt(40_000) - 20_000);
            t.shop = random.nextInt(5) - 2 + (random.nextBoolean() ? 0 : random.nextInt());
            totals.add(t);

            Event e = new Event();
            e.customer = t.customer;
            e.day = t.day;
            e.shop = t.shop;
            assertThat(events.getKey(e)).as("seed %s", seed).isEqualTo(format.key(t));
        }
        Comparator<Total> byFields =
                Comparator.comparing((Total t) -> t.customer)
                        .thenComparing(t -> t.day)
                        .thenComparingInt(t -> t.shop);
        assertThat(totals.stream().sorted(Comparator.comparing(format::key)).toList())
                .as("seed %s", seed)
                .isEqualTo(totals.stream().sorted(byFields).toList());
    }

    @Test
    void theFingerprintTellsANullFromAnEmptyStringAndKeepsEveryNanAlike() throws Exception {
        PojoRowFormat<Everything> format = PojoRowFormat.of(Everything.class, "customer");
        Everything none = new Everything();
        none.customer = "c";
        Everything empty = new Everything();
        empty.customer = "c";
        empty.coupon = "";
        Everything nan = new Everything();
        nan.customer = "c";
        nan.mean = Double.NaN;
        Everything otherNan = new Everything();
        otherNan.customer = "c";
        otherNan.mean = Double.longBitsToDouble(0x7ff8_0000_0000_0001L);

        assertThat(part(format, List.of(none)).fingerprint())
                .isNotEqualTo(part(format, List.of(empty)).fingerprint());
        assertThat(part(format, List.of(nan)).fingerprint())
                .isEqualTo(part(format, List.of(otherNan)).fingerprint());
    }

    public static class Unsupported {
        public String customer;
        public float share;
    }

    public static class Undeclared {
        public String customer;
        public BigDecimal amount;
    }

    public static class Misdeclared {
        @DataTypeHint("INT")
        public String customer;
    }

    public static class Unparsable {
        @DataTypeHint("DECIMAL(12, 2")
        public BigDecimal amount;
    }

    public static class NotAPojo {
        public final String customer;

        public NotAPojo(String customer) {
            this.customer = customer;
        }
    }

    @Test
    void aFieldAPartCannotHoldIsRefusedByName() {
        assertThatThrownBy(() -> PojoRowFormat.of(Unsupported.class, "customer"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("field share of class " + Unsupported.class.getName())
                .hasMessageContaining("is float")
                .hasMessageContaining(ColumnType.SUPPORTED);
        assertThatThrownBy(() -> PojoRowFormat.of(Undeclared.class, "customer"))
                .hasMessageContaining("field amount of class")
                .hasMessageContaining("@DataTypeHint(\"DECIMAL(p, s)\")");
        assertThatThrownBy(() -> PojoRowFormat.of(Misdeclared.class, "customer"))
                .hasMessageContaining("field customer of class")
                .hasMessageContaining("declared INT");
        assertThatThrownBy(() -> PojoRowFormat.of(Unparsable.class, "amount"))
                .hasMessageContaining("field amount of class")
                .hasMessageContaining("no SQL type");
        assertThatThrownBy(() -> PojoRowFormat.of(NotAPojo.class, "customer"))
                .hasMessageContaining(NotAPojo.class.getName() + " is not a Flink POJO");
        assertThatThrownBy(() -> PojoRowFormat.of(Total.class, "client"))
                .hasMessageContaining("class " + Total.class.getName() + " has no field client");
    }

    @Test
    void aValueThatDoesNotFitItsFieldIsRefusedByNameNeverRoundedOrSkipped() {
        PojoRowFormat<Everything> format = PojoRowFormat.of(Everything.class, "customer");
        Everything e = new Everything();
        e.customer = "c";
        e.discount = new BigDecimal("0.1255");
        assertThatThrownBy(() -> format.toRecord(e))
                .hasMessageContaining("discount holds 0.1255")
                .hasMessageContaining("DECIMAL(5, 3)");
        e.discount = null;
        e.customer = null;
        assertThatThrownBy(() -> format.key(e)).hasMessageContaining("key field customer is null");
    }

    @Test
    void anEventsKeyFieldOfAnotherTypeIsRefused() {
        PojoRowFormat<Total> format = PojoRowFormat.of(Total.class, "shop");
        assertThatThrownBy(() -> format.keySelector(Unsupported.class))
                .hasMessageContaining("has no field shop");
        PojoRowFormat<Everything> byVisits = PojoRowFormat.of(Everything.class, "visits");
        assertThatThrownBy(() -> byVisits.keySelector(WideShop.class))
                .hasMessageContaining("the key fields of " + WideShop.class.getName())
                .hasMessageContaining("visits BIGINT");
    }

    public static class WideShop {
        public long visits;
    }

    private static <T> PartEncoding.PartWriter<T> part(PojoRowFormat<T> format, List<T> rows)
            throws Exception {
        PartEncoding.PartWriter<T> writer =
                new PartEncoding.PartWriter<>(
                        PartKind.SNAPSHOT, format, 1, PartEncoding.FINGERPRINT_AVRO);
        for (T row : rows) {
            writer.add(row);
        }
        return writer;
    }
}
