package dev.snapshots.job;

import static org.assertj.core.api.Assertions.assertThat;

import dev.snapshots.store.ObjectStore;
import dev.snapshots.store.StoreSpec;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The shaded job jar on a real multi-process Flink cluster (`snapshots cluster up`): uploaded and
 * run over REST, one TaskManager killed with SIGKILL mid-run and replaced, as ECS replaces a task.
 * Afterwards the audit is clean and the output equals the reference.
 */
class ClusterITCase {
    private static final ObjectMapper JSON = new ObjectMapper();
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
        String rest = endpoints.get("rest");
        StoreSpec store = StoreSpec.parse("s3://" + LocalCluster.BUCKET + "/run-" + UUID.randomUUID()).withEndpoint(endpoints.get("s3"));
        JobConfig config = JobConfig.parse(new String[] {"--store", store.uri().toString(), "--endpoint", endpoints.get("s3"),
            "--windows", "16", "--events-per-window", "300", "--events-per-second", "300", "--checkpoint-interval", "1s"});

        String jobId = submit(rest, store, config);
        awaitParts(store, 8);
        long killed = cluster.pids().get("taskmanager-1");
        ProcessHandle.of(killed).ifPresent(ProcessHandle::destroyForcibly); // SIGKILL: no clean shutdown
        cluster.startTaskManager(3);
        String state = awaitTerminal(rest, jobId);

        assertThat(state).isEqualTo("FINISHED");
        JsonNode job = JSON.readTree(LocalCluster.get(rest + "/jobs/" + jobId + "/exceptions"));
        assertThat(job.path("exceptionHistory").path("entries").size()).as("the kill was noticed and recovered from").isPositive();
        try (ObjectStore s = store.open()) {
            Map<String, Object> audit = Audit.scan(s, Optional.empty(), Duration.ofDays(1));
            assertThat((List<?>) audit.get("findings")).as("audit findings").isEmpty();
            Reference published = Reference.published(s, 1, Long.MAX_VALUE);
            Reference expected = Reference.of(Sources.generatorFunction(config), Sources.generatorCount(config),
                    config.windowLength().toMillis(), config.buckets());
            assertThat(published.parts).isEqualTo(expected.parts);
            assertThat(published.deadLetterReasons).isEqualTo(expected.deadLetterReasons);
            System.out.printf("FIGURES cluster: parts=%d events=%d dead-letters=%d restarts=%d%n", published.parts.size(),
                    published.goodEvents, published.deadLetterReasons.values().stream().mapToLong(Long::longValue).sum(),
                    job.path("exceptionHistory").path("entries").size());
        }
    }

    private static String submit(String rest, StoreSpec store, JobConfig config) throws Exception {
        Path jar = Path.of(System.getProperty("snapshots.root"), "job/target/snapshots-job-0.1.0-SNAPSHOT-job.jar");
        String boundary = "----snapshots" + UUID.randomUUID();
        byte[] head = ("--" + boundary + "\r\nContent-Disposition: form-data; name=\"jarfile\"; filename=\"job.jar\"\r\n"
                + "Content-Type: application/x-java-archive\r\n\r\n").getBytes(StandardCharsets.UTF_8);
        byte[] tail = ("\r\n--" + boundary + "--\r\n").getBytes(StandardCharsets.UTF_8);
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        body.write(head);
        body.write(Files.readAllBytes(jar));
        body.write(tail);
        HttpClient http = HttpClient.newHttpClient();
        String uploaded = http.send(HttpRequest.newBuilder(URI.create(rest + "/jars/upload"))
                        .header("Content-Type", "multipart/form-data; boundary=" + boundary)
                        .POST(HttpRequest.BodyPublishers.ofByteArray(body.toByteArray())).build(),
                HttpResponse.BodyHandlers.ofString()).body();
        String jarId = Path.of(JSON.readTree(uploaded).get("filename").asText()).getFileName().toString();
        String args = JSON.writeValueAsString(Map.of("programArgsList", List.of("--store", store.uri().toString(),
                "--endpoint", store.endpoint().get(), "--windows", config.string("windows"), "--events-per-window",
                config.string("events-per-window"), "--events-per-second", config.string("events-per-second"),
                "--checkpoint-interval", config.string("checkpoint-interval"))));
        String run = http.send(HttpRequest.newBuilder(URI.create(rest + "/jars/" + jarId + "/run"))
                        .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(args)).build(),
                HttpResponse.BodyHandlers.ofString()).body();
        assertThat(run).as("job submission").contains("jobid");
        return JSON.readTree(run).get("jobid").asText();
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

    private static String awaitTerminal(String rest, String jobId) throws Exception {
        long deadline = System.nanoTime() + Duration.ofMinutes(4).toNanos();
        while (true) {
            String state = JSON.readTree(LocalCluster.get(rest + "/jobs/" + jobId)).path("state").asText();
            if (List.of("FINISHED", "FAILED", "CANCELED").contains(state)) {
                return state;
            }
            assertThat(System.nanoTime()).as("job %s ends", jobId).isLessThan(deadline);
            Thread.sleep(500);
        }
    }
}
