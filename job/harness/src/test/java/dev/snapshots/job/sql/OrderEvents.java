package dev.snapshots.job.sql;

import java.io.IOException;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Random;

/**
 * The order events of {@code examples/orders/orders.jsonl}, one JSON object a line, as a shop's
 * producer would write them: in order of time but for a jitter of up to 3 s, well inside the
 * script's 5 s watermark delay, so no event is ever late and every run sees the same windows.
 * {@code java OrderEvents FILE} writes the example's file ({@code OrderEventsTest} checks it is
 * this class's output).
 */
public final class OrderEvents {
    public static final Instant START = Instant.parse("2026-12-01T00:00:00Z");
    public static final int HOURS = 6;
    static final int PER_HOUR = 160;
    private static final DateTimeFormatter SQL_TIME =
            DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss.SSS", Locale.ROOT);
    private static final String[] COUPONS = {"SPRING", "VIP", "WELCOME"};

    private OrderEvents() {}

    public static void main(String[] args) throws IOException {
        write(Path.of(args[0]), lines(0, HOURS));
    }

    /** The lines of hours [from, to) after {@link #START}, the same whichever hours are asked. */
    public static List<String> lines(int fromHour, int toHour) {
        Random random = new Random(7);
        List<String> lines = new ArrayList<>();
        long step = 3_600_000L / PER_HOUR;
        for (int hour = 0; hour < toHour; hour++) {
            for (int i = 0; i < PER_HOUR; i++) {
                int n = hour * PER_HOUR + i;
                long millis =
                        Math.max(
                                START.toEpochMilli(),
                                START.toEpochMilli()
                                        + n * step
                                        + random.nextInt((int) step)
                                        - random.nextInt(3_000));
                String customer = String.format(Locale.ROOT, "c-%03d", 1 + random.nextInt(40));
                String product = String.format(Locale.ROOT, "p-%02d", 1 + random.nextInt(12));
                BigDecimal amount = BigDecimal.valueOf(100 + random.nextInt(25_000), 2);
                int quantity = 1 + random.nextInt(5);
                String coupon =
                        random.nextInt(5) == 0
                                ? "\"" + COUPONS[random.nextInt(COUPONS.length)] + "\""
                                : "null";
                boolean gift = random.nextInt(10) == 0;
                if (hour >= fromHour) {
                    lines.add(
                            String.format(
                                    Locale.ROOT,
                                    "{\"order_id\":\"o-%06d\",\"customer\":\"%s\",\"product\":\"%s\","
                                            + "\"amount\":%s,\"quantity\":%d,\"coupon\":%s,"
                                            + "\"gift\":%b,\"order_time\":\"%s\"}",
                                    n,
                                    customer,
                                    product,
                                    amount.toPlainString(),
                                    quantity,
                                    coupon,
                                    gift,
                                    SQL_TIME.format(
                                            LocalDateTime.ofEpochSecond(
                                                    millis / 1000,
                                                    (int) (millis % 1000) * 1_000_000,
                                                    ZoneOffset.UTC))));
                }
            }
        }
        return lines;
    }

    /**
     * Whole or not at all, as a producer must write into a directory a job watches: a file seen
     * half-written is read only so far, and never again. The hidden name is one Flink's file source
     * passes over.
     */
    public static void write(Path file, List<String> lines) throws IOException {
        Path hidden = file.resolveSibling("." + file.getFileName() + ".writing");
        Files.writeString(hidden, String.join("\n", lines) + "\n", StandardCharsets.UTF_8);
        Files.move(
                hidden, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    }
}
