package dev.snapshots.cli.deploy;

import dev.snapshots.job.SnapshotJob;
import dev.snapshots.job.config.JobConfig;
import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpServer;
import dev.snapshots.testkit.StoreKind;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.flink.client.program.ClusterClient;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.test.junit5.InjectClusterClient;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The scale-in protection agent against a local stand-in of the ECS agent's task-protection
 * endpoint (the only part here that is not real: there is no ECS agent off ECS) and a real Flink
 * job's REST API: it protects with an expiry, renews, rides out throttling, and when told the
 * task must go it takes a checkpoint before it releases protection.
 */
class ScaleInProtectionITCase {
    @RegisterExtension
    static final MiniClusterExtension CLUSTER = new MiniClusterExtension(new MiniClusterResourceConfiguration.Builder()
            .setNumberTaskManagers(1)
            .setNumberSlotsPerTaskManager(4)
            .build());

    private static final String GRANTED = "{\"protection\":{\"ExpirationDate\":\"2026-11-30T12:00:00Z\",\"ProtectionEnabled\":true,"
            + "\"TaskArn\":\"arn:aws:ecs:us-east-1:000000000000:task/c/1\"}}";
    private static final String THROTTLED = "{\"requestID\":\"r\",\"error\":{\"Arn\":\"arn:aws:ecs:us-east-1:000000000000:task/c/1\","
            + "\"Code\":\"ThrottlingException\",\"Message\":\"Rate exceeded\"}}";

    /** What the stand-in received, in order, with when. */
    private record Call(long atMillis, String body) {}

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"DEPLOYMENT_BLOCKED", "TASK_STOPPING_OR_STOPPED"})
    void protectsRenewsRidesOutThrottlingAndCheckpointsBeforeLettingGo(String reason, @InjectClusterClient ClusterClient<?> client)
            throws Exception {
        // A job that runs until stopped, checkpointing only when asked (the periodic interval is an hour).
        JobConfig config = JobConfig.parse(new String[] {"--store", StoreKind.FILESYSTEM.fresh().uri().toString(),
            "--windows", "0", "--events-per-second", "200", "--checkpoint-interval", "1h"});
        JobClient job = SnapshotJob.start(StreamExecutionEnvironment.getExecutionEnvironment(), config);
        String jobId = job.getJobID().toHexString();
        FlinkRest rest = new FlinkRest(client.getWebInterfaceURL());
        awaitRunning(rest, jobId);

        String letGo = "{\"failure\":{\"Arn\":\"arn:aws:ecs:us-east-1:000000000000:task/c/1\",\"Detail\":null,\"Reason\":\"" + reason + "\"}}";
        Deque<String> answers = new ArrayDeque<>(List.of(THROTTLED, GRANTED, GRANTED, THROTTLED, THROTTLED, letGo));
        List<Call> calls = new CopyOnWriteArrayList<>();
        HttpServer agent = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 8);
        agent.createContext("/task-protection/v1/state", exchange -> {
            String body = new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
            calls.add(new Call(System.currentTimeMillis(), exchange.getRequestMethod() + " " + body));
            String answer = body.contains("\"ProtectionEnabled\":false")
                    ? "{\"protection\":{\"ExpirationDate\":null,\"ProtectionEnabled\":false}}"
                    : answers.isEmpty() ? GRANTED : answers.poll();
            byte[] bytes = answer.getBytes(StandardCharsets.UTF_8);
            exchange.getResponseHeaders().set("Content-Type", "application/json");
            exchange.sendResponseHeaders(200, bytes.length);
            exchange.getResponseBody().write(bytes);
            exchange.close();
        });
        agent.start();
        ByteArrayOutputStream log = new ByteArrayOutputStream();
        try {
            new ScaleInProtection("http://127.0.0.1:" + agent.getAddress().getPort(), client.getWebInterfaceURL(), 10,
                    Duration.ofSeconds(1), Duration.ofMillis(200), new PrintStream(log, true, StandardCharsets.UTF_8)).loop();
        } finally {
            agent.stop(0);
            job.cancel().get();
        }
        System.out.print(log.toString(StandardCharsets.UTF_8));

        List<String> bodies = calls.stream().map(Call::body).toList();
        assertThat(bodies).as("every request is a PUT").allMatch(b -> b.startsWith("PUT "));
        assertThat(bodies).as("throttled, granted, renewed, throttled twice, refused with " + reason + ", released")
                .hasSize(7);
        assertThat(bodies.subList(0, 6)).as("protection always carries an expiry")
                .allMatch(b -> b.contains("\"ProtectionEnabled\":true") && b.contains("\"ExpiresInMinutes\":10"));
        assertThat(bodies.get(6)).contains("\"ProtectionEnabled\":false");
        long refused = calls.get(5).atMillis();
        long released = calls.get(6).atMillis();
        var checkpoints = rest.get("/jobs/" + jobId + "/checkpoints");
        assertThat(checkpoints.path("counts").path("completed").asInt()).as("exactly the checkpoint asked for").isEqualTo(1);
        long triggered = checkpoints.path("latest").path("completed").path("trigger_timestamp").asLong();
        assertThat(triggered).as("the checkpoint was taken between the refusal and the release").isBetween(refused, released);
    }

    private static void awaitRunning(FlinkRest rest, String jobId) throws Exception {
        long deadline = System.nanoTime() + Duration.ofMinutes(1).toNanos();
        while (!rest.allTasksRunning(jobId)) {
            assertThat(System.nanoTime()).as("job %s running", jobId).isLessThan(deadline);
            Thread.sleep(100);
        }
    }
}
