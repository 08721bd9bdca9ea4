package dev.snapshots.job.sql;

import static org.assertj.core.api.Assertions.assertThat;

import dev.snapshots.harness.cluster.Kinesalite;
import dev.snapshots.harness.testutils.KinesaliteServer;
import dev.snapshots.job.testutils.KplEncoder;
import dev.snapshots.testkit.StoreKind;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.table.api.EnvironmentSettings;
import org.apache.flink.table.api.TableEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.flink.types.Row;
import org.apache.flink.util.CloseableIterator;
import org.apache.flink.util.FileUtils;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import software.amazon.awssdk.core.SdkBytes;
import software.amazon.awssdk.services.kinesis.KinesisClient;
import software.amazon.awssdk.services.kinesis.model.PutRecordResponse;
import software.amazon.awssdk.services.kinesis.model.Record;
import software.amazon.awssdk.services.kinesis.model.Shard;
import software.amazon.awssdk.services.kinesis.model.ShardIteratorType;

/**
 * What a snapshots-kinesis table reads, against kinesalite, by a plain {@code SELECT}: its metadata
 * columns equal what Kinesis said of each record when it was put (shard, sequence number) and read
 * back (arrival time); and an {@code AT_TIMESTAMP} start reads the records that arrived from then
 * on, and nothing before.
 */
class KinesisTableReadsITCase {
    @RegisterExtension
    static final MiniClusterExtension CLUSTER =
            new MiniClusterExtension(
                    new MiniClusterResourceConfiguration.Builder()
                            .setNumberTaskManagers(1)
                            .setNumberSlotsPerTaskManager(2)
                            .setConfiguration(new Configuration())
                            .build());

    private static final long START = Instant.parse("2026-12-01T00:00:00Z").toEpochMilli();
    private static final int SHARDS = 2;

    private Path root;

    @AfterEach
    void deleteStore() throws Exception {
        if (root != null) {
            FileUtils.deleteDirectory(root.toFile());
        }
    }

    /**
     * Orders on two shards, three of them in one KPL aggregate: each row's {@code shard-id} and
     * {@code sequence-number} are the ones PutRecord answered for its record (the aggregate's for
     * its user records), its {@code arrival-time} and {@code timestamp} the record's
     * ApproximateArrivalTimestamp as GetRecords returns it.
     */
    @Test
    void theMetadataColumnsAreWhatKinesisSaidOfEachRecord() throws Exception {
        Stream stream = new Stream("metadata");
        Map<String, PutRecordResponse> put = new HashMap<>();
        for (int s = 0; s < SHARDS; s++) {
            for (int i = 0; i < 5; i++) {
                String customer = "c-" + s + "-" + i;
                put.put(customer, stream.put(s, order(customer, i)));
            }
        }
        List<String> aggregated = List.of("k-0", "k-1", "k-2");
        PutRecordResponse aggregate =
                stream.put(
                        1,
                        KplEncoder.aggregate(
                                "p", aggregated.stream().map(c -> order(c, 7)).toList()));
        aggregated.forEach(c -> put.put(c, aggregate));
        Map<String, Instant> arrivals = stream.arrivals();

        List<String> expected = new ArrayList<>();
        put.forEach(
                (customer, r) -> {
                    String arrival = arrivals.get(r.sequenceNumber()).toString();
                    expected.add(
                            String.join(
                                    " ",
                                    customer,
                                    r.shardId(),
                                    r.sequenceNumber(),
                                    arrival,
                                    arrival));
                });

        List<String> rows =
                select(
                        stream.table(
                                "shard STRING METADATA FROM 'shard-id' VIRTUAL,"
                                        + " `sequence-number` STRING METADATA VIRTUAL,"
                                        + " arrival TIMESTAMP_LTZ(3) METADATA FROM 'arrival-time'"
                                        + " VIRTUAL,"
                                        + " `timestamp` TIMESTAMP_LTZ(3) METADATA VIRTUAL,",
                                ""),
                        "SELECT customer, shard, `sequence-number`, arrival, `timestamp` FROM"
                                + " orders",
                        expected.size());

        assertThat(new TreeSet<>(rows)).isEqualTo(new TreeSet<>(expected));
        assertThat(rows).hasSize(expected.size());
    }

    /**
     * Orders on both shards, then, once the clock is past the last one's arrival, more: a table
     * starting AT_TIMESTAMP just after that arrival reads the later ones, and none of the earlier.
     */
    @Test
    void anAtTimestampStartReadsWhatArrivedFromThenOnAndNothingBefore() throws Exception {
        Stream stream = new Stream("at-timestamp");
        for (int s = 0; s < SHARDS; s++) {
            for (int i = 0; i < 3; i++) {
                stream.put(s, order("before-" + s + "-" + i, i));
            }
        }
        Instant from =
                stream.arrivals().values().stream()
                        .max(Instant::compareTo)
                        .orElseThrow()
                        .plusMillis(1);
        while (!Instant.now().isAfter(from)) {
            Thread.sleep(5); // kinesalite stamps arrivals with this host's clock
        }
        List<String> expected = new ArrayList<>();
        for (int s = 0; s < SHARDS; s++) {
            for (int i = 3; i < 6; i++) {
                expected.add("after-" + s + "-" + i);
                stream.put(s, order("after-" + s + "-" + i, i));
            }
        }

        List<String> rows =
                select(
                        stream.table(
                                "",
                                ", 'source.init.position' = 'AT_TIMESTAMP',"
                                        + " 'source.init.timestamp' = '"
                                        + from
                                        + "'"),
                        "SELECT customer FROM orders",
                        expected.size());

        assertThat(rows).containsExactlyInAnyOrderElementsOf(expected);
    }

    private static byte[] order(String customer, int second) {
        return ("{\"customer\":\""
                        + customer
                        + "\",\"amount\":1.00,\"order_time\":\""
                        + Instant.ofEpochMilli(START + second * 1_000L)
                                .toString()
                                .replace('T', ' ')
                                .replace("Z", "")
                        + "\"}")
                .getBytes(StandardCharsets.UTF_8);
    }

    /**
     * Runs {@code query} over {@code ddl}'s table until it has returned {@code count} rows, then
     * cancels it; each row's fields joined by spaces.
     */
    private List<String> select(String ddl, String query, int count) throws Exception {
        TableEnvironment tables = TableEnvironment.create(EnvironmentSettings.inStreamingMode());
        tables.getConfig().set("parallelism.default", "2");
        tables.getConfig().set("execution.checkpointing.interval", "500 ms");
        tables.executeSql(ddl);
        List<String> rows = new ArrayList<>();
        try (CloseableIterator<Row> it = tables.executeSql(query).collect()) {
            while (rows.size() < count && it.hasNext()) {
                Row row = it.next();
                List<String> fields = new ArrayList<>();
                for (int i = 0; i < row.getArity(); i++) {
                    fields.add(String.valueOf(row.getField(i)));
                }
                rows.add(String.join(" ", fields));
            }
        }
        return rows;
    }

    /** A new kinesalite stream of {@link #SHARDS} shards. */
    private final class Stream {
        final KinesisClient client = KinesaliteServer.get().client();
        final String name;
        final String arn;
        final List<Shard> shards;

        Stream(String prefix) {
            name = prefix + "-" + Long.toHexString(System.nanoTime());
            arn = Kinesalite.createStream(client, name, SHARDS);
            shards = client.listShards(b -> b.streamName(name)).shards();
        }

        PutRecordResponse put(int shard, byte[] data) {
            return client.putRecord(
                    b ->
                            b.streamName(name)
                                    .partitionKey("p")
                                    .explicitHashKey(
                                            shards.get(shard).hashKeyRange().startingHashKey())
                                    .data(SdkBytes.fromByteArray(data)));
        }

        /** Every record's ApproximateArrivalTimestamp, by sequence number, read back. */
        Map<String, Instant> arrivals() {
            Map<String, Instant> out = new HashMap<>();
            for (Shard s : shards) {
                String iterator =
                        client.getShardIterator(
                                        b ->
                                                b.streamName(name)
                                                        .shardId(s.shardId())
                                                        .shardIteratorType(
                                                                ShardIteratorType.TRIM_HORIZON))
                                .shardIterator();
                for (Record r : client.getRecords(b -> b.shardIterator(iterator)).records()) {
                    out.put(r.sequenceNumber(), r.approximateArrivalTimestamp());
                }
            }
            return out;
        }

        /** The orders table over this stream, with {@code columns} and {@code options} added. */
        String table(String columns, String options) {
            root = Path.of(StoreKind.FILESYSTEM.fresh().uri());
            return "CREATE TABLE orders (customer STRING, amount DECIMAL(10, 2), order_time"
                    + " TIMESTAMP(3), "
                    + columns
                    + " WATERMARK FOR order_time AS order_time - INTERVAL '5' SECOND) WITH"
                    + " ('connector' = 'snapshots-kinesis', 'format' = 'json', 'stream.arn' = '"
                    + arn
                    + "', 'window' = '1 min', 'aws.endpoint' = '"
                    + KinesaliteServer.get().endpoint()
                    + "', 'source.shard.discovery-interval' = '1 s', 'dead-letters.store' = '"
                    + root.toUri()
                    + "', 'dead-letters.pipeline' = 'orders', 'dead-letters.job-version' = '1'"
                    + options
                    + ")";
        }
    }
}
