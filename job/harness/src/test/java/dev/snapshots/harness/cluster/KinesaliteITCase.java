package dev.snapshots.harness.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import dev.snapshots.harness.testutils.KinesaliteServer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.core.SdkBytes;
import software.amazon.awssdk.services.kinesis.KinesisClient;
import software.amazon.awssdk.services.kinesis.model.GetRecordsResponse;
import software.amazon.awssdk.services.kinesis.model.PutRecordsRequestEntry;
import software.amazon.awssdk.services.kinesis.model.Record;
import software.amazon.awssdk.services.kinesis.model.Shard;
import software.amazon.awssdk.services.kinesis.model.ShardIteratorType;

/**
 * kinesalite behind the shim works for a reader that names the stream only by ARN, as the Flink
 * connector does.
 */
class KinesaliteITCase {

    @Test
    void recordsPutByNameAreReadBackByArnAcrossAllShards() {
        Kinesalite kinesis = KinesaliteServer.get();
        KinesisClient client = kinesis.client();
        String name = "fixture-" + Long.toHexString(System.nanoTime());
        String arn = Kinesalite.createStream(client, name, 2);
        assertThat(arn)
                .isEqualTo(
                        "arn:aws:kinesis:us-east-1:" + Kinesalite.ACCOUNT_ID + ":stream/" + name);

        List<String> sent = IntStream.range(0, 20).mapToObj(i -> "record-" + i).toList();
        var put =
                client.putRecords(
                        b ->
                                b.streamName(name)
                                        .records(
                                                sent.stream()
                                                        .map(
                                                                s ->
                                                                        PutRecordsRequestEntry
                                                                                .builder()
                                                                                .partitionKey(s)
                                                                                .data(
                                                                                        SdkBytes
                                                                                                .fromUtf8String(
                                                                                                        s))
                                                                                .build())
                                                        .toList()));
        assertThat(put.failedRecordCount()).isZero();

        // From here on only streamARN, never streamName: this is what needs the shim.
        List<Shard> shards = client.listShards(b -> b.streamARN(arn)).shards();
        assertThat(shards).hasSize(2);
        List<String> received = new ArrayList<>();
        List<Integer> perShard = new ArrayList<>();
        for (Shard shard : shards) {
            String iterator =
                    client.getShardIterator(
                                    b ->
                                            b.streamARN(arn)
                                                    .shardId(shard.shardId())
                                                    .shardIteratorType(
                                                            ShardIteratorType.TRIM_HORIZON))
                            .shardIterator();
            GetRecordsResponse records =
                    client.getRecords(b -> b.streamARN(arn).shardIterator(iterator));
            records.records().stream()
                    .map(Record::data)
                    .map(d -> d.asString(StandardCharsets.UTF_8))
                    .forEach(received::add);
            perShard.add(records.records().size());
        }

        assertThat(received).containsExactlyInAnyOrderElementsOf(sent);
        // 20 distinct partition keys over two hash ranges: both shards hold some, so both were
        // really read.
        assertThat(perShard).allMatch(n -> n > 0);
    }
}
