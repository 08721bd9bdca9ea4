package dev.snapshots.job;

import static org.assertj.core.api.Assertions.assertThat;

import dev.snapshots.harness.JobOutput;
import dev.snapshots.harness.cluster.Kinesalite;
import dev.snapshots.job.config.JobConfig;
import dev.snapshots.job.config.JobOptions;
import dev.snapshots.job.source.TelemetryGenerator;
import dev.snapshots.job.testutils.KplEncoder;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.function.ToIntFunction;
import software.amazon.awssdk.core.SdkBytes;
import software.amazon.awssdk.services.kinesis.KinesisClient;
import software.amazon.awssdk.services.kinesis.model.PutRecordsRequestEntry;
import software.amazon.awssdk.services.kinesis.model.Shard;
import software.amazon.awssdk.services.kinesis.model.StreamStatus;

/**
 * A kinesalite stream fed by several producers ("lanes"), each a {@link TelemetryGenerator} of its
 * own density pinned to one hash key, as a producer keyed by device group would be. Lanes start as
 * one per shard; after a reshard a lane's records follow its hash key into a child shard. Every
 * lane's late records are late in its own order, so the reference holds whatever shard carries
 * them.
 */
final class ShardedStream {
    final String name;
    final String arn;
    final List<Lane> lanes = new ArrayList<>();
    private final KinesisClient client;
    private final long windowMillis;

    /**
     * One producer: its generator, how many records it makes, and the hash key that routes them.
     */
    record Lane(TelemetryGenerator generator, long records, int eventsPerWindow, String hashKey) {}

    private ShardedStream(KinesisClient client, String name, String arn, long windowMillis) {
        this.client = client;
        this.name = name;
        this.arn = arn;
        this.windowMillis = windowMillis;
    }

    /**
     * A stream with one shard per entry of {@code eventsPerWindow}, each shard fed by one lane of
     * that density over {@code windows} windows from {@code startMillis}; nothing is produced yet.
     */
    static ShardedStream create(Kinesalite kinesis, JobConfig config, int[] eventsPerWindow) {
        KinesisClient client = kinesis.client();
        String name = "sharded-" + Long.toHexString(System.nanoTime());
        String arn = Kinesalite.createStream(client, name, eventsPerWindow.length);
        ShardedStream s = new ShardedStream(client, name, arn, config.windowLength().toMillis());
        List<Shard> shards = client.listShards(b -> b.streamName(name)).shards();
        for (int i = 0; i < eventsPerWindow.length; i++) {
            TelemetryGenerator g =
                    new TelemetryGenerator(
                            config.start().toEpochMilli(),
                            config.get(JobOptions.SEED) + i,
                            (int) config.get(JobOptions.KEYS),
                            s.windowMillis,
                            eventsPerWindow[i],
                            (int) config.get(JobOptions.BAD_EVERY),
                            (int) config.get(JobOptions.LATE_EVERY),
                            config.get(JobOptions.OUT_OF_ORDERNESS).toMillis(),
                            (int) config.get(JobOptions.MAX_RECORD_BYTES));
            s.lanes.add(
                    new Lane(
                            g,
                            config.get(JobOptions.WINDOWS) * eventsPerWindow[i],
                            eventsPerWindow[i],
                            shards.get(i).hashKeyRange().startingHashKey()));
        }
        return s;
    }

    /**
     * Produces every lane's records of windows [from, to), a tenth of a window at a time across all
     * lanes, so lanes move through event time together as live producers would.
     */
    void produce(int fromWindow, int toWindow) {
        for (int tenth = fromWindow * 10; tenth < toWindow * 10; tenth++) {
            List<PutRecordsRequestEntry> batch = new ArrayList<>();
            for (Lane lane : lanes) {
                for (long i = (long) tenth * lane.eventsPerWindow / 10;
                        i < (long) (tenth + 1) * lane.eventsPerWindow / 10 && i < lane.records;
                        i++) {
                    batch.add(entry(lane.generator.map(i).payload, lane.hashKey));
                }
            }
            put(batch);
        }
    }

    /**
     * A last event for every open shard, one window past the last of {@code windows} windows from
     * {@code startMillis}: moves every shard's watermark past them. Returns the window of the
     * closing events, which holds nothing else.
     */
    long produceClosing(int windows, long startMillis) {
        return produceClosing(startMillis + (windows + 1) * windowMillis + 60_000);
    }

    /** A closing event at {@code closing} for every open shard; returns its window. */
    long produceClosing(long closing) {
        List<PutRecordsRequestEntry> batch = new ArrayList<>();
        for (Shard shard : client.listShards(b -> b.streamName(name)).shards()) {
            if (shard.sequenceNumberRange().endingSequenceNumber() == null) {
                batch.add(
                        entry(
                                ("{\"device\":\"closing\",\"ts\":" + closing + ",\"value\":0}")
                                        .getBytes(StandardCharsets.UTF_8),
                                shard.hashKeyRange().startingHashKey()));
            }
        }
        put(batch);
        return closing - closing % windowMillis;
    }

    /**
     * Produces windows [from, to) as KPL aggregates: each tenth of a window of each lane is packed
     * into aggregates of at most {@code perAggregate} user records.
     */
    void produceAggregated(int fromWindow, int toWindow, int perAggregate) {
        for (int tenth = fromWindow * 10; tenth < toWindow * 10; tenth++) {
            List<PutRecordsRequestEntry> batch = new ArrayList<>();
            for (Lane lane : lanes) {
                List<byte[]> users = new ArrayList<>();
                for (long i = (long) tenth * lane.eventsPerWindow / 10;
                        i < (long) (tenth + 1) * lane.eventsPerWindow / 10 && i < lane.records;
                        i++) {
                    users.add(lane.generator.map(i).payload);
                    if (users.size() == perAggregate) {
                        batch.add(entry(KplEncoder.aggregate("p", users), lane.hashKey));
                        users = new ArrayList<>();
                    }
                }
                if (!users.isEmpty()) {
                    batch.add(entry(KplEncoder.aggregate("p", users), lane.hashKey));
                }
            }
            put(batch);
        }
    }

    /** Lane {@code lane}'s records [from, to). */
    void produce(int lane, long from, long to) {
        List<PutRecordsRequestEntry> batch = new ArrayList<>();
        for (long i = from; i < to; i++) {
            batch.add(entry(lanes.get(lane).generator.map(i).payload, lanes.get(lane).hashKey));
        }
        put(batch);
    }

    /** One record as it is, into the shard that carries lane {@code lane}. */
    void putRaw(int lane, byte[] data) {
        put(List.of(entry(data, lanes.get(lane).hashKey)));
    }

    /** Splits the shard that now carries lane {@code lane} in two halves of its hash range. */
    void split(int lane) {
        Shard shard = openShardOf(lanes.get(lane).hashKey);
        BigInteger from = new BigInteger(shard.hashKeyRange().startingHashKey());
        BigInteger to = new BigInteger(shard.hashKeyRange().endingHashKey());
        client.splitShard(
                b ->
                        b.streamName(name)
                                .shardToSplit(shard.shardId())
                                .newStartingHashKey(from.add(to).shiftRight(1).toString()));
        awaitActive();
    }

    /** Merges the shards that now carry lanes {@code a} and {@code b}, which must be adjacent. */
    void merge(int a, int b) {
        String first = openShardOf(lanes.get(a).hashKey).shardId();
        String second = openShardOf(lanes.get(b).hashKey).shardId();
        client.mergeShards(
                r -> r.streamName(name).shardToMerge(first).adjacentShardToMerge(second));
        awaitActive();
    }

    private Shard openShardOf(String hashKey) {
        BigInteger key = new BigInteger(hashKey);
        return client.listShards(b -> b.streamName(name)).shards().stream()
                .filter(s -> s.sequenceNumberRange().endingSequenceNumber() == null)
                .filter(
                        s ->
                                new BigInteger(s.hashKeyRange().startingHashKey()).compareTo(key)
                                                <= 0
                                        && new BigInteger(s.hashKeyRange().endingHashKey())
                                                        .compareTo(key)
                                                >= 0)
                .findFirst()
                .orElseThrow();
    }

    private void awaitActive() {
        long deadline = System.nanoTime() + 30_000_000_000L;
        while (client.describeStreamSummary(b -> b.streamName(name))
                        .streamDescriptionSummary()
                        .streamStatus()
                != StreamStatus.ACTIVE) {
            assertThat(System.nanoTime())
                    .as("stream %s ACTIVE again after a reshard", name)
                    .isLessThan(deadline);
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
        }
    }

    JobOutput reference(ToIntFunction<String> bucketOf) {
        return JobOutput.expected(
                lanes.stream().map(l -> new JobOutput.Lane(l.generator, 0, l.records)).toList(),
                windowMillis,
                bucketOf);
    }

    private void put(List<PutRecordsRequestEntry> entries) {
        for (int from = 0; from < entries.size(); from += 500) {
            List<PutRecordsRequestEntry> part =
                    entries.subList(from, Math.min(entries.size(), from + 500));
            assertThat(client.putRecords(r -> r.streamName(name).records(part)).failedRecordCount())
                    .isZero();
        }
    }

    static PutRecordsRequestEntry entry(byte[] payload, String hashKey) {
        return PutRecordsRequestEntry.builder()
                .data(SdkBytes.fromByteArray(payload))
                .partitionKey("p")
                .explicitHashKey(hashKey)
                .build();
    }
}
