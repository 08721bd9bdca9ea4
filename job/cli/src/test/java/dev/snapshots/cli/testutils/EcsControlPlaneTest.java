package dev.snapshots.cli.testutils;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** The stand-in ECS control plane keeps the rules ECS documents, with tasks that do nothing. */
class EcsControlPlaneTest {
    private final HttpClient http = HttpClient.newHttpClient();
    private final Map<String, String> agents = new ConcurrentHashMap<>();
    private final AtomicInteger mostLive = new AtomicInteger();
    private final AtomicInteger live = new AtomicInteger();

    private EcsControlPlane.RunningTask start(String task, String agentUri) {
        agents.put(task, agentUri);
        mostLive.accumulateAndGet(live.incrementAndGet(), Math::max);
        return stopTimeout -> live.decrementAndGet();
    }

    @Test
    void protectedTasksAreNeitherScaledInNorReplacedAndNeverOutnumberTheDesiredCount()
            throws Exception {
        try (EcsControlPlane ecs = new EcsControlPlane(this::start, 0, 1)) {
            ecs.createService(2);
            ecs.awaitSteady(Duration.ofSeconds(10));
            assertThat(protect("t1")).contains("\"ProtectionEnabled\":true");
            assertThat(protect("t2")).contains("\"ProtectionEnabled\":true");

            ecs.scale(1);
            Thread.sleep(500);
            assertThat(ecs.tasks(EcsControlPlane.Status.RUNNING))
                    .as("a scale-in waits for protected tasks")
                    .containsExactly("t1", "t2");
            assertThat(protect("t1"))
                    .as("two protected tasks, one desired")
                    .contains("\"Reason\":\"DEPLOYMENT_BLOCKED\"");

            release("t2");
            ecs.awaitSteady(Duration.ofSeconds(10));
            assertThat(ecs.tasks(EcsControlPlane.Status.STOPPED)).containsExactly("t2");
            assertThat(protect("t2")).contains("\"Reason\":\"TASK_STOPPING_OR_STOPPED\"");

            ecs.scale(2);
            ecs.awaitSteady(Duration.ofSeconds(10));
            ecs.deploy();
            Thread.sleep(1_000);
            assertThat(ecs.tasks(EcsControlPlane.Status.RUNNING))
                    .as("new tasks started, the protected old one waits")
                    .containsExactlyInAnyOrder("t1", "t4", "t5");
            release("t1");
            ecs.awaitSteady(Duration.ofSeconds(10));
            assertThat(ecs.tasks(EcsControlPlane.Status.RUNNING)).containsExactly("t4", "t5");
            assertThat(mostLive.get()).as("at most 200 % of the desired count").isEqualTo(4);
        }
    }

    @Test
    void aServiceAtZeroAndOneHundredPercentStopsItsOldTaskBeforeItStartsTheNewOne()
            throws Exception {
        try (EcsControlPlane ecs = new EcsControlPlane(this::start, 0, 1)) {
            ecs.createService(1, 0, 100);
            ecs.awaitSteady(Duration.ofSeconds(10));
            ecs.deploy();
            ecs.awaitSteady(Duration.ofSeconds(10));
            assertThat(ecs.tasks(EcsControlPlane.Status.RUNNING)).containsExactly("t2");
            assertThat(ecs.tasks(EcsControlPlane.Status.STOPPED)).containsExactly("t1");
            assertThat(mostLive.get()).as("never two at once").isEqualTo(1);
        }
    }

    @Test
    void theAgentPassesOnThrottling() throws Exception {
        try (EcsControlPlane ecs = new EcsControlPlane(this::start, 1, 1)) {
            ecs.createService(1);
            ecs.awaitSteady(Duration.ofSeconds(10));
            HttpResponse<String> answer = put("t1", "{\"ProtectionEnabled\":true}");
            assertThat(answer.statusCode()).isEqualTo(400);
            assertThat(answer.body()).contains("\"Code\":\"ThrottlingException\"");
            assertThat(ecs.protectedTasks()).isEmpty();
        }
    }

    private String protect(String task) throws Exception {
        return put(task, "{\"ProtectionEnabled\":true,\"ExpiresInMinutes\":10}").body();
    }

    private void release(String task) throws Exception {
        assertThat(put(task, "{\"ProtectionEnabled\":false}").body())
                .contains("\"ProtectionEnabled\":false");
    }

    private HttpResponse<String> put(String task, String body) throws Exception {
        return http.send(
                HttpRequest.newBuilder(URI.create(agents.get(task) + "/task-protection/v1/state"))
                        .PUT(HttpRequest.BodyPublishers.ofString(body))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
    }
}
