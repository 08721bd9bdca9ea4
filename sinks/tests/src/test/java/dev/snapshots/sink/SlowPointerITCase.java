package dev.snapshots.sink;

import dev.snapshots.key.ObjectKeys;
import dev.snapshots.store.ObjectStore;
import dev.snapshots.store.StoreSpec;
import dev.snapshots.testkit.FaultProxy;
import dev.snapshots.testkit.S3ProxyServer;
import dev.snapshots.testkit.StoreKind;
import dev.snapshots.testutils.Readings;
import dev.snapshots.testutils.SnapshotTestJob;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.flink.client.program.rest.RestClusterClient;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.flink.test.junit5.InjectClusterClient;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The completion pointer's writes are slow (held in the store), the rest is not: checkpoints, and
 * so commits, go on, because the pointer task writes off its mailbox thread. Before, its update
 * held the task, every barrier waited for it, and nothing was published meanwhile.
 */
class SlowPointerITCase {
    @RegisterExtension
    static final MiniClusterExtension CLUSTER =
            new MiniClusterExtension(
                    new MiniClusterResourceConfiguration.Builder()
                            .setNumberTaskManagers(1)
                            .setNumberSlotsPerTaskManager(4)
                            .build());

    private static final Readings READINGS = Readings.of(24, 60_000, 60, 40);

    @Test
    void partsArePublishedWhileThePointersWriteIsHeld(
            @InjectClusterClient RestClusterClient<?> client) throws Exception {
        StoreSpec direct = StoreKind.S3_INLINE.fresh();
        try (FaultProxy proxy = new FaultProxy(S3ProxyServer.get().endpoint(), 3);
                ObjectStore store = direct.open()) {
            SnapshotTestJob job = job(direct, proxy);
            proxy.delayWrites("/_progress/", Duration.ofMinutes(10));
            JobClient running = job.start();

            await(() -> proxy.delayed() > 0, "a write of the pointer's log to be held");
            int before = parts(store);
            await(
                    () -> parts(store) >= before + 2 * job.bucketCount(),
                    "two more windows published while the pointer's write is held");
            proxy.heal();
            running.getJobExecutionResult().get(3, TimeUnit.MINUTES);

            SnapshotSinkITCase.assertPublishedExactlyOnce(direct, READINGS, job.bucketCount(), 1);
            System.out.printf(
                    "[figures] pointer held: %s%n", checkpoints(client, running.getJobID()));
        }
    }

    /**
     * Checkpoint durations with every pointer write 10 s late: a figure, not an assertion (see
     * docs/BENCHMARKS.md for the figures before and after the pointer task wrote off its mailbox).
     */
    @Test
    void checkpointsWithTenSecondPointerWrites(@InjectClusterClient RestClusterClient<?> client)
            throws Exception {
        StoreSpec direct = StoreKind.S3_INLINE.fresh();
        try (FaultProxy proxy = new FaultProxy(S3ProxyServer.get().endpoint(), 4)) {
            SnapshotTestJob job = job(direct, proxy);
            proxy.delayWrites("/_progress/", Duration.ofSeconds(10));
            JobClient running = job.start();
            running.getJobExecutionResult().get(5, TimeUnit.MINUTES);

            SnapshotSinkITCase.assertPublishedExactlyOnce(direct, READINGS, job.bucketCount(), 1);
            System.out.printf(
                    "[figures] pointer writes +10 s: %s, %d writes held%n",
                    checkpoints(client, running.getJobID()), proxy.delayed());
        }
    }

    /** The test job on S3 through the proxy, its store and identity checked before any delay. */
    private static SnapshotTestJob job(StoreSpec direct, FaultProxy proxy) {
        return SnapshotTestJob.over(READINGS)
                .store(StoreSpec.parse(direct.uri().toString()).withEndpoint(proxy.endpoint()))
                .eventsPerSecond(200)
                .check();
    }

    private static int parts(ObjectStore store) throws Exception {
        AtomicInteger n = new AtomicInteger();
        store.list(
                ObjectKeys.versionPrefix(SnapshotTestJob.PIPELINE, 1),
                o -> ObjectKeys.parse(o.key()).ifPresent(p -> n.incrementAndGet()));
        return n.get();
    }

    private static void await(BooleanSupplierWithException condition, String what)
            throws Exception {
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(2);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("waited 2 minutes for " + what);
            }
            Thread.sleep(50);
        }
    }

    @FunctionalInterface
    private interface BooleanSupplierWithException {
        boolean getAsBoolean() throws Exception;
    }

    /** Flink's own checkpoint statistics of the job: count and end-to-end duration. */
    private static String checkpoints(RestClusterClient<?> client, Object jobId) throws Exception {
        HttpResponse<String> answer =
                HttpClient.newHttpClient()
                        .send(
                                HttpRequest.newBuilder(
                                                URI.create(
                                                        client.getWebInterfaceURL()
                                                                + "/jobs/"
                                                                + jobId
                                                                + "/checkpoints"))
                                        .build(),
                                HttpResponse.BodyHandlers.ofString());
        JsonNode stats = new ObjectMapper().readTree(answer.body());
        JsonNode duration = stats.path("summary").path("end_to_end_duration");
        List<Long> each = new ArrayList<>();
        stats.path("history").forEach(c -> each.add(0, c.path("end_to_end_duration").asLong()));
        return String.format(
                "%d checkpoints completed, end-to-end ms p50 %s, p99 %s, max %s; each, oldest first: %s",
                stats.path("counts").path("completed").asInt(),
                duration.path("p50").asText(),
                duration.path("p99").asText(),
                duration.path("max").asText(),
                each);
    }
}
