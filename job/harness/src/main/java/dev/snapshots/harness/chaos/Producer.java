package dev.snapshots.harness.chaos;

import dev.snapshots.job.Sources;
import dev.snapshots.job.config.JobConfig;
import dev.snapshots.job.source.TelemetryGenerator;
import dev.snapshots.key.PartKind;
import dev.snapshots.progress.CompletionPointer;
import dev.snapshots.store.ObjectStore;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicLong;
import software.amazon.awssdk.core.SdkBytes;
import software.amazon.awssdk.services.kinesis.KinesisClient;
import software.amazon.awssdk.services.kinesis.model.PutRecordsRequestEntry;

/**
 * Puts the generator's seeded stream into kinesalite on a thread of its own, every window's records
 * evenly over {@code --window-seconds}, as a stream keeps flowing whatever the job is doing; it
 * holds while a deployment brings up a new instance.
 */
final class Producer implements AutoCloseable {
    private static final int SLICES = 10;

    private final ChaosPlan plan;
    private final KinesisClient kinesis;
    private final String arn;
    private final JobConfig config;
    private final TelemetryGenerator generator;

    /** The starting hash key of each shard: where its records are pinned. */
    private final List<String> hashKeys;

    /** Read for the progress lines: how far the job has published, which instances run. */
    private final ObjectStore store;

    private final List<String> jobs;
    private final ChaosReport report;
    private final Progress progress;
    private final AtomicLong produced = new AtomicLong();
    private final ExecutorService thread = Executors.newSingleThreadExecutor();
    private Future<?> production;

    /** Set while a deployment brings up a new instance. */
    private volatile boolean holding;

    Producer(
            ChaosPlan plan,
            KinesisClient kinesis,
            String arn,
            JobConfig config,
            ObjectStore store,
            List<String> jobs,
            ChaosReport report,
            Progress progress) {
        this.plan = plan;
        this.kinesis = kinesis;
        this.arn = arn;
        this.config = config;
        this.generator = Sources.generatorFunction(config);
        this.hashKeys =
                kinesis.listShards(b -> b.streamARN(arn)).shards().stream()
                        .map(sh -> sh.hashKeyRange().startingHashKey())
                        .toList();
        this.store = store;
        this.jobs = jobs;
        this.report = report;
        this.progress = progress;
    }

    void start() {
        production =
                thread.submit(
                        () -> {
                            produce();
                            return null;
                        });
    }

    private void produce() throws Exception {
        long paceNanos = Duration.ofSeconds(plan.windowSeconds).toNanos();
        long t0 = System.nanoTime();
        for (int w = 0; w < plan.windows; w++) {
            for (int slice = 1;
                    slice <= SLICES;
                    slice++) { // evenly over the window's wall-clock time
                // While a deployment brings up a new instance the stream holds, then goes on at its
                // pace (no burst): so the overlap and the rolling update fall inside the run
                // however slowly a job starts.
                long heldSince = System.nanoTime();
                while (holding) {
                    Thread.sleep(50);
                }
                t0 += System.nanoTime() - heldSince;
                long to = (long) w * plan.perWindow + (long) plan.perWindow * slice / SLICES;
                put(produced.get(), to);
                produced.set(to);
                long wait = t0 + w * paceNanos + paceNanos * slice / SLICES - System.nanoTime();
                if (wait > 0) {
                    Thread.sleep(wait / 1_000_000);
                }
            }
            Optional<Long> through =
                    CompletionPointer.read(store, PartKind.SNAPSHOT, config.pipeline(), 1);
            report.pointer(
                    windowsProduced(),
                    progress.elapsedSeconds(),
                    through,
                    config.start().toEpochMilli());
            progress.say(
                    "window %d/%d produced; complete through %s; running %s",
                    w + 1,
                    plan.windows,
                    through.map(Instant::ofEpochMilli).map(Object::toString).orElse("-"),
                    jobs);
        }
    }

    void hold() {
        holding = true;
    }

    void resume() {
        holding = false;
    }

    /** Until {@code records} are produced, or production has ended. */
    void awaitProduced(long records) throws Exception {
        while (produced.get() < records && !production.isDone()) {
            Thread.sleep(50);
        }
        if (production.isDone()) {
            production.get(); // a producer failure surfaces here
        }
    }

    double windowsProduced() {
        return Math.round(produced.get() * 10.0 / plan.perWindow) / 10.0;
    }

    /**
     * Waits for every window to be produced, then sends a closing event per shard, one window past
     * the end, which moves every watermark past the last window. Returns the closing window.
     */
    long finish() throws Exception {
        production.get();
        long closing =
                config.start().toEpochMilli()
                        + (plan.windows + 1) * ChaosPlan.WINDOW_MILLIS
                        + 60_000;
        for (int shard = 0; shard < plan.shards; shard++) {
            send(
                    shard,
                    List.of(
                            ("{\"device\":\"closing\",\"ts\":" + closing + ",\"value\":0}")
                                    .getBytes(StandardCharsets.UTF_8)));
        }
        return closing - closing % ChaosPlan.WINDOW_MILLIS;
    }

    @Override
    public void close() {
        thread.shutdownNow();
    }

    /**
     * Records [from, to) of the generator's stream, each to a shard drawn by its index with weights
     * 1, 2, 4, ... (densities that differ), in order within each shard.
     */
    private void put(long from, long to) {
        List<List<byte[]>> perShard = new ArrayList<>();
        for (int shard = 0; shard < plan.shards; shard++) {
            perShard.add(new ArrayList<>());
        }
        long weights = (1L << plan.shards) - 1;
        for (long i = from; i < to; i++) {
            long draw = Math.floorMod(i * 0x9E3779B97F4A7C15L >>> 11, weights);
            perShard.get(63 - Long.numberOfLeadingZeros(draw + 1)).add(generator.map(i).payload);
        }
        for (int shard = 0; shard < plan.shards; shard++) {
            send(shard, perShard.get(shard));
        }
    }

    private void send(int shard, List<byte[]> payloads) {
        // Explicit hash keys at the start of each shard's range pin every record to its shard.
        String hashKey = hashKeys.get(shard);
        for (int from = 0; from < payloads.size(); from += 500) {
            List<PutRecordsRequestEntry> batch =
                    payloads.subList(from, Math.min(payloads.size(), from + 500)).stream()
                            .map(
                                    p ->
                                            PutRecordsRequestEntry.builder()
                                                    .data(SdkBytes.fromByteArray(p))
                                                    .partitionKey("p")
                                                    .explicitHashKey(hashKey)
                                                    .build())
                            .toList();
            int failed =
                    kinesis.putRecords(
                                    r ->
                                            r.streamARN(arn)
                                                    .streamName(arn.substring(arn.indexOf('/') + 1))
                                                    .records(batch))
                            .failedRecordCount();
            if (failed > 0) {
                throw new IllegalStateException(failed + " records were refused by Kinesis");
            }
        }
    }
}
