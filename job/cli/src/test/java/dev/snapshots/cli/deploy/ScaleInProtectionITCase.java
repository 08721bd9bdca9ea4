package dev.snapshots.cli.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.snapshots.job.SnapshotJob;
import dev.snapshots.job.config.JobConfig;
import dev.snapshots.testkit.StoreKind;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.apache.flink.client.program.ClusterClient;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.test.junit5.InjectClusterClient;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The scale-in protection sidecar against a local stand-in of the ECS agent's task-protection
 * endpoint (the only part here that is not real: there is no ECS agent off ECS) and a real Flink
 * job's REST API: it protects with an expiry while its TaskManager works, renews, rides out
 * throttling and a REST API that is down, lets an idle TaskManager go, and when told the task must
 * go, or on SIGTERM, it takes a checkpoint before it releases protection.
 */
class ScaleInProtectionITCase {
    @RegisterExtension
    static final MiniClusterExtension CLUSTER =
            new MiniClusterExtension(
                    new MiniClusterResourceConfiguration.Builder()
                            .setNumberTaskManagers(1)
                            .setNumberSlotsPerTaskManager(4)
                            .build());

    private static final String GRANTED =
            "{\"protection\":{\"ExpirationDate\":\"2026-11-30T12:00:00Z\",\"ProtectionEnabled\":true,"
                    + "\"TaskArn\":\"arn:aws:ecs:us-east-1:000000000000:task/c/1\"}}";
    private static final String RELEASED =
            "{\"protection\":{\"ExpirationDate\":null,\"ProtectionEnabled\":false}}";
    private static final String THROTTLED =
            "{\"requestID\":\"r\",\"error\":{\"Arn\":\"arn:aws:ecs:us-east-1:000000000000:task/c/1\","
                    + "\"Code\":\"ThrottlingException\",\"Message\":\"Rate exceeded\"}}";

    /** Renewed every second; the longest stretch of protection is beyond every test here. */
    private static final ScaleInProtection.Timing TIMING =
            new ScaleInProtection.Timing(
                    10,
                    Duration.ofSeconds(1),
                    Duration.ofMillis(200),
                    Duration.ofMinutes(10),
                    Duration.ofMinutes(2));

    /** What the stand-in received, in order, with when. */
    private record Call(long atMillis, String body) {}

    private final Deque<String> answers = new ArrayDeque<>();
    private final List<Call> calls = new CopyOnWriteArrayList<>();
    private HttpServer agent;

    @BeforeEach
    void startAgent() throws IOException {
        agent = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 8);
        agent.createContext(
                "/task-protection/v1/state",
                exchange -> {
                    String body =
                            new String(
                                    exchange.getRequestBody().readAllBytes(),
                                    StandardCharsets.UTF_8);
                    calls.add(
                            new Call(
                                    System.currentTimeMillis(),
                                    exchange.getRequestMethod() + " " + body));
                    String answer;
                    synchronized (answers) {
                        answer =
                                body.contains("\"ProtectionEnabled\":false")
                                        ? RELEASED
                                        : answers.isEmpty() ? GRANTED : answers.poll();
                    }
                    respond(exchange, 200, answer);
                });
        agent.start();
    }

    @AfterEach
    void stopAgent() {
        agent.stop(0);
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"DEPLOYMENT_BLOCKED", "TASK_STOPPING_OR_STOPPED"})
    void protectsRenewsRidesOutThrottlingAndCheckpointsBeforeLettingGo(
            String reason, @InjectClusterClient ClusterClient<?> client) throws Exception {
        JobClient job = startJob();
        String jobId = job.getJobID().toHexString();
        FlinkRest rest = new FlinkRest(client.getWebInterfaceURL());
        awaitRunning(rest, jobId);
        answers.addAll(List.of(THROTTLED, GRANTED, GRANTED, THROTTLED, THROTTLED, letGo(reason)));

        try {
            sidecar(client.getWebInterfaceURL()).loop();
        } finally {
            job.cancel().get();
        }

        List<String> bodies = calls.stream().map(Call::body).toList();
        assertThat(bodies).as("every request is a PUT").allMatch(b -> b.startsWith("PUT "));
        assertThat(bodies)
                .as(
                        "throttled, granted, renewed, throttled twice, refused with "
                                + reason
                                + ", released")
                .hasSize(7);
        assertThat(bodies.subList(0, 6))
                .as("protection always carries an expiry")
                .allMatch(
                        b ->
                                b.contains("\"ProtectionEnabled\":true")
                                        && b.contains("\"ExpiresInMinutes\":10"));
        assertThat(bodies.get(6)).contains("\"ProtectionEnabled\":false");
        assertCheckpointBetween(rest, jobId, calls.get(5).atMillis(), calls.get(6).atMillis());
    }

    /**
     * A REST API down for 30 s (a JobManager restarting) is waited out; the sidecar lives on and
     * hands over afterwards. A minute of waiting: tagged {@code long} (-Plong).
     */
    @Test
    @Tag("long")
    void aRestApiDownForThirtySecondsIsWaitedOut(@InjectClusterClient ClusterClient<?> client)
            throws Exception {
        JobClient job = startJob();
        String jobId = job.getJobID().toHexString();
        FlinkRest rest = new FlinkRest(client.getWebInterfaceURL());
        awaitRunning(rest, jobId);
        RestGate gate = new RestGate(client.getWebInterfaceURL());
        ByteArrayOutputStream log = new ByteArrayOutputStream();
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try {
            Future<?> running =
                    pool.submit(
                            () -> {
                                new ScaleInProtection(
                                                agentUri(),
                                                gate.url(),
                                                "",
                                                TIMING,
                                                new PrintStream(log, true, StandardCharsets.UTF_8))
                                        .loop();
                                return null;
                            });
            awaitCalls(1);
            gate.close();
            Thread.sleep(30_000);
            assertThat(running.isDone())
                    .as("the sidecar is still running after 30 s without the REST API")
                    .isFalse();
            int beforeReopen = calls.size();
            synchronized (answers) {
                answers.add(letGo("DEPLOYMENT_BLOCKED"));
            }
            long reopened = System.currentTimeMillis();
            gate.open();
            running.get(2, TimeUnit.MINUTES);

            assertThat(log.toString(StandardCharsets.UTF_8))
                    .contains("could not check or set protection");
            assertThat(calls.size())
                    .as("renewed after the REST API came back, then released")
                    .isGreaterThan(beforeReopen + 1);
            assertThat(calls.get(calls.size() - 1).body()).contains("\"ProtectionEnabled\":false");
            assertCheckpointBetween(rest, jobId, reopened, calls.get(calls.size() - 1).atMillis());
        } finally {
            pool.shutdownNow();
            gate.stop();
            job.cancel().get();
        }
    }

    /**
     * ECS stops a task with SIGTERM: the real command, in its own JVM, checkpoints and releases
     * before it exits.
     */
    @Test
    void sigtermCheckpointsAndReleases(@InjectClusterClient ClusterClient<?> client)
            throws Exception {
        JobClient job = startJob();
        String jobId = job.getJobID().toHexString();
        FlinkRest rest = new FlinkRest(client.getWebInterfaceURL());
        awaitRunning(rest, jobId);
        Process sidecar =
                new ProcessBuilder(
                                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                                "-Xmx128m",
                                "-cp",
                                System.getProperty("java.class.path"),
                                "dev.snapshots.cli.Cli",
                                "protect",
                                "--rest",
                                client.getWebInterfaceURL(),
                                "--agent-uri",
                                agentUri(),
                                "--renew-seconds",
                                "1",
                                "--poll-seconds",
                                "1")
                        .redirectErrorStream(true)
                        .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                        .start();
        try {
            awaitCalls(1);
            long sigterm = System.currentTimeMillis();
            sidecar.destroy(); // SIGTERM
            assertThat(sidecar.waitFor(2, TimeUnit.MINUTES)).as("the sidecar exited").isTrue();

            assertThat(calls.get(calls.size() - 1).body())
                    .as("its last word released protection")
                    .contains("\"ProtectionEnabled\":false");
            assertCheckpointBetween(rest, jobId, sigterm, calls.get(calls.size() - 1).atMillis());
        } finally {
            sidecar.destroyForcibly();
            job.cancel().get();
        }
    }

    /**
     * Protection only while the TaskManager works: none while it idles, released when its job ends,
     * so a scale-in can take it.
     */
    @Test
    void anIdleTaskManagerIsNotProtectedSoAScaleInCanTakeIt(
            @InjectClusterClient ClusterClient<?> client) throws Exception {
        ExecutorService pool = Executors.newSingleThreadExecutor();
        ScaleInProtection protection = sidecar(client.getWebInterfaceURL());
        try {
            Future<?> running =
                    pool.submit(
                            () -> {
                                protection.loop();
                                return null;
                            });
            Thread.sleep(2_000);
            assertThat(calls).as("no job, no protection").isEmpty();

            JobClient job = startJob();
            awaitCalls(1);
            assertThat(calls.get(0).body()).contains("\"ProtectionEnabled\":true");
            job.cancel().get();
            long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(1);
            while (!calls.get(calls.size() - 1).body().contains("\"ProtectionEnabled\":false")) {
                assertThat(System.nanoTime())
                        .as("released once the job ended")
                        .isLessThan(deadline);
                Thread.sleep(100);
            }
            assertThat(running.isDone()).as("it keeps watching, for the next job").isFalse();
        } finally {
            protection.terminate();
            pool.shutdownNow();
        }
    }

    private ScaleInProtection sidecar(String rest) {
        return new ScaleInProtection(
                agentUri(),
                rest,
                "",
                TIMING,
                new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8));
    }

    /**
     * A job that runs until stopped, checkpointing only when asked (the periodic interval is an
     * hour).
     */
    static JobClient startJob() throws Exception {
        JobConfig config =
                JobConfig.parse(
                        new String[] {
                            "--store",
                            StoreKind.FILESYSTEM.fresh().uri().toString(),
                            "--windows",
                            "0",
                            "--events-per-second",
                            "200",
                            "--checkpoint-interval",
                            "1h",
                            "--parallelism",
                            "2"
                        });
        return SnapshotJob.start(StreamExecutionEnvironment.getExecutionEnvironment(), config);
    }

    private String agentUri() {
        return "http://127.0.0.1:" + agent.getAddress().getPort();
    }

    private static String letGo(String reason) {
        return "{\"failure\":{\"Arn\":\"arn:aws:ecs:us-east-1:000000000000:task/c/1\",\"Detail\":null,\"Reason\":\""
                + reason
                + "\"}}";
    }

    private void awaitCalls(int n) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(1);
        while (calls.size() < n) {
            assertThat(System.nanoTime()).as("%d calls to the agent", n).isLessThan(deadline);
            Thread.sleep(50);
        }
    }

    private static void assertCheckpointBetween(FlinkRest rest, String jobId, long from, long to)
            throws IOException {
        // The job's periodic checkpoint (hourly, its first at a random moment within the hour) can
        // fall into a test too: what counts is one taken between the signal and the release.
        List<Long> completed = new ArrayList<>();
        for (var checkpoint : rest.get("/jobs/" + jobId + "/checkpoints").path("history")) {
            if (checkpoint.path("status").asText().equals("COMPLETED")) {
                completed.add(checkpoint.path("trigger_timestamp").asLong());
            }
        }
        assertThat(completed)
                .as(
                        "completed checkpoints' trigger times; one after the signal (%d), before the"
                                + " release (%d)",
                        from, to)
                .anyMatch(t -> t >= from && t <= to);
    }

    static void awaitRunning(FlinkRest rest, String jobId) throws Exception {
        long deadline = System.nanoTime() + Duration.ofMinutes(1).toNanos();
        while (!rest.allTasksRunning(jobId)) {
            assertThat(System.nanoTime()).as("job %s running", jobId).isLessThan(deadline);
            Thread.sleep(100);
        }
    }

    private static void respond(HttpExchange exchange, int status, String body) throws IOException {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        exchange.getResponseHeaders().set("Content-Type", "application/json");
        exchange.sendResponseHeaders(status, bytes.length);
        try (OutputStream o = exchange.getResponseBody()) {
            o.write(bytes);
        }
    }

    /**
     * The REST API behind a switch: forwarded while open, 503 while closed (a JobManager
     * restarting).
     */
    private static final class RestGate {
        private final HttpServer server;
        private final HttpClient http = HttpClient.newHttpClient();
        private volatile boolean open = true;

        RestGate(String target) throws IOException {
            server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 8);
            server.createContext(
                    "/",
                    exchange -> {
                        if (!open) {
                            respond(exchange, 503, "{\"errors\":[\"down\"]}");
                            return;
                        }
                        try (InputStream in = exchange.getRequestBody()) {
                            byte[] body = in.readAllBytes();
                            HttpRequest.Builder forward =
                                    HttpRequest.newBuilder(
                                                    URI.create(target + exchange.getRequestURI()))
                                            .method(
                                                    exchange.getRequestMethod(),
                                                    body.length == 0
                                                            ? HttpRequest.BodyPublishers.noBody()
                                                            : HttpRequest.BodyPublishers
                                                                    .ofByteArray(body));
                            String type = exchange.getRequestHeaders().getFirst("Content-Type");
                            if (type != null) {
                                forward.header("Content-Type", type);
                            }
                            HttpResponse<String> r =
                                    http.send(
                                            forward.build(), HttpResponse.BodyHandlers.ofString());
                            respond(exchange, r.statusCode(), r.body());
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                            respond(exchange, 500, "{}");
                        }
                    });
            server.start();
        }

        String url() {
            return "http://127.0.0.1:" + server.getAddress().getPort();
        }

        void close() {
            open = false;
        }

        void open() {
            open = true;
        }

        void stop() {
            server.stop(0);
        }
    }
}
