package dev.snapshots.job;

import dev.snapshots.job.source.RawRecord;
import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.LongRange;

/** Bad input gets a named reason and never an exception; good input parses to what was meant. */
class EventParserTest {
    private static final int MAX_BYTES = 4096;
    private static final EventParser PARSER = new EventParser(MAX_BYTES, 3_600_000L, 7 * 86_400_000L);
    private static final TelemetryGenerator GENERATOR =
            new TelemetryGenerator(TelemetryGenerator.START_MILLIS, 7, 20, 300_000, 100, 3, 11, 10_000, MAX_BYTES);

    @Example
    void everyKindOfMalformedRecordGetsItsOwnReason() {
        int seen = 0;
        for (long i = 0; seen < TelemetryGenerator.Bad.values().length * 2; i++) {
            TelemetryGenerator.Truth truth = GENERATOR.truth(i);
            if (truth.bad() != null) {
                EventParser.Result result = PARSER.parse(GENERATOR.map(i));
                assertThat(result.event()).as("record %s (%s)", i, truth.bad()).isNull();
                assertThat(result.rejection()).as("record %s (%s)", i, truth.bad()).isEqualTo(truth.bad().expected);
                seen++;
            }
        }
    }

    @Property(tries = 300)
    void goodRecordsParseToTheEventTheGeneratorMeant(@ForAll @LongRange(max = 1_000_000) long i) {
        TelemetryGenerator.Truth truth = GENERATOR.truth(i);
        EventParser.Result result = PARSER.parse(GENERATOR.map(i));
        if (truth.bad() != null) {
            assertThat(result.rejection()).isEqualTo(truth.bad().expected);
            return;
        }
        Event e = result.event();
        assertThat(e).isNotNull();
        assertThat(e.device).isEqualTo(truth.event().device);
        assertThat(e.timestampMillis).isEqualTo(truth.event().timestampMillis);
        assertThat(e.valueMicros).isEqualTo(truth.event().valueMicros);
        assertThat(e.bytes).isEqualTo(truth.event().bytes);
        assertThat(e.latencyMicros).isEqualTo(truth.event().latencyMicros);
    }

    @Property(tries = 2000)
    void arbitraryBytesNeverThrowAndGetExactlyOneOutcome(@ForAll("junk") byte[] payload) {
        EventParser.Result result = PARSER.parse(new RawRecord("fuzz:1", 1_796_047_500_000L, payload));
        assertThat(result.event() == null).isNotEqualTo(result.rejection() == null);
    }

    @Example
    void timestampsInBothFormsAndOffsetsAreAccepted() {
        assertThat(parse("{\"device\":\"d\",\"ts\":\"2026-11-30T14:05:03.250+01:00\",\"value\":1}").event().timestampMillis)
                .isEqualTo(java.time.Instant.parse("2026-11-30T13:05:03.250Z").toEpochMilli());
        assertThat(parse("{\"device\":\"d\",\"ts\":1796047503250,\"value\":1}").event().timestampMillis).isEqualTo(1796047503250L);
        assertThat(parse("{\"device\":\"d\",\"ts\":\"2026-11-30 14:05\",\"value\":1}").rejection()).isEqualTo(Rejection.BAD_TIMESTAMP);
        assertThat(parse("{\"device\":\"d\",\"ts\":1.5,\"value\":1}").rejection()).isEqualTo(Rejection.BAD_TIMESTAMP);
        assertThat(parse("{\"device\":\"d\",\"ts\":1796047503250,\"value\":-Infinity}").rejection()).isEqualTo(Rejection.NOT_FINITE);
        assertThat(parse("{\"device\":7,\"ts\":1796047503250,\"value\":1}").rejection()).isEqualTo(Rejection.WRONG_TYPE);
        assertThat(parse("{\"device\":\"d\",\"ts\":1796047503250,\"value\":1} trailing").rejection()).isEqualTo(Rejection.NOT_JSON);
        assertThat(parse("").rejection()).isEqualTo(Rejection.NOT_JSON);
    }

    private static EventParser.Result parse(String json) {
        return PARSER.parse(new RawRecord("t:1", 1_796_047_500_000L, json.getBytes(StandardCharsets.UTF_8)));
    }

    @Provide
    Arbitrary<byte[]> junk() {
        Arbitrary<byte[]> random = Arbitraries.bytes().array(byte[].class).ofMaxSize(MAX_BYTES + 100);
        Arbitrary<byte[]> mutated = Arbitraries.longs().between(0, 100_000).flatMap(i -> {
            byte[] good = GENERATOR.map(i).payload;
            return Arbitraries.integers().between(0, Math.max(0, good.length - 1)).tuple2()
                    .map(t -> {
                        byte[] b = good.clone();
                        b[t.get1()] = (byte) (b[t.get1()] ^ 0x5A); // a flipped byte
                        return java.util.Arrays.copyOf(b, t.get2() + 1); // and a cut
                    });
        });
        return Arbitraries.oneOf(random, mutated);
    }
}
