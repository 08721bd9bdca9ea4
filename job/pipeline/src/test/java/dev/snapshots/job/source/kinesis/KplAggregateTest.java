package dev.snapshots.job.source.kinesis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.snapshots.job.source.RawRecord;
import dev.snapshots.job.testutils.KplEncoder;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.stream.IntStream;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

class KplAggregateTest {

    static LongStream seeds() {
        return LongStream.rangeClosed(1, 200);
    }

    @ParameterizedTest(name = "seed {0}")
    @MethodSource("seeds")
    void anAggregateYieldsEveryUserRecordInOrderEachWithItsOwnOrigin(long seed) {
        Random random = new Random(seed);
        List<byte[]> users =
                IntStream.range(0, 1 + random.nextInt(300))
                        .mapToObj(
                                i -> {
                                    byte[] b =
                                            new byte
                                                    [random.nextInt(
                                                            random.nextInt(10) == 0 ? 5_000 : 200)];
                                    random.nextBytes(b);
                                    return b;
                                })
                        .toList();

        List<RawRecord> out =
                KplAggregate.userRecords(
                        "shardId-000000000001:495", 42, KplEncoder.aggregate("pk-" + seed, users));

        assertThat(out).as("seed " + seed).hasSize(users.size());
        for (int i = 0; i < users.size(); i++) {
            assertThat(out.get(i).payload)
                    .as("seed %d, user record %d", seed, i)
                    .isEqualTo(users.get(i));
            assertThat(out.get(i).origin).isEqualTo("shardId-000000000001:495:" + i);
            assertThat(out.get(i).arrivalMillis).isEqualTo(42);
            assertThat(out.get(i).defect).isNull();
        }
    }

    @Test
    void aPlainRecordPassesThroughUntouched() {
        byte[] json = "{\"device\":\"d\"}".getBytes(StandardCharsets.UTF_8);
        List<RawRecord> out = KplAggregate.userRecords("s:1", 7, json);
        assertThat(out)
                .singleElement()
                .satisfies(
                        r -> {
                            assertThat(r.payload).isEqualTo(json);
                            assertThat(r.origin).isEqualTo("s:1");
                            assertThat(r.defect).isNull();
                        });
    }

    @Test
    void anAggregateWhoseDigestDoesNotMatchIsOneDefectiveRecord() {
        byte[] aggregate =
                KplEncoder.aggregate(
                        "pk",
                        List.of(
                                "a".getBytes(StandardCharsets.UTF_8),
                                "b".getBytes(StandardCharsets.UTF_8)));
        aggregate[aggregate.length - 1] ^= 1;
        assertThat(KplAggregate.userRecords("s:1", 7, aggregate))
                .singleElement()
                .satisfies(
                        r -> {
                            assertThat(r.defect).contains("MD5");
                            assertThat(r.origin).isEqualTo("s:1");
                            assertThat(r.payload).isEqualTo(aggregate);
                        });
    }

    @Test
    void aTruncatedOrGarbledAggregateIsOneDefectiveRecordNeverAnException() {
        byte[] good = KplEncoder.aggregate("pk", List.of(new byte[100], new byte[100]));
        for (int cut = 4; cut < good.length; cut++) {
            byte[] truncated = Arrays.copyOf(good, cut);
            assertThat(KplAggregate.userRecords("s:1", 7, truncated))
                    .as("cut at %d", cut)
                    .singleElement()
                    .satisfies(r -> assertThat(r.defect).isNotNull());
        }
        // A protobuf that lies about a length, with a digest that matches it.
        byte[] lying = {(byte) 0xF3, (byte) 0x89, (byte) 0x9A, (byte) 0xC2, 0x1A, 0x7F, 0x01};
        byte[] withDigest = Arrays.copyOf(lying, lying.length + 16);
        try {
            System.arraycopy(
                    MessageDigest.getInstance("MD5")
                            .digest(Arrays.copyOfRange(lying, 4, lying.length)),
                    0,
                    withDigest,
                    lying.length,
                    16);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
        assertThat(KplAggregate.userRecords("s:1", 7, withDigest))
                .singleElement()
                .satisfies(r -> assertThat(r.defect).contains("not a valid AggregatedRecord"));
    }
}
