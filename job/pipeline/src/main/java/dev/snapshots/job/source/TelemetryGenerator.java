package dev.snapshots.job.source;

import dev.snapshots.job.ingest.Event;
import dev.snapshots.job.ingest.Rejection;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import org.apache.flink.annotation.Internal;
import org.apache.flink.connector.datagen.source.GeneratorFunction;

/**
 * Seeded synthetic network telemetry, a pure function of the record index: the same seed gives the
 * same stream on every run, which is what lets tests and the demo compare against a reference.
 *
 * <p>Record i arrives at {@code start + out-of-orderness + i * window / eventsPerWindow}. Good
 * events carry an event time up to a third of the out-of-orderness before that (out of order, never
 * late). Every {@code badEvery}-th record is malformed, cycling through every {@link Bad} kind;
 * every {@code lateEvery}-th is a valid event three windows old, which arrives after its window
 * closed.
 */
@Internal
public final class TelemetryGenerator implements GeneratorFunction<Long, RawRecord> {
    private static final long serialVersionUID = 1L;

    /** Where generated event time starts unless {@code --start} says otherwise. */
    public static final long START_MILLIS = Instant.parse("2026-11-30T10:00:00Z").toEpochMilli();

    /** The malformed records the generator makes, and what the job must call each. */
    public enum Bad {
        NOT_JSON(Rejection.NOT_JSON),
        TRUNCATED(Rejection.TRUNCATED_JSON),
        ARRAY(Rejection.NOT_AN_OBJECT),
        NO_DEVICE(Rejection.MISSING_KEY),
        EMPTY_DEVICE(Rejection.EMPTY_KEY),
        NO_TS(Rejection.MISSING_TIMESTAMP),
        BAD_TS(Rejection.BAD_TIMESTAMP),
        FUTURE(Rejection.TOO_FAR_IN_FUTURE),
        PAST(Rejection.TOO_FAR_IN_PAST),
        STRING_VALUE(Rejection.WRONG_TYPE),
        NAN(Rejection.NOT_FINITE),
        HUGE(Rejection.OUT_OF_RANGE),
        OVERSIZED(Rejection.OVERSIZED),
        INVALID_UTF8(Rejection.INVALID_UTF8);

        public final Rejection expected;

        Bad(Rejection expected) {
            this.expected = expected;
        }
    }

    /** What record i is, before it is encoded: a good event, a late one, or a malformed record. */
    public record Truth(long index, Event event, boolean late, Bad bad) {}

    private final long startMillis;
    private final long seed;
    private final int keys;
    private final long windowMillis;
    private final int eventsPerWindow;
    private final int badEvery;
    private final int lateEvery;
    private final long outOfOrdernessMillis;
    private final int maxRecordBytes;

    public TelemetryGenerator(
            long startMillis,
            long seed,
            int keys,
            long windowMillis,
            int eventsPerWindow,
            int badEvery,
            int lateEvery,
            long outOfOrdernessMillis,
            int maxRecordBytes) {
        this.startMillis = startMillis;
        this.seed = seed;
        this.keys = keys;
        this.windowMillis = windowMillis;
        this.eventsPerWindow = eventsPerWindow;
        this.badEvery = badEvery;
        this.lateEvery = lateEvery;
        this.outOfOrdernessMillis = outOfOrdernessMillis;
        this.maxRecordBytes = maxRecordBytes;
    }

    /**
     * Starts one out-of-orderness after the first window opens, so no event falls before it.
     * Multiplies before dividing: a window holds exactly {@code eventsPerWindow} records even when
     * that does not divide its length in milliseconds (several records then share a millisecond).
     */
    public long arrival(long i) {
        return startMillis + outOfOrdernessMillis + i * windowMillis / eventsPerWindow;
    }

    public Truth truth(long i) {
        long h = mix(i ^ (seed * 0x9E3779B97F4A7C15L));
        long arrival = arrival(i);
        if (badEvery > 0 && i % badEvery == badEvery - 1) {
            Bad[] kinds = Bad.values();
            return new Truth(i, null, false, kinds[(int) ((i / badEvery) % kinds.length)]);
        }
        String device = "dev-" + zeroPadded(Math.floorMod(h, keys), 5);
        long valueMicros =
                Math.floorMod(h >>> 8, 100_000_000L) - 20_000_000L; // -20.000000 .. 79.999999
        valueMicros -= valueMicros % 1000; // three decimals, as a sensor would report
        long bytes = Math.floorMod(h >>> 24, 1_500_000L);
        long latencyMicros = Math.floorMod(h >>> 40, 250_000L);
        boolean late =
                lateEvery > 0
                        && i % lateEvery == lateEvery - 1
                        && arrival >= startMillis + 4 * windowMillis;
        long eventTime =
                late
                        ? arrival - 3 * windowMillis
                        : arrival - Math.floorMod(h >>> 48, Math.max(1, outOfOrdernessMillis / 3));
        return new Truth(
                i,
                new Event(device, eventTime, valueMicros, bytes, latencyMicros, origin(i)),
                late,
                null);
    }

    @Override
    public RawRecord map(Long index) {
        Truth t = truth(index);
        byte[] payload =
                t.bad() != null
                        ? malformed(t.bad(), index)
                        : json(t.event(), index).getBytes(StandardCharsets.UTF_8);
        return new RawRecord(origin(index), arrival(index), payload);
    }

    static String origin(long i) {
        return "generator:" + zeroPadded(i, 12);
    }

    /**
     * What {@code %0Nd} gives for a non-negative value, without String.format's per-call locale
     * lookups (a profile found them).
     */
    private static String zeroPadded(long value, int width) {
        String digits = Long.toString(value);
        return digits.length() >= width ? digits : "0".repeat(width - digits.length()) + digits;
    }

    /** Alternates ISO-8601 and epoch-millis timestamps, as mixed fleets do. */
    private static String json(Event e, long i) {
        String ts =
                i % 2 == 0
                        ? "\"" + Instant.ofEpochMilli(e.timestampMillis) + "\""
                        : Long.toString(e.timestampMillis);
        return "{\"device\":\""
                + e.device
                + "\",\"ts\":"
                + ts
                + ",\"value\":"
                + decimal(e.valueMicros)
                + ",\"bytes\":"
                + e.bytes
                + ",\"latency_ms\":"
                + decimal(e.latencyMicros)
                + "}";
    }

    static String decimal(long micros) {
        return BigDecimal.valueOf(micros, 6).stripTrailingZeros().toPlainString();
    }

    private byte[] malformed(Bad kind, long i) {
        long now = arrival(i);
        String iso = "\"" + Instant.ofEpochMilli(now) + "\"";
        String text;
        switch (kind) {
            case NOT_JSON:
                text = "device=dev-1 ts=" + now + " value=3";
                break;
            case TRUNCATED:
                text = "{\"device\":\"dev-00001\",\"ts\":" + now + ",\"val";
                break;
            case ARRAY:
                text = "[\"dev-00001\"," + now + ",1.5]";
                break;
            case NO_DEVICE:
                text = "{\"ts\":" + iso + ",\"value\":1.5}";
                break;
            case EMPTY_DEVICE:
                text = "{\"device\":\" \",\"ts\":" + iso + ",\"value\":1.5}";
                break;
            case NO_TS:
                text = "{\"device\":\"dev-00001\",\"value\":1.5}";
                break;
            case BAD_TS:
                text = "{\"device\":\"dev-00001\",\"ts\":\"yesterday\",\"value\":1.5}";
                break;
            case FUTURE:
                text =
                        "{\"device\":\"dev-00001\",\"ts\":"
                                + (now + 86_400_000L)
                                + ",\"value\":1.5}";
                break;
            case PAST:
                text =
                        "{\"device\":\"dev-00001\",\"ts\":"
                                + (now - 30L * 86_400_000L)
                                + ",\"value\":1.5}";
                break;
            case STRING_VALUE:
                text = "{\"device\":\"dev-00001\",\"ts\":" + iso + ",\"value\":\"1.5\"}";
                break;
            case NAN:
                text = "{\"device\":\"dev-00001\",\"ts\":" + iso + ",\"value\":NaN}";
                break;
            case HUGE:
                text = "{\"device\":\"dev-00001\",\"ts\":" + iso + ",\"value\":2.5e13}";
                break;
            case OVERSIZED:
                text =
                        "{\"device\":\"dev-00001\",\"ts\":"
                                + iso
                                + ",\"value\":1,\"pad\":\""
                                + "x".repeat(maxRecordBytes)
                                + "\"}";
                break;
            case INVALID_UTF8:
                byte[] b =
                        ("{\"device\":\"dev-\u00e9\",\"ts\":" + now + ",\"value\":1}")
                                .getBytes(StandardCharsets.UTF_8);
                b[14] = (byte) 0xC3;
                b[15] = (byte) 0x28; // an invalid continuation byte
                return b;
            default:
                throw new IllegalStateException(kind.name());
        }
        return text.getBytes(StandardCharsets.UTF_8);
    }

    private static long mix(long x) {
        x = (x ^ (x >>> 30)) * 0xbf58476d1ce4e5b9L;
        x = (x ^ (x >>> 27)) * 0x94d049bb133111ebL;
        return x ^ (x >>> 31);
    }
}
