package dev.snapshots.job.source.kinesis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.snapshots.job.source.SplitProgress;
import dev.snapshots.job.source.kinesis.ShardEnumeratorState.Shard;
import dev.snapshots.job.source.kinesis.ShardEnumeratorState.Status;
import dev.snapshots.job.testutils.Golden;
import java.io.IOException;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.apache.flink.connector.kinesis.source.enumerator.KinesisStreamsSourceEnumeratorState;
import org.apache.flink.connector.kinesis.source.enumerator.KinesisStreamsSourceEnumeratorStateSerializer;
import org.apache.flink.connector.kinesis.source.split.KinesisShardSplit;
import org.apache.flink.connector.kinesis.source.split.KinesisShardSplitSerializer;
import org.apache.flink.connector.kinesis.source.split.StartingPosition;
import org.junit.jupiter.api.Test;

/**
 * The Kinesis source's checkpointed formats: today's, byte for byte, and what
 * flink-connector-kinesis 4.3.0 wrote before this source replaced it (a savepoint taken then must
 * restore).
 */
class ShardSerializersTest {
    private static final String ARN = "arn:aws:kinesis:us-east-1:000000000000:stream/telemetry";
    private static final ShardSplit.Serializer SPLITS = new ShardSplit.Serializer();
    private static final ShardEnumeratorState.Serializer STATES =
            new ShardEnumeratorState.Serializer();

    private static final List<ShardSplit> SPLIT_CASES =
            List.of(
                    new ShardSplit(
                            "shardId-000000000000",
                            StartingPosition.fromStart(),
                            SplitProgress.none(),
                            false),
                    new ShardSplit(
                            "shardId-000000000001",
                            StartingPosition.continueFromSequenceNumber("49650"),
                            new SplitProgress(1_796_000_000_000L, 1_796_000_100_000L),
                            false),
                    new ShardSplit(
                            "shardId-000000000002",
                            StartingPosition.fromTimestamp(
                                    Instant.ofEpochMilli(1_796_000_000_123L)),
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

    @Test
    void splitsCheckpointedByTheKinesisConnector430ResumeAtTheirPositionWithNoProgress()
            throws IOException {
        KinesisShardSplit legacy =
                new KinesisShardSplit(
                        ARN,
                        "shardId-000000000003",
                        StartingPosition.continueFromSequenceNumber("4965012"));
        byte[] golden =
                Golden.bytes(
                        "shard-split-v0-connector-4.3.0.bin",
                        new KinesisShardSplitSerializer().serialize(legacy));
        assertThat(new KinesisShardSplitSerializer().serialize(legacy)).isEqualTo(golden);
        assertThat(SPLITS.deserialize(0, golden))
                .isEqualTo(
                        new ShardSplit(
                                "shardId-000000000003",
                                StartingPosition.continueFromSequenceNumber("4965012"),
                                SplitProgress.none(),
                                false));
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
        KinesisStreamsSourceEnumeratorState legacy =
                new KinesisStreamsSourceEnumeratorState(
                        Set.of(
                                new KinesisShardSplit(
                                        ARN, "shardId-000000000005", StartingPosition.fromStart())),
                        "shardId-000000000005");
        KinesisStreamsSourceEnumeratorStateSerializer connector =
                new KinesisStreamsSourceEnumeratorStateSerializer(
                        new KinesisShardSplitSerializer());
        byte[] golden =
                Golden.bytes(
                        "shard-enumerator-v0-connector-4.3.0.bin", connector.serialize(legacy));
        assertThat(connector.serialize(legacy)).isEqualTo(golden);

        ShardEnumeratorState restored = STATES.deserialize(0, golden);
        assertThat(restored.legacyLastSeen()).isEqualTo("shardId-000000000005");
        assertThat(restored.shards()).containsOnlyKeys("shardId-000000000005");
        assertThat(restored.shards().get("shardId-000000000005").status()).isEqualTo(Status.READY);
        assertThat(restored.shards().get("shardId-000000000005").split().position())
                .isEqualTo(StartingPosition.fromStart());
    }

    @Test
    void aVersionFromTheFutureIsRefusedWithAMessage() {
        assertThatThrownBy(() -> SPLITS.deserialize(2, new byte[0]))
                .hasMessageContaining("newer than this release reads");
        assertThatThrownBy(() -> STATES.deserialize(2, new byte[0]))
                .hasMessageContaining("newer than this release reads");
    }
}
