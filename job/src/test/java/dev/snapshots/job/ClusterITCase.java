package dev.snapshots.job;

import static org.assertj.core.api.Assertions.assertThat;

import dev.snapshots.store.ObjectStore;
import dev.snapshots.store.StoreSpec;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The shaded job jar on a real multi-process Flink cluster (`snapshots cluster up`): uploaded and
 * run over REST, one TaskManager killed with SIGKILL mid-run and replaced, as ECS replaces a task.
 * Afterwards the audit is clean and the output equals the reference.
 */
class ClusterITCase {
    private static LocalCluster cluster;

    @BeforeAll
    static void up() throws Exception {
        cluster = new LocalCluster(Path.of(System.getProperty("snapshots.root")));
        cluster.down(new PrintStream(new ByteArrayOutputStream())); // a cluster left by an aborted run
        cluster.up(2, System.out);
    }

    @AfterAll
    static void down() throws Exception {
        cluster.down(System.out);
    }

    @Test
    void aTaskManagerKilledMidRunIsReplacedAndTheOutputIsStillExactlyOnce() throws Exception {
        Map<String, String> endpoints = cluster.endpoints();
        FlinkRest rest = new FlinkRest(endpoints.get("rest"));
        StoreSpec store = StoreSpec.parse("s3://" + LocalCluster.BUCKET + "/run-" + UUID.randomUUID()).withEndpoint(endpoints.get("s3"));
        List<String> args = List.of("--store", store.uri().toString(), "--endpoint", endpoints.get("s3"),
            "--windows", "16", "--events-per-window", "300", "--events-per-second", "300", "--checkpoint-interval", "1s");
        JobConfig config = JobConfig.parse(args.toArray(new String[0]));

        String jobId = rest.run(rest.upload(Path.of(System.getProperty("snapshots.root"), Chaos.JOB_JAR)), args, null);
        awaitParts(store, 8);
        cluster.kill("taskmanager-1"); // SIGKILL: no clean shutdown
        cluster.startTaskManager(3);
        String state = rest.awaitTerminal(jobId, Duration.ofMinutes(4));

        assertThat(state).isEqualTo("FINISHED");
        int restarts = rest.restarts(jobId);
        assertThat(restarts).as("the kill was noticed and recovered from").isPositive();
        try (ObjectStore s = store.open()) {
            Map<String, Object> audit = Audit.scan(s, Optional.empty(), Duration.ofDays(1));
            assertThat((List<?>) audit.get("findings")).as("audit findings").isEmpty();
            Reference published = Reference.published(s, 1, Long.MAX_VALUE);
            Reference expected = Reference.of(Sources.generatorFunction(config), Sources.generatorCount(config),
                    config.windowLength().toMillis(), config.buckets());
            assertThat(published.differences(expected)).isEmpty();
            assertThat(published.parts).isEqualTo(expected.parts);
            assertThat(published.deadLetterReasons).isEqualTo(expected.deadLetterReasons);
            System.out.printf("FIGURES cluster: parts=%d events=%d dead-letters=%d restarts=%d%n", published.parts.size(),
                    published.goodEvents, published.deadLetterReasons.values().stream().mapToLong(Long::longValue).sum(), restarts);
        }
    }

    private static void awaitParts(StoreSpec store, int parts) throws Exception {
        long deadline = System.nanoTime() + Duration.ofMinutes(2).toNanos();
        try (ObjectStore s = store.open()) {
            while (true) {
                int[] n = {0};
                s.list("telemetry/", o -> n[0] += o.key().endsWith(".parquet") ? 1 : 0);
                if (n[0] >= parts) {
                    return;
                }
                assertThat(System.nanoTime()).as("%s parts appeared", parts).isLessThan(deadline);
                Thread.sleep(200);
            }
        }
    }
}
