package dev.snapshots.cli.deploy;

import dev.snapshots.cli.Flags;
import java.io.IOException;
import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.Random;
import org.apache.flink.annotation.Internal;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.ObjectMapper;

/**
 * {@code snapshots protect}: keeps ECS task scale-in protection on a TaskManager's task while the
 * job runs, so neither a deployment nor a scale-in takes it away mid-checkpoint-interval. It
 * renews before the protection expires (which it always does: a hung task cannot block a deploy
 * forever). When the ECS agent answers a renewal with {@code DEPLOYMENT_BLOCKED} or
 * {@code TASK_STOPPING_OR_STOPPED}, the task is wanted elsewhere: it asks the JobManager for a
 * checkpoint, so the replacement redoes at most the time since then, and releases protection.
 * {@code ThrottlingException} is retried with exponential backoff and jitter.
 */
@Internal
public final class ScaleInProtection {
    public static final String USAGE = String.join("\n",
            "usage: snapshots protect --rest URL [--agent-uri URI] [--expires-minutes M] [--poll-seconds S]",
            "",
            "  --rest URL             the JobManager's REST address",
            "  --agent-uri URI        the ECS agent endpoint [$ECS_AGENT_URI]",
            "  --expires-minutes M    protection lasts this long unless renewed (1..2880) [10]",
            "  --poll-seconds S       how often the job and the protection are checked [10]",
            "",
            "Runs until the ECS agent says the task is wanted elsewhere, then checkpoints, releases and exits 0.");

    /** Reasons with which the agent refuses protection because the task should go. */
    static final List<String> LET_GO = List.of("DEPLOYMENT_BLOCKED", "TASK_STOPPING_OR_STOPPED");
    private static final int THROTTLE_ATTEMPTS = 8;
    private static final ObjectMapper JSON = new ObjectMapper();

    private final String agent;
    private final FlinkRest rest;
    private final int expiresMinutes;
    /** Renewal is due this long after protection was granted: well before it expires. */
    private final Duration renewAfter;
    private final Duration poll;
    private final PrintStream out;
    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5)).build();
    private final Random jitter = new Random();
    private long protectedUntilNanos;

    ScaleInProtection(String agentUri, String restUrl, int expiresMinutes, Duration renewAfter, Duration poll, PrintStream out) {
        this.agent = agentUri.replaceAll("/+$", "") + "/task-protection/v1/state";
        this.rest = new FlinkRest(restUrl);
        this.expiresMinutes = expiresMinutes;
        this.renewAfter = renewAfter;
        this.poll = poll;
        this.out = out;
    }

    public static int run(String[] args, PrintStream out) throws Exception {
        String agent = System.getenv("ECS_AGENT_URI");
        Map<String, String> flags = Flags.parse(args, new String[][] {
            {"rest", ""}, {"agent-uri", agent == null ? "" : agent}, {"expires-minutes", "10"}, {"poll-seconds", "10"}}, Set.of());
        if (flags.get("rest").isEmpty() || flags.get("agent-uri").isEmpty()) {
            throw new IllegalArgumentException("--rest and --agent-uri (or $ECS_AGENT_URI) are required");
        }
        int expires = Integer.parseInt(flags.get("expires-minutes"));
        if (expires < 1 || expires > 2880) {
            throw new IllegalArgumentException("--expires-minutes must be 1..2880, got " + expires);
        }
        new ScaleInProtection(flags.get("agent-uri"), flags.get("rest"), expires, Duration.ofMinutes(expires).dividedBy(2),
                Duration.ofSeconds(Long.parseLong(flags.get("poll-seconds"))), out).loop();
        return 0;
    }

    /** Protects while a job runs; returns once the task has been let go. */
    void loop() throws Exception {
        while (true) {
            List<String> running = running();
            boolean shielded = protectedUntilNanos != 0;
            if (running.isEmpty() && shielded) {
                set(false);
                out.println("no job runs here: protection released");
            } else if (!running.isEmpty() && (!shielded || System.nanoTime() > protectedUntilNanos)) {
                JsonNode answer = set(true);
                String reason = answer.path("failure").path("Reason").asText("");
                if (LET_GO.contains(reason)) {
                    handOver(running, reason);
                    return;
                }
                if (!reason.isEmpty() || answer.has("error")) {
                    out.println("protection not granted: " + answer + "; trying again in " + poll.toSeconds() + " s");
                }
            }
            Thread.sleep(poll.toMillis());
        }
    }

    /** A checkpoint of every running job, so the replacement starts from now; then let go. */
    private void handOver(List<String> jobs, String reason) throws IOException {
        out.println("the ECS agent says " + reason + ": checkpointing " + jobs + " before letting go");
        for (String job : jobs) {
            try {
                out.println("checkpoint " + rest.checkpoint(job, Duration.ofMinutes(2)) + " of job " + job + " completed");
            } catch (IOException e) {
                out.println("checkpoint of job " + job + " failed (" + e.getMessage() + "): letting go anyway;"
                        + " the replacement resumes from the previous one");
            }
        }
        set(false);
        out.println("protection released");
    }

    private List<String> running() throws IOException {
        return rest.jobStates().entrySet().stream().filter(j -> j.getValue().equals("RUNNING")).map(Map.Entry::getKey).toList();
    }

    /**
     * One PUT to the agent, retried with exponential backoff and full jitter while it answers
     * {@code ThrottlingException}. Renewal is due at half the expiry, so a run of throttled answers
     * never lets protection lapse.
     */
    private JsonNode set(boolean enabled) throws IOException {
        String body = enabled ? "{\"ProtectionEnabled\":true,\"ExpiresInMinutes\":" + expiresMinutes + "}"
                : "{\"ProtectionEnabled\":false}";
        for (int attempt = 1; ; attempt++) {
            JsonNode answer = put(body);
            if (!answer.path("error").path("Code").asText().equals("ThrottlingException") || attempt == THROTTLE_ATTEMPTS) {
                if (answer.path("protection").path("ProtectionEnabled").asBoolean(false)) {
                    protectedUntilNanos = System.nanoTime() + renewAfter.toNanos();
                    out.println("protected until " + answer.path("protection").path("ExpirationDate").asText() + "; renewing in "
                            + renewAfter.toSeconds() + " s");
                } else if (!enabled) {
                    protectedUntilNanos = 0;
                }
                return answer;
            }
            long backoff = jitter.nextLong(1 + Math.min(30_000, 200L << attempt));
            out.printf("throttled by the ECS agent (attempt %d); again in %d ms%n", attempt, backoff);
            FlinkRest.sleep(backoff);
        }
    }

    private JsonNode put(String body) throws IOException {
        try {
            HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(agent)).timeout(Duration.ofSeconds(30))
                    .header("Content-Type", "application/json").PUT(HttpRequest.BodyPublishers.ofString(body)).build(),
                    HttpResponse.BodyHandlers.ofString());
            return JSON.readTree(r.body().isEmpty() ? "{}" : r.body());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException(e);
        }
    }
}
