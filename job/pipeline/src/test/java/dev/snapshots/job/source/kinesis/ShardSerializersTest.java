package dev.snapshots.job.source.kinesis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.tuple;

import dev.snapshots.job.source.SplitProgress;
import dev.snapshots.job.source.kinesis.ShardEnumeratorState.Shard;
import dev.snapshots.job.source.kinesis.ShardEnumeratorState.Status;
import dev.snapshots.job.testutils.Golden;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The Kinesis source's checkpointed formats: today's, byte for byte, and what
 * flink-connector-kinesis 4.3.0 wrote before this source replaced it (a savepoint taken then must
 * restore). The connector's files were written by the connector itself, 4.3.0-1.19, while it was
 * still a dependency; now only our decoder of its format reads them.
 */
class ShardSerializersTest {
    private static final ShardSplit.Serializer SPLITS = new ShardSplit.Serializer();
    private static final ShardEnumeratorState.Serializer STATES =
            new ShardEnumeratorState.Serializer();

    private static final List<ShardSplit> SPLIT_CASES =
            List.of(
                    new ShardSplit(
                            "shardId-000000000000",
                            ShardPosition.fromStart(),
                            SplitProgress.none(),
                            false),
                    new ShardSplit(
                            "shardId-000000000001",
                            ShardPosition.continueFromSequenceNumber("49650"),
                            new SplitProgress(1_796_000_000_000L, 1_796_000_100_000L),
                            false),
                    new ShardSplit(
                            "shardId-000000000002",
                            ShardPosition.fromTimestamp(Instant.ofEpochMilli(1_796_000_000_123L)),
                            new SplitProgress(5, 6),
                            true));

    @Test
    void splitsOfVersion1ReadBackAsWritten() throws IOException {
        for (int i = 0; i < SPLIT_CASES.size(); i++) {
            ShardSplit split = SPLIT_CASES.get(i);
            byte[] golden = Golden.bytes("shard-split-v1-" + i + ".bin", SPLITS.serialize(split));
            assertThat(SPLITS.serialize(split)).as("today's bytes of %s", split).isEqualTo(golden);
            assertThat(SPLITS.deserialize(1, golden)).isEqualTo(split);
        }
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource({
        "shard-split-v0-connector-4.3.0.bin, shardId-000000000003, AFTER_SEQUENCE_NUMBER 4965012",
        "shard-split-v0-connector-4.3.0-at-timestamp.bin, shardId-000000000006,"
                + " AT_TIMESTAMP 2026-11-30T00:53:20.123Z",
        "shard-split-v0-connector-4.3.0-trim-horizon.bin, shardId-000000000007, TRIM_HORIZON"
    })
    void splitsCheckpointedByTheKinesisConnector430ResumeAtTheirPositionWithNoProgress(
            String file, String shardId, String position) throws IOException {
        ShardSplit restored = SPLITS.deserialize(0, connectorGolden(file));
        assertThat(restored.splitId()).isEqualTo(shardId);
        assertThat(restored.position()).hasToString(position);
        assertThat(restored.progress()).isEqualTo(SplitProgress.none());
        assertThat(restored.exhausted()).isFalse();
        assertThat(SPLITS.deserialize(1, SPLITS.serialize(restored)))
                .as("checkpointed again in today's format")
                .isEqualTo(restored);
    }

    @Test
    void enumeratorStateOfVersion1ReadsBackAsWritten() throws IOException {
        Map<String, Shard> shards = new TreeMap<>();
        shards.put(
                "shardId-000000000000",
                new Shard(
                        "shardId-000000000000",
                        List.of(),
                        Status.RELEASED,
                        null,
                        new SplitProgress(1, 2),
                        true));
        shards.put(
                "shardId-000000000001",
                new Shard(
                        "shardId-000000000001",
                        List.of(),
                        Status.FINISHED,
                        null,
                        new SplitProgress(3, 4),
                        true));
        shards.put(
                "shardId-000000000002",
                new Shard(
                        "shardId-000000000002",
                        List.of("shardId-000000000000"),
                        Status.ASSIGNED,
                        null,
                        null,
                        true));
        shards.put(
                "shardId-000000000003",
                new Shard(
                        "shardId-000000000003",
                        List.of("shardId-000000000000"),
                        Status.READY,
                        SPLIT_CASES.get(1),
                        null,
                        false));
        shards.put(
                "shardId-000000000004",
                new Shard(
                        "shardId-000000000004",
                        List.of("shardId-000000000001", "shardId-000000000002"),
                        Status.WAITING,
                        null,
                        null,
                        false));
        ShardEnumeratorState state =
                new ShardEnumeratorState(1_796_000_000_000L, true, null, shards);
        byte[] golden = Golden.bytes("shard-enumerator-v1.bin", STATES.serialize(state));
        assertThat(STATES.serialize(state)).isEqualTo(golden);
        assertThat(STATES.deserialize(1, golden)).isEqualTo(state);
    }

    @Test
    void enumeratorStateOfTheKinesisConnector430KeepsItsUnassignedShardsAndItsLastSeenShard()
            throws IOException {
        ShardEnumeratorState restored =
                STATES.deserialize(0, connectorGolden("shard-enumerator-v0-connector-4.3.0.bin"));
        assertThat(restored.legacyLastSeen()).isEqualTo("shardId-000000000005");
        assertThat(restored.listed()).isTrue();
        assertThat(restored.shards()).containsOnlyKeys("shardId-000000000005");
        assertThat(restored.shards().get("shardId-000000000005").status()).isEqualTo(Status.READY);
        assertThat(restored.shards().get("shardId-000000000005").split())
                .isEqualTo(
                        new ShardSplit(
                                "shardId-000000000005",
                                ShardPosition.fromStart(),
                                SplitProgress.none(),
                                false));
        assertThat(STATES.deserialize(1, STATES.serialize(restored))).isEqualTo(restored);
    }

    @Test
    void enumeratorStateOfTheKinesisConnector430WithSeveralSplitsAndNoShardSeen()
            throws IOException {
        ShardEnumeratorState restored =
                STATES.deserialize(
                        0,
                        connectorGolden(
                                "shard-enumerator-v0-connector-4.3.0-two-splits-none-seen.bin"));
        assertThat(restored.legacyLastSeen()).isNull();
        assertThat(restored.shards().values())
                .extracting(Shard::status, s -> s.split().position())
                .containsExactly(
                        tuple(Status.READY, ShardPosition.continueFromSequenceNumber("4965012")),
                        tuple(
                                Status.READY,
                                ShardPosition.fromTimestamp(
                                        Instant.ofEpochMilli(1_796_000_000_123L))));
    }

    @Test
    void connectorBytesCutShortOrWithTrailingBytesAreRefusedWithAMessage() {
        byte[] split = connectorGolden("shard-split-v0-connector-4.3.0.bin");
        assertThatThrownBy(() -> SPLITS.deserialize(0, Arrays.copyOf(split, split.length - 1)))
                .isInstanceOf(IOException.class);
        assertThatThrownBy(() -> SPLITS.deserialize(0, Arrays.copyOf(split, split.length + 1)))
                .hasMessageContaining("trailing bytes");
        byte[] state = connectorGolden("shard-enumerator-v0-connector-4.3.0.bin");
        assertThatThrownBy(() -> STATES.deserialize(0, Arrays.copyOf(state, state.length + 1)))
                .hasMessageContaining("trailing bytes");
    }

    /** A file the connector wrote: never written again, there is no connector to write it. */
    private static byte[] connectorGolden(String name) {
        try {
            return Files.readAllBytes(Path.of("src/test/resources/golden", name));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Test
    void aVersionFromTheFutureIsRefusedWithAMessage() {
        assertThatThrownBy(() -> SPLITS.deserialize(2, new byte[0]))
                .hasMessageContaining("newer than this release reads");
        assertThatThrownBy(() -> STATES.deserialize(2, new byte[0]))
                .hasMessageContaining("newer than this release reads");
    }
}
