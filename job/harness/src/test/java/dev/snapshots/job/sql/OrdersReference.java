package dev.snapshots.job.sql;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.TreeSet;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericRecord;

/**
 * What {@code examples/orders/orders.sql} must publish, computed in plain Java from the events'
 * JSON lines (BigDecimal sums, sets for the distinct counts), and the rows a part holds, in the
 * same text: one line per customer and hour.
 */
final class OrdersReference {
    static final long HOUR = 3_600_000L;
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final DateTimeFormatter SQL_TIME =
            DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss.SSS", Locale.ROOT);

    private OrdersReference() {}

    /** Rows by window start, each window's in customer order. */
    static Map<Long, List<String>> of(List<String> eventLines) throws IOException {
        Map<Long, Map<String, Totals>> windows = new TreeMap<>();
        for (String line : eventLines) {
            JsonNode e = JSON.readTree(line);
            long millis =
                    LocalDateTime.parse(e.get("order_time").asText(), SQL_TIME)
                            .toInstant(ZoneOffset.UTC)
                            .toEpochMilli();
            windows.computeIfAbsent(Math.floorDiv(millis, HOUR) * HOUR, w -> new TreeMap<>())
                    .computeIfAbsent(e.get("customer").asText(), c -> new Totals())
                    .add(e, millis);
        }
        Map<Long, List<String>> rows = new TreeMap<>();
        windows.forEach(
                (window, customers) ->
                        rows.put(
                                window,
                                customers.entrySet().stream()
                                        .map(c -> c.getValue().row(window, c.getKey()))
                                        .toList()));
        return rows;
    }

    /** A part's row in the reference's text. */
    static String row(GenericRecord r) {
        return row(
                (Long) r.get("window_start"),
                r.get("customer").toString(),
                (Long) r.get("orders"),
                (Long) r.get("products"),
                decimal(r.get("revenue"), 2),
                decimal(r.get("largest_order"), 2),
                (Integer) r.get("items"),
                (Double) r.get("mean_quantity"),
                Objects.toString(r.get("coupon"), null),
                (Boolean) r.get("any_gift"),
                LocalDate.ofEpochDay((Integer) r.get("order_date")),
                (Long) r.get("last_order"));
    }

    static String row(
            long windowStart,
            String customer,
            long orders,
            long products,
            BigDecimal revenue,
            BigDecimal largestOrder,
            int items,
            double meanQuantity,
            String coupon,
            boolean anyGift,
            LocalDate orderDate,
            long lastOrder) {
        return String.join(
                " ",
                Instant.ofEpochMilli(windowStart).toString(),
                customer,
                "orders=" + orders,
                "products=" + products,
                "revenue=" + revenue.toPlainString(),
                "largest=" + largestOrder.toPlainString(),
                "items=" + items,
                "mean=" + meanQuantity,
                "coupon=" + coupon,
                "gift=" + anyGift,
                orderDate.toString(),
                Instant.ofEpochMilli(lastOrder).toString());
    }

    /** A DECIMAL column as a part holds it. */
    static BigDecimal decimal(Object fixed, int scale) {
        return new BigDecimal(new BigInteger(((GenericData.Fixed) fixed).bytes()), scale);
    }

    private static final class Totals {
        long orders;
        final TreeSet<String> products = new TreeSet<>();
        BigDecimal revenue = BigDecimal.ZERO;
        BigDecimal largest;
        int items;
        String coupon;
        boolean gift;
        long last = Long.MIN_VALUE;

        void add(JsonNode e, long millis) {
            orders++;
            products.add(e.get("product").asText());
            BigDecimal amount = new BigDecimal(e.get("amount").asText());
            revenue = revenue.add(amount);
            largest = largest == null || amount.compareTo(largest) > 0 ? amount : largest;
            items += e.get("quantity").asInt();
            if (!e.get("coupon").isNull()) {
                String c = e.get("coupon").asText();
                coupon = coupon == null || c.compareTo(coupon) > 0 ? c : coupon;
            }
            gift |= e.get("gift").asBoolean();
            last = Math.max(last, millis);
        }

        String row(long window, String customer) {
            return OrdersReference.row(
                    window,
                    customer,
                    orders,
                    products.size(),
                    revenue.setScale(2),
                    largest.setScale(2),
                    items,
                    (double) items / orders,
                    coupon,
                    gift,
                    LocalDate.ofEpochDay(Math.floorDiv(window, 86_400_000L)),
                    last);
        }
    }
}
