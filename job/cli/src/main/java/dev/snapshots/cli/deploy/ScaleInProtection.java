package dev.snapshots.cli.deploy;

import dev.snapshots.cli.Flags;
import java.io.IOException;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.flink.annotation.Internal;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.ObjectMapper;

/**
 * {@code snapshots protect}: ECS task scale-in protection for one TaskManager's task, a sidecar.
 *
 * <ul>
 *   <li>It protects only while this TaskManager runs tasks of a running job: that is work a
 *       checkpoint has not yet covered. An idle TaskManager (the spare) is left unprotected, so a
 *       scale-in takes it and completes.
 *   <li>Protection always carries an expiry, and is renewed every {@code --renew-seconds}.
 *   <li>Protection lasts at most {@code --max-protected-minutes} in one stretch. ECS stops a
 *       protected task for neither a deployment nor a scale-in, and it tells a protected task
 *       nothing when a deployment waits for it: the agent answers {@code DEPLOYMENT_BLOCKED} only
 *       when the service has more protected tasks than it wants, never the case here (at most the
 *       job's TaskManagers protect, the service runs spares beside them, and a new TaskManager
 *       holds no work). Renewed forever, protection would hold a TaskManager rollout IN_PROGRESS
 *       for good. So at the end of a stretch it hands over (a checkpoint, then release) and stays
 *       unprotected for {@code --yield-seconds}: a deployment or scale-in waiting for the task
 *       takes it then; otherwise protection starts again.
 *   <li>When the agent says the task must go ({@code DEPLOYMENT_BLOCKED}, {@code
 *       TASK_STOPPING_OR_STOPPED}), or on SIGTERM (ECS stopping the task; the task definition makes
 *       ECS stop this container before its TaskManager), it asks the JobManager for a checkpoint,
 *       waits until it completes, so the replacement redoes only the time since, and releases.
 *   <li>Errors of the REST API or the agent never end it: it tries again with backoff, keeping the
 *       protection it has until that expires. ECS restarts it if it dies anyway (the task
 *       definition's restart policy).
 * </ul>
 */
@Internal
public final class ScaleInProtection {
    public static final String USAGE =
            String.join(
                    "\n",
                    "usage: snapshots protect --rest URL [--agent-uri URI] [--taskmanager HOST] [--expires-minutes M] [--renew-seconds S]",
                    "                         [--poll-seconds S] [--max-protected-minutes M] [--yield-seconds S]",
                    "",
                    "  --rest URL             the JobManager's REST address",
                    "  --agent-uri URI        the ECS agent endpoint [$ECS_AGENT_URI]",
                    "  --taskmanager HOST     the address this task's TaskManager registers with [this host's address]",
                    "  --expires-minutes M    protection lasts this long unless renewed (1..2880) [10]",
                    "  --renew-seconds S      how often protection is renewed [60]",
                    "  --poll-seconds S       how often the TaskManager's work is checked [10]",
                    "  --max-protected-minutes M",
                    "                         the longest stretch of protection; then a checkpoint, and the task is left",
                    "                         unprotected for a while, so a deployment or scale-in waiting for it can take it [10]",
                    "  --yield-seconds S      how long the task stays unprotected after such a hand-over [120]",
                    "",
                    "Runs until the ECS agent says the task is wanted elsewhere, or SIGTERM: then checkpoints, releases and exits 0.");

    /** Reasons with which the agent refuses protection because the task should go. */
    static final List<String> LET_GO = List.of("DEPLOYMENT_BLOCKED", "TASK_STOPPING_OR_STOPPED");

    private static final int THROTTLE_ATTEMPTS = 8;
    private static final Duration MAX_BACKOFF = Duration.ofSeconds(30);

    /**
     * ECS gives a stopping task its stopTimeout (120 s in the deployment): the checkpoint must fit
     * in it.
     */
    private static final Duration HAND_OVER_CHECKPOINT = Duration.ofSeconds(90);

    private static final ObjectMapper JSON = new ObjectMapper();

    /**
     * How protection is paced: each grant's expiry, how often it is renewed, how often the
     * TaskManager's work is checked, the longest stretch of protection and the unprotected time
     * after it.
     */
    record Timing(
            int expiresMinutes,
            Duration renewEvery,
            Duration poll,
            Duration maxProtected,
            Duration yieldFor) {}

    private final String agent;
    private final FlinkRest rest;
    private final String taskManagerHost;
    private final Timing timing;
    private final PrintStream out;
    private final HttpClient http =
            HttpClient.newBuilder()
                    .version(HttpClient.Version.HTTP_1_1)
                    .connectTimeout(Duration.ofSeconds(5))
                    .build();
    private final Random jitter = new Random();
    private final CountDownLatch done = new CountDownLatch(1);
    private volatile boolean stopping;
    private long renewAtNanos;
    private boolean shielded;

    /** When the current stretch of protection began. */
    private long shieldedSinceNanos;

    /** Until when the task stays unprotected after a hand-over (0: not yielding). */
    private long yieldUntilNanos;

    ScaleInProtection(
            String agentUri,
            String restUrl,
            String taskManagerHost,
            Timing timing,
            PrintStream out) {
        this.agent = agentUri.replaceAll("/+$", "") + "/task-protection/v1/state";
        this.rest = new FlinkRest(restUrl);
        this.taskManagerHost = taskManagerHost;
        this.timing = timing;
        this.out = out;
    }

    public static int run(String[] args, PrintStream out) throws Exception {
        String agent = System.getenv("ECS_AGENT_URI");
        Map<String, String> flags =
                Flags.parse(
                        args,
                        new String[][] {
                            {"rest", ""},
                            {"agent-uri", agent == null ? "" : agent},
                            {"taskmanager", InetAddress.getLocalHost().getHostAddress()},
                            {"expires-minutes", "10"},
                            {"renew-seconds", "60"},
                            {"poll-seconds", "10"},
                            {"max-protected-minutes", "10"},
                            {"yield-seconds", "120"}
                        },
                        Set.of());
        if (flags.get("rest").isEmpty() || flags.get("agent-uri").isEmpty()) {
            throw new IllegalArgumentException(
                    "--rest and --agent-uri (or $ECS_AGENT_URI) are required");
        }
        int expires = positive(flags, "expires-minutes");
        if (expires > 2880) {
            throw new IllegalArgumentException("--expires-minutes must be 1..2880, got " + expires);
        }
        int renew = positive(flags, "renew-seconds");
        if (renew >= expires * 60) {
            throw new IllegalArgumentException(
                    "--renew-seconds must be less than the expiry ("
                            + expires * 60
                            + " s), got "
                            + renew);
        }
        Timing timing =
                new Timing(
                        expires,
                        Duration.ofSeconds(renew),
                        Duration.ofSeconds(positive(flags, "poll-seconds")),
                        Duration.ofMinutes(positive(flags, "max-protected-minutes")),
                        Duration.ofSeconds(positive(flags, "yield-seconds")));
        ScaleInProtection protection =
                new ScaleInProtection(
                        flags.get("agent-uri"),
                        flags.get("rest"),
                        flags.get("taskmanager"),
                        timing,
                        out);
        Runtime.getRuntime().addShutdownHook(new Thread(protection::terminate, "protect-sigterm"));
        protection.loop();
        return 0;
    }

    private static int positive(Map<String, String> flags, String name) {
        String value = flags.get(name);
        if (!value.matches("[1-9]\\d{0,8}")) {
            throw new IllegalArgumentException(
                    "--" + name + " must be a positive whole number, got '" + value + "'");
        }
        return Integer.parseInt(value);
    }

    /**
     * Protects while this TaskManager works; returns once the task has been let go, or on {@link
     * #terminate}.
     */
    void loop() throws InterruptedException {
        Duration poll = timing.poll();
        Duration backoff = poll;
        while (!stopping) {
            try {
                if (cycle()) {
                    break;
                }
                backoff = poll;
            } catch (IOException | RuntimeException e) {
                out.println(
                        "could not check or set protection ("
                                + e.getMessage()
                                + "); again in "
                                + backoff.toSeconds()
                                + " s");
                backoff =
                        backoff.multipliedBy(2).compareTo(MAX_BACKOFF) > 0
                                ? MAX_BACKOFF
                                : backoff.multipliedBy(2);
            }
            sleep(backoff);
        }
        stopping = true; // let go, or terminated: a later SIGTERM has nothing left to do
        done.countDown();
    }

    /** One look: protect, renew or release. True once the task has been let go. */
    private boolean cycle() throws IOException {
        List<String> jobs = running();
        boolean busy = !jobs.isEmpty() && busy();
        if (!busy) {
            if (shielded) {
                set(false);
                out.println(
                        "this TaskManager runs no task: protection released, so a scale-in can take it");
            }
            return false;
        }
        long now = System.nanoTime();
        if (now < yieldUntilNanos) {
            return false;
        }
        if (shielded && now - shieldedSinceNanos >= timing.maxProtected().toNanos()) {
            handOver(
                    jobs,
                    "protected for "
                            + timing.maxProtected().toSeconds()
                            + " s, the longest stretch: leaving the task to a deployment or"
                            + " scale-in that waits for it");
            yieldUntilNanos = System.nanoTime() + timing.yieldFor().toNanos();
            out.println(
                    "unprotected for "
                            + timing.yieldFor().toSeconds()
                            + " s; protecting again after that if the task is still here");
            return false;
        }
        if (shielded && now < renewAtNanos) {
            return false;
        }
        JsonNode answer = set(true);
        String reason = answer.path("failure").path("Reason").asText("");
        if (LET_GO.contains(reason)) {
            handOver(jobs, "the ECS agent says " + reason);
            return true;
        }
        if (!reason.isEmpty() || answer.has("error")) {
            out.println(
                    "protection not granted: "
                            + answer
                            + "; trying again in "
                            + timing.poll().toSeconds()
                            + " s");
        }
        return false;
    }

    /**
     * ECS is stopping the task (SIGTERM): hand over as when a deployment asks, within the stop
     * timeout, if this TaskManager works.
     */
    void terminate() {
        if (done.getCount() == 0) {
            return; // already let go
        }
        stopping = true;
        try {
            done.await(timing.poll().toMillis() + 5_000, TimeUnit.MILLISECONDS);
            List<String> jobs = running();
            if (!jobs.isEmpty() && busy()) {
                handOver(jobs, "SIGTERM");
            } else {
                // An idle TaskManager (the spare) leaves no work behind: no checkpoint to wait for.
                set(false);
                out.println("SIGTERM: this TaskManager runs no task; protection released");
            }
        } catch (IOException | RuntimeException e) {
            out.println("on SIGTERM: " + e.getMessage() + "; the protection expires by itself");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * A checkpoint of every running job, waited for, so the replacement starts from now; then let
     * go.
     */
    private void handOver(List<String> jobs, String why) throws IOException {
        out.println(why + ": checkpointing " + jobs + " before letting go");
        for (String job : jobs) {
            try {
                out.println(
                        "checkpoint "
                                + rest.checkpoint(job, HAND_OVER_CHECKPOINT)
                                + " of job "
                                + job
                                + " completed");
            } catch (IOException e) {
                out.println(
                        "checkpoint of job "
                                + job
                                + " failed ("
                                + e.getMessage()
                                + "): letting go anyway;"
                                + " the replacement resumes from the previous one");
            }
        }
        set(false);
        out.println("protection released");
    }

    private List<String> running() throws IOException {
        return rest.jobStates().entrySet().stream()
                .filter(j -> j.getValue().equals("RUNNING"))
                .map(Map.Entry::getKey)
                .toList();
    }

    /**
     * Whether this task's TaskManager has a slot in use. It is found by the address it registered
     * with; on a cluster with one TaskManager (an embedded one) that one is taken.
     */
    private boolean busy() throws IOException {
        JsonNode taskManagers = rest.get("/taskmanagers").path("taskmanagers");
        for (JsonNode tm : taskManagers) {
            if (taskManagers.size() == 1
                    || tm.path("path").asText().contains("@" + taskManagerHost + ":")
                    || tm.path("id").asText().startsWith(taskManagerHost)) {
                return tm.path("freeSlots").asInt() < tm.path("slotsNumber").asInt();
            }
        }
        return false;
    }

    /**
     * One PUT to the agent, retried with exponential backoff and full jitter while it answers
     * {@code ThrottlingException}. Renewal comes long before expiry, so a run of throttled answers
     * never lets protection lapse.
     */
    private JsonNode set(boolean enabled) throws IOException {
        String body =
                enabled
                        ? "{\"ProtectionEnabled\":true,\"ExpiresInMinutes\":"
                                + timing.expiresMinutes()
                                + "}"
                        : "{\"ProtectionEnabled\":false}";
        for (int attempt = 1; ; attempt++) {
            JsonNode answer = put(body);
            if (!answer.path("error").path("Code").asText().equals("ThrottlingException")
                    || attempt == THROTTLE_ATTEMPTS) {
                if (answer.path("protection").path("ProtectionEnabled").asBoolean(false)) {
                    if (!shielded) {
                        shieldedSinceNanos = System.nanoTime();
                    }
                    shielded = true;
                    renewAtNanos = System.nanoTime() + timing.renewEvery().toNanos();
                    out.println(
                            "protected until "
                                    + answer.path("protection").path("ExpirationDate").asText()
                                    + "; renewing in "
                                    + timing.renewEvery().toSeconds()
                                    + " s");
                } else if (!enabled) {
                    shielded = false;
                }
                return answer;
            }
            long backoff = jitter.nextLong(1 + Math.min(30_000, 200L << attempt));
            out.printf(
                    "throttled by the ECS agent (attempt %d); again in %d ms%n", attempt, backoff);
            FlinkRest.sleep(backoff);
        }
    }

    private JsonNode put(String body) throws IOException {
        try {
            HttpResponse<String> r =
                    http.send(
                            HttpRequest.newBuilder(URI.create(agent))
                                    .timeout(Duration.ofSeconds(30))
                                    .header("Content-Type", "application/json")
                                    .PUT(HttpRequest.BodyPublishers.ofString(body))
                                    .build(),
                            HttpResponse.BodyHandlers.ofString());
            return JSON.readTree(r.body().isEmpty() ? "{}" : r.body());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException(e);
        }
    }

    private void sleep(Duration d) throws InterruptedException {
        long until = System.nanoTime() + d.toNanos();
        while (!stopping && System.nanoTime() < until) {
            Thread.sleep(Math.min(200, Math.max(1, (until - System.nanoTime()) / 1_000_000)));
        }
    }
}
