package dev.snapshots.job.ingest;

import dev.snapshots.job.source.RawRecord;
import java.io.IOException;
import java.io.Serializable;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.time.OffsetDateTime;
import java.time.format.DateTimeParseException;
import org.apache.flink.annotation.Internal;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.core.JsonParser;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.core.io.JsonEOFException;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.DeserializationFeature;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.ObjectMapper;

/**
 * Turns a raw record into an {@link Event} or says exactly why it cannot. Never throws on input:
 * every way a record can be wrong maps to a {@link Rejection}.
 *
 * <pre>{"device": "dev-001", "ts": "2026-11-30T14:05:03.250Z" | 1796047503250, "value": 12.5,
 *  "bytes": 1200, "latency_ms": 3.2}</pre>
 *
 * <p>The time horizon is judged against the record's arrival time, not the wall clock, so a replay
 * of last year's stream accepts and rejects exactly what the live run did.
 */
@Internal
public final class EventParser implements Serializable {
    private static final long serialVersionUID = 1L;
    private static final int MAX_KEY_CHARS = 256;

    /** +-1e12 units: sums of millions of such values still fit a long. */
    private static final BigDecimal MAX_MICROS = BigDecimal.TEN.pow(18);

    /**
     * Flink's own Jackson, whose version is the cluster's Flink's: 2.14.2 in 1.20, 2.20.1 in 2.3. A
     * rejection's detail is its message, and a dead letter's content must not change with the Flink
     * that runs the job (two lines' executions of one window would diverge, and a savepoint of 1.20
     * restored on 2.x would publish other dead letters than 1.20 would). So the messages are kept
     * as 2.14.2 words them: it names the source in a location (2.16 stopped by default), and lists
     * non-numeric numbers as {@link #NON_NUMERIC_THEN}.
     */
    private static final ObjectMapper JSON =
            new ObjectMapper()
                    .enable(JsonParser.Feature.ALLOW_NON_NUMERIC_NUMBERS)
                    .enable(JsonParser.Feature.INCLUDE_SOURCE_IN_LOCATION)
                    .enable(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS)
                    .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS);

    private static final String NON_NUMERIC_THEN = "'NaN'/'INF'/'+INF'";
    private static final String NON_NUMERIC_NOW = "'NaN'/'+INF'/'-INF'";

    private final int maxRecordBytes;
    private final long futureHorizonMillis;
    private final long pastHorizonMillis;

    public EventParser(int maxRecordBytes, long futureHorizonMillis, long pastHorizonMillis) {
        this.maxRecordBytes = maxRecordBytes;
        this.futureHorizonMillis = futureHorizonMillis;
        this.pastHorizonMillis = pastHorizonMillis;
    }

    /**
     * The outcome of parsing one record: an event, or a rejection with a detail for the operator.
     */
    public record Result(Event event, Rejection rejection, String detail) {
        static Result ok(Event e) {
            return new Result(e, null, null);
        }

        static Result rejected(Rejection r, String detail) {
            return new Result(null, r, detail);
        }
    }

    public Result parse(RawRecord raw) {
        byte[] payload = raw.payload == null ? new byte[0] : raw.payload;
        if (payload.length > maxRecordBytes) {
            return Result.rejected(
                    Rejection.OVERSIZED, payload.length + " bytes, limit " + maxRecordBytes);
        }
        try {
            StandardCharsets.UTF_8
                    .newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(payload));
        } catch (CharacterCodingException e) {
            return Result.rejected(Rejection.INVALID_UTF8, e.getMessage());
        }
        JsonNode doc;
        try {
            doc = JSON.readTree(payload);
        } catch (JsonEOFException e) {
            return Result.rejected(Rejection.TRUNCATED_JSON, e.getOriginalMessage());
        } catch (IOException e) {
            return Result.rejected(
                    Rejection.NOT_JSON,
                    firstLine(e.getMessage()).replace(NON_NUMERIC_NOW, NON_NUMERIC_THEN));
        }
        if (doc == null || doc.isMissingNode()) {
            return Result.rejected(Rejection.NOT_JSON, "empty record");
        }
        if (!doc.isObject()) {
            return Result.rejected(Rejection.NOT_AN_OBJECT, "top-level " + doc.getNodeType());
        }
        return parseObject(doc, raw);
    }

    private Result parseObject(JsonNode doc, RawRecord raw) {
        JsonNode device = doc.get("device");
        if (device == null || device.isNull()) {
            return Result.rejected(Rejection.MISSING_KEY, "no \"device\"");
        }
        if (!device.isTextual()) {
            return Result.rejected(Rejection.WRONG_TYPE, "\"device\" is " + device.getNodeType());
        }
        String key = device.textValue();
        if (key.isBlank()) {
            return Result.rejected(Rejection.EMPTY_KEY, "\"device\" is blank");
        }
        if (key.length() > MAX_KEY_CHARS) {
            return Result.rejected(
                    Rejection.OUT_OF_RANGE,
                    "\"device\" longer than " + MAX_KEY_CHARS + " characters");
        }

        JsonNode ts = doc.get("ts");
        if (ts == null || ts.isNull()) {
            return Result.rejected(Rejection.MISSING_TIMESTAMP, "no \"ts\"");
        }
        long timestamp;
        if (ts.isIntegralNumber() && ts.canConvertToLong()) {
            timestamp = ts.longValue();
        } else if (ts.isTextual()) {
            try {
                timestamp = OffsetDateTime.parse(ts.textValue()).toInstant().toEpochMilli();
            } catch (DateTimeParseException | ArithmeticException e) {
                return Result.rejected(
                        Rejection.BAD_TIMESTAMP,
                        "\"ts\" is not ISO-8601 with an offset: " + ts.textValue());
            }
        } else {
            return Result.rejected(
                    Rejection.BAD_TIMESTAMP,
                    "\"ts\" must be epoch millis or ISO-8601, got " + ts.getNodeType());
        }
        if (timestamp > raw.arrivalMillis + futureHorizonMillis) {
            return Result.rejected(
                    Rejection.TOO_FAR_IN_FUTURE,
                    (timestamp - raw.arrivalMillis) + " ms after arrival");
        }
        if (timestamp < raw.arrivalMillis - pastHorizonMillis || timestamp < 0) {
            return Result.rejected(
                    Rejection.TOO_FAR_IN_PAST,
                    (raw.arrivalMillis - timestamp) + " ms before arrival");
        }

        Measure value = measure(doc, "value", true);
        Measure bytes = measure(doc, "bytes", false);
        Measure latency = measure(doc, "latency_ms", false);
        for (Measure m : new Measure[] {value, bytes, latency}) {
            if (m.rejection != null) {
                return Result.rejected(m.rejection, m.detail);
            }
        }
        if (bytes.micros % Event.MICROS != 0 || bytes.micros < 0 || latency.micros < 0) {
            return Result.rejected(
                    Rejection.OUT_OF_RANGE,
                    "\"bytes\" must be a whole number >= 0 and \"latency_ms\" >= 0");
        }
        return Result.ok(
                new Event(
                        key,
                        timestamp,
                        value.micros,
                        bytes.micros / Event.MICROS,
                        latency.micros,
                        raw.origin));
    }

    /** A number as exact millionths, or why it is not one. */
    private record Measure(long micros, Rejection rejection, String detail) {}

    private static Measure measure(JsonNode doc, String field, boolean required) {
        JsonNode n = doc.get(field);
        if (n == null || n.isNull()) {
            return required
                    ? new Measure(0, Rejection.WRONG_TYPE, "\"" + field + "\" is missing")
                    : new Measure(0, null, null);
        }
        if (!n.isNumber()) {
            return new Measure(
                    0,
                    Rejection.WRONG_TYPE,
                    "\"" + field + "\" is " + n.getNodeType() + ", not a number");
        }
        if ((n.isDouble() || n.isFloat()) && !Double.isFinite(n.doubleValue())) {
            return new Measure(0, Rejection.NOT_FINITE, "\"" + field + "\" is " + n.doubleValue());
        }
        BigDecimal micros = n.decimalValue().movePointRight(6).setScale(0, RoundingMode.HALF_EVEN);
        if (micros.abs().compareTo(MAX_MICROS) > 0) {
            return new Measure(
                    0, Rejection.OUT_OF_RANGE, "\"" + field + "\" is beyond +-1e12: " + n.asText());
        }
        return new Measure(micros.longValueExact(), null, null);
    }

    private static String firstLine(String s) {
        if (s == null) {
            return "";
        }
        int nl = s.indexOf('\n');
        return nl < 0 ? s : s.substring(0, nl);
    }
}
