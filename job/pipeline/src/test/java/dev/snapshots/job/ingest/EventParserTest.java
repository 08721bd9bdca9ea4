package dev.snapshots.job.ingest;

import static org.assertj.core.api.Assertions.assertThat;

import dev.snapshots.job.source.RawRecord;
import dev.snapshots.job.source.TelemetryGenerator;
import dev.snapshots.testkit.RandomInputs;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Arrays;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** Bad input gets a named reason and never an exception; good input parses to what was meant. */
class EventParserTest {
    private static final int MAX_BYTES = 4096;
    private static final EventParser PARSER =
            new EventParser(MAX_BYTES, 3_600_000L, 7 * 86_400_000L);
    private static final TelemetryGenerator GENERATOR =
            new TelemetryGenerator(
                    TelemetryGenerator.START_MILLIS, 7, 20, 300_000, 100, 3, 11, 10_000, MAX_BYTES);

    @Test
    void everyKindOfMalformedRecordGetsItsOwnReason() {
        int seen = 0;
        for (long i = 0; seen < TelemetryGenerator.Bad.values().length * 2; i++) {
            TelemetryGenerator.Truth truth = GENERATOR.truth(i);
            if (truth.bad() != null) {
                EventParser.Result result = PARSER.parse(GENERATOR.map(i));
                assertThat(result.event()).as("record %s (%s)", i, truth.bad()).isNull();
                assertThat(result.rejection())
                        .as("record %s (%s)", i, truth.bad())
                        .isEqualTo(truth.bad().expected);
                seen++;
            }
        }
    }

    static LongStream threeHundredSeeds() {
        return LongStream.rangeClosed(1, 300);
    }

    static LongStream twoThousandSeeds() {
        return LongStream.rangeClosed(1, 2000);
    }

    @ParameterizedTest(name = "seed {0}")
    @MethodSource("threeHundredSeeds")
    void goodRecordsParseToTheEventTheGeneratorMeant(long seed) {
        long i = new RandomInputs(seed).between(0, 1_000_000);
        String what = String.format("seed %d, record %d", seed, i);
        TelemetryGenerator.Truth truth = GENERATOR.truth(i);
        EventParser.Result result = PARSER.parse(GENERATOR.map(i));
        if (truth.bad() != null) {
            assertThat(result.rejection()).as(what).isEqualTo(truth.bad().expected);
            return;
        }
        Event e = result.event();
        assertThat(e).as(what).isNotNull();
        assertThat(e.device).as(what).isEqualTo(truth.event().device);
        assertThat(e.timestampMillis).as(what).isEqualTo(truth.event().timestampMillis);
        assertThat(e.valueMicros).as(what).isEqualTo(truth.event().valueMicros);
        assertThat(e.bytes).as(what).isEqualTo(truth.event().bytes);
        assertThat(e.latencyMicros).as(what).isEqualTo(truth.event().latencyMicros);
    }

    @ParameterizedTest(name = "seed {0}")
    @MethodSource("twoThousandSeeds")
    void arbitraryBytesNeverThrowAndGetExactlyOneOutcome(long seed) {
        EventParser.Result result =
                PARSER.parse(
                        new RawRecord("fuzz:1", 1_796_047_500_000L, junk(new RandomInputs(seed))));
        assertThat(result.event() == null)
                .as("seed %d: %s", seed, result)
                .isNotEqualTo(result.rejection() == null);
    }

    @Test
    void timestampsInBothFormsAndOffsetsAreAccepted() {
        assertThat(
                        parse(
                                        "{\"device\":\"d\",\"ts\":\"2026-11-30T14:05:03.250+01:00\",\"value\":1}")
                                .event()
                                .timestampMillis)
                .isEqualTo(Instant.parse("2026-11-30T13:05:03.250Z").toEpochMilli());
        assertThat(
                        parse("{\"device\":\"d\",\"ts\":1796047503250,\"value\":1}")
                                .event()
                                .timestampMillis)
                .isEqualTo(1796047503250L);
        assertThat(parse("{\"device\":\"d\",\"ts\":\"2026-11-30 14:05\",\"value\":1}").rejection())
                .isEqualTo(Rejection.BAD_TIMESTAMP);
        assertThat(parse("{\"device\":\"d\",\"ts\":1.5,\"value\":1}").rejection())
                .isEqualTo(Rejection.BAD_TIMESTAMP);
        assertThat(parse("{\"device\":\"d\",\"ts\":1796047503250,\"value\":-Infinity}").rejection())
                .isEqualTo(Rejection.NOT_FINITE);
        assertThat(parse("{\"device\":7,\"ts\":1796047503250,\"value\":1}").rejection())
                .isEqualTo(Rejection.WRONG_TYPE);
        assertThat(
                        parse("{\"device\":\"d\",\"ts\":1796047503250,\"value\":1} trailing")
                                .rejection())
                .isEqualTo(Rejection.NOT_JSON);
        assertThat(parse("").rejection()).isEqualTo(Rejection.NOT_JSON);
    }

    /**
     * A dead letter's detail is the same whichever Flink runs the job, though the parser is Flink's
     * own Jackson: these are Jackson 2.14.2's words (Flink 1.20's), which a newer one changed.
     */
    @Test
    void aRejectionIsWordedAsFlink120sJacksonWordsItOnEveryFlink() {
        assertThat(parse("device=dev-1 ts=1796034442000 value=3").detail())
                .isEqualTo(
                        "Unrecognized token 'device': was expecting (JSON String, Number (or"
                                + " 'NaN'/'INF'/'+INF'), Array, Object or token 'null', 'true' or"
                                + " 'false')");
        assertThat(parse("[1,2").detail())
                .isEqualTo(
                        "Unexpected end-of-input: expected close marker for Array (start marker"
                                + " at [Source: (byte[])\"[1,2\"; line: 1, column: 1])");
        assertThat(parse("{\"device\":\"dev-00001\",\"ts\":1796034465000,\"val").detail())
                .isEqualTo("Unexpected end-of-input in field name");
    }

    private static EventParser.Result parse(String json) {
        return PARSER.parse(
                new RawRecord("t:1", 1_796_047_500_000L, json.getBytes(StandardCharsets.UTF_8)));
    }

    /**
     * Half the time up to {@code MAX_BYTES + 100} random bytes (empty and past the size limit
     * included); otherwise one of the generator's first 100,001 records with a byte flipped and the
     * rest cut at any length from one byte to all of it.
     */
    private static byte[] junk(RandomInputs in) {
        if (in.between(0, 1) == 0) {
            return in.bytes(MAX_BYTES + 100);
        }
        byte[] b = GENERATOR.map((long) in.between(0, 100_000)).payload.clone();
        int flip = in.between(0, b.length - 1);
        b[flip] = (byte) (b[flip] ^ 0x5A); // a flipped byte
        return Arrays.copyOf(b, in.between(1, b.length)); // and a cut
    }
}
