package dev.snapshots.job.source.kinesis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.snapshots.harness.cluster.Kinesalite;
import dev.snapshots.harness.testutils.KinesaliteServer;
import dev.snapshots.job.source.SplitProgress;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.IntStream;
import org.apache.flink.connector.base.source.reader.splitreader.SplitsAddition;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.core.SdkBytes;
import software.amazon.awssdk.services.kinesis.KinesisClient;
import software.amazon.awssdk.services.kinesis.model.PutRecordsRequestEntry;

/**
 * The source's own lag, what each job version's stream-lag alarm reads on ECS (the reader's gauge
 * {@code millisBehindLatest}): the fetcher records each shard's MillisBehindLatest from its
 * GetRecords answers, against kinesalite.
 */
class ShardLagITCase {

    @Test
    void eachShardsLagIsWhatItsLastGetRecordsSaid() throws Exception {
        Kinesalite kinesis = KinesaliteServer.get();
        KinesisClient client = kinesis.client();
        String name = "lag-" + Long.toHexString(System.nanoTime());
        String arn = Kinesalite.createStream(client, name, 1);
        client.putRecords(
                b ->
                        b.streamName(name)
                                .records(
                                        IntStream.range(0, 30)
                                                .mapToObj(
                                                        i ->
                                                                PutRecordsRequestEntry.builder()
                                                                        .partitionKey("k" + i)
                                                                        .data(
                                                                                SdkBytes
                                                                                        .fromUtf8String(
                                                                                                "{}"))
                                                                        .build())
                                                .toList()));
        String shard = client.listShards(b -> b.streamARN(arn)).shards().get(0).shardId();
        Properties aws = new Properties();
        aws.setProperty("aws.region", "us-east-1");
        aws.setProperty("aws.endpoint", kinesis.endpoint());
        KinesisShardSource.Settings settings =
                new KinesisShardSource.Settings(
                        arn,
                        aws,
                        "TRIM_HORIZON",
                        Duration.ofSeconds(10),
                        KinesisShardSource.Settings.DEFAULT_POLL_INTERVAL,
                        0);
        Map<String, Long> behind = new ConcurrentHashMap<>();
        ShardFetcher fetcher = new ShardFetcher(settings, Set.of(), behind);
        try {
            fetcher.handleSplitsChanges(
                    new SplitsAddition<>(
                            List.of(
                                    new ShardSplit(
                                            shard,
                                            ShardPosition.fromStart(),
                                            SplitProgress.none(),
                                            false))));
            assertThat(behind).as("nothing read yet").isEmpty();
            // Read until a GetRecords comes back empty at the tip: the shard is then 0 ms behind.
            long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (!Long.valueOf(0).equals(behind.get(shard))) {
                assertThat(System.nanoTime()).as("caught up: %s", behind).isLessThan(deadline);
                fetcher.fetch();
            }
            assertThat(behind).containsOnlyKeys(shard);
        } finally {
            fetcher.close();
        }
    }
}
