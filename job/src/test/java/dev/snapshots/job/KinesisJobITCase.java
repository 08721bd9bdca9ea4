package dev.snapshots.job;

import static org.assertj.core.api.Assertions.assertThat;

import dev.snapshots.job.testutils.KinesaliteServer;
import dev.snapshots.key.PartKind;
import dev.snapshots.progress.CompletionPointer;
import dev.snapshots.store.ObjectStore;
import dev.snapshots.store.StoreSpec;
import dev.snapshots.testutils.StoreKind;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import software.amazon.awssdk.core.SdkBytes;
import software.amazon.awssdk.services.kinesis.model.PutRecordsRequestEntry;

/**
 * Kinesis (kinesalite, a real Kinesis API endpoint) into the job into S3 (S3Proxy): generated
 * telemetry, malformed and late records included, produced with the AWS SDK into a 2-shard
 * stream, comes out as exactly one part per (window, bucket) equal to the reference, and every
 * malformed or late record as a dead letter with its reason.
 */
class KinesisJobITCase {
    @RegisterExtension
    static final MiniClusterExtension CLUSTER = new MiniClusterExtension(new MiniClusterResourceConfiguration.Builder()
            .setNumberTaskManagers(2)
            .setNumberSlotsPerTaskManager(2)
            .build());

    private static final int WINDOWS = 8;
    private static final String[] SHARD_HASH_KEYS = {"0", new BigInteger("2").pow(127).toString()};

    @TempDir
    Path tmp;

    @Test
    void recordsProducedIntoATwoShardStreamBecomeOneSnapshotPerWindowAndBucketAndReasonedDeadLetters() throws Exception {
        Kinesalite kinesis = KinesaliteServer.get();
        String arn = Kinesalite.createStream(kinesis.client(), "telemetry-" + System.nanoTime(), 2);
        StoreSpec store = StoreKind.S3_INLINE.fresh();
        // Event time starts now: Kinesis stamps arrival with the wall clock, and the horizon is judged against it.
        long start = System.currentTimeMillis() - System.currentTimeMillis() % 300_000;
        JobConfig config = JobConfig.parse(new String[] {"--source", "kinesis", "--start", java.time.Instant.ofEpochMilli(start).toString(), "--stream-arn", arn,
            "--kinesis-endpoint", kinesis.endpoint(), "--store", store.uri().toString(), "--endpoint", store.endpoint().get(),
            "--parallelism", "2", "--windows", Integer.toString(WINDOWS), "--events-per-window", "150", "--keys", "30",
            "--bad-every", "13", "--late-every", "41", "--checkpoint-interval", "500ms"});
        TelemetryGenerator generator = Sources.generatorFunction(config);
        long records = Sources.generatorCount(config);

        // Each shard gets a contiguous, ordered share of the stream, as a producer keyed by record would.
        List<List<PutRecordsRequestEntry>> perShard = List.of(new ArrayList<>(), new ArrayList<>());
        for (long i = 0; i < records; i++) {
            int shard = (int) (i % 2);
            perShard.get(shard).add(entry(generator.map(i).payload, shard));
        }
        // A closing event per shard, one window past the end, moves both watermarks past the last window.
        long closing = start + (WINDOWS + 1) * config.windowLength().toMillis() + 60_000;
        for (int shard = 0; shard < 2; shard++) {
            perShard.get(shard).add(entry(("{\"device\":\"closing\",\"ts\":" + closing + ",\"value\":0}").getBytes(StandardCharsets.UTF_8), shard));
        }
        for (List<PutRecordsRequestEntry> entries : perShard) {
            for (int from = 0; from < entries.size(); from += 500) {
                List<PutRecordsRequestEntry> batch = entries.subList(from, Math.min(entries.size(), from + 500));
                assertThat(kinesis.client().putRecords(r -> r.streamName(arn.substring(arn.indexOf('/') + 1)).records(batch))
                        .failedRecordCount()).isZero();
            }
        }

        JobClient job = SnapshotJob.start(StreamExecutionEnvironment.getExecutionEnvironment(), config);
        // Every window before the closing events' window holds generated events only.
        long closingWindow = closing - closing % config.windowLength().toMillis();
        try (ObjectStore s = store.open()) {
            long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(3);
            while (CompletionPointer.read(s, PartKind.SNAPSHOT, config.pipeline(), 1).orElse(0L) < closingWindow) {
                assertThat(System.nanoTime()).as("the pointer passes the last window").isLessThan(deadline);
                Thread.sleep(100);
            }
        }
        // Draining ends event time: the closing window and every dead-letter window are published too.
        job.stopWithSavepoint(true, tmp.toUri().toString(), SavepointFormatType.CANONICAL).get(2, TimeUnit.MINUTES);

        Reference ref = Reference.of(generator, records, config.windowLength().toMillis(), config.buckets());
        Reference published;
        try (ObjectStore s = store.open()) {
            published = Reference.published(s, 1, closingWindow);
        }
        Map<String, Set<String>> parts = published.parts;
        Map<String, Long> reasons = published.deadLetterReasons;
        System.out.printf("FIGURES kinesis: records=%d parts=%d dead-letters=%s%n", records, parts.size(), reasons);
        assertThat(published.objects).as("objects per part").allSatisfy((part, n) -> assertThat(n).isOne());
        assertThat(parts).as("snapshot rows per (window, bucket)").isEqualTo(ref.parts);
        assertThat(reasons).as("dead letters by reason").isEqualTo(ref.deadLetterReasons);
    }

    private static PutRecordsRequestEntry entry(byte[] payload, int shard) {
        return PutRecordsRequestEntry.builder()
                .data(SdkBytes.fromByteArray(payload))
                .partitionKey("p")
                .explicitHashKey(SHARD_HASH_KEYS[shard])
                .build();
    }
}
