package dev.snapshots.cli.testutils;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * A stand-in for the part of ECS a TaskManager service meets: the service scheduler of one service
 * with rolling deployments, and each task's agent endpoint {@code
 * $ECS_AGENT_URI/task-protection/v1/state}. There is no ECS here; this follows what ECS documents
 * (the developer guide's "task scale-in protection" pages, the agent's endpoint and its answers):
 *
 * <ul>
 *   <li>A deployment at minimum healthy 100 % and maximum 200 % starts the new deployment's tasks
 *       first, up to twice the desired count, and stops a task of an older deployment only while
 *       the running tasks stay at or above the desired count without it. In general, tasks whose
 *       containers run (a stopping one among them) stay within the maximum, rounded down, and
 *       running ones at or above the minimum healthy count, rounded up: at 0 % and 100 % (a
 *       JobManager service) the old task stops first, and the new one starts once it has stopped.
 *   <li>Neither a deployment nor a scale-in stops a protected task: it waits until protection is
 *       released or expires. A scale-in takes unprotected tasks, chosen at random.
 *   <li>A request to protect a task while the service would then have more protected tasks than its
 *       desired count is refused with {@code DEPLOYMENT_BLOCKED}.
 *   <li>A task chosen to stop answers every request with {@code TASK_STOPPING_OR_STOPPED} from that
 *       moment; its containers get SIGTERM a moment later ({@link RunningTask#stop}).
 *   <li>The agent passes on the ECS API's throttling now and then: HTTP 400 with {@code
 *       ThrottlingException}, as the agent answers.
 * </ul>
 *
 * <p>Each task is started by a {@link TaskLauncher}, which the test gives real parts (a TaskManager
 * and the sidecar). The scheduler acts every 100 ms, where ECS takes seconds to a minute: time to
 * converge here is a lower bound of the real one, measured in the sidecar's own pacing.
 */
public final class EcsControlPlane implements AutoCloseable {
    /** Starts a task's containers; returns once they run (the health check passes). */
    @FunctionalInterface
    public interface TaskLauncher {
        RunningTask start(String taskId, String agentUri) throws Exception;
    }

    /** A started task's containers. */
    @FunctionalInterface
    public interface RunningTask {
        /**
         * SIGTERM to the containers, in the reverse order of their dependencies (a container stops
         * before those it depends on), each given {@code stopTimeout} before SIGKILL.
         */
        void stop(Duration stopTimeout) throws Exception;
    }

    /** A task's place in its lifecycle, as ECS names the statuses it reports. */
    public enum Status {
        PROVISIONING,
        RUNNING,
        STOPPING,
        STOPPED
    }

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String ARN_PREFIX = "arn:aws:ecs:us-east-1:000000000000:task/snapshots/";
    private static final Duration TICK = Duration.ofMillis(100);
    private static final Duration STOP_TIMEOUT = Duration.ofSeconds(120);

    private interface ContainerWork {
        void run() throws Exception;
    }

    /** What the control plane knows of one task. */
    private static final class Task {
        final String id;
        final int deployment;
        Status status = Status.PROVISIONING;
        Instant protectedUntil;
        RunningTask containers;

        Task(String id, int deployment) {
            this.id = id;
            this.deployment = deployment;
        }

        boolean isProtected(Instant now) {
            return protectedUntil != null && protectedUntil.isAfter(now);
        }
    }

    private final TaskLauncher launcher;
    private final double throttleRate;
    private final Random random;
    private final HttpServer agent;
    private final ScheduledExecutorService scheduler =
            Executors.newSingleThreadScheduledExecutor(r -> new Thread(r, "ecs-scheduler"));
    private final ExecutorService containers = Executors.newCachedThreadPool();
    private final Map<String, Task> tasks = new LinkedHashMap<>();
    private final List<String> events = new ArrayList<>();
    private final Map<String, AtomicInteger> answers = new LinkedHashMap<>();
    private final long startNanos = System.nanoTime();
    private int desiredCount;
    private int minimumHealthyPercent = 100;
    private int maximumPercent = 200;
    private int primary;
    private int taskNumber;
    private Throwable failure;

    /**
     * @param throttleRate the share of agent requests answered with {@code ThrottlingException}
     * @param seed for the throttling and for the choice of tasks a scale-in takes
     */
    public EcsControlPlane(TaskLauncher launcher, double throttleRate, long seed)
            throws IOException {
        this.launcher = launcher;
        this.throttleRate = throttleRate;
        this.random = new Random(seed);
        agent = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 16);
        agent.createContext("/api/", this::agentRequest);
        agent.setExecutor(Executors.newFixedThreadPool(4));
        agent.start();
        scheduler.scheduleWithFixedDelay(
                this::schedule, TICK.toMillis(), TICK.toMillis(), TimeUnit.MILLISECONDS);
    }

    /** Creates the service's first deployment with this many tasks, deployed at 100 % / 200 %. */
    public synchronized void createService(int desiredCount) {
        createService(desiredCount, 100, 200);
    }

    /**
     * Creates the service's first deployment with this many tasks and its deployment configuration:
     * during a deployment at least {@code minimumHealthyPercent} of the desired count (rounded up)
     * keep running, and at most {@code maximumPercent} (rounded down) run or start. A JobManager
     * service at 0 % / 100 % stops its old task before it starts the new one.
     */
    public synchronized void createService(
            int desiredCount, int minimumHealthyPercent, int maximumPercent) {
        this.desiredCount = desiredCount;
        this.minimumHealthyPercent = minimumHealthyPercent;
        this.maximumPercent = maximumPercent;
        event(
                "service created: desired count "
                        + desiredCount
                        + ", "
                        + minimumHealthyPercent
                        + " % / "
                        + maximumPercent
                        + " %");
    }

    /**
     * A new deployment (a new task definition, or a forced deployment): it becomes the PRIMARY one,
     * and every task of the others is to be replaced.
     */
    public synchronized void deploy() {
        primary++;
        event("deployment " + primary + " started (PRIMARY)");
    }

    /** A scale-in or scale-out: the service's desired count changes, no new deployment. */
    public synchronized void scale(int desiredCount) {
        this.desiredCount = desiredCount;
        event("desired count set to " + desiredCount);
    }

    /**
     * Waits until the service is steady: only tasks of the PRIMARY deployment run, as many as it
     * wants, none is starting or stopping. Fails with what the service looks like if not.
     */
    public Duration awaitSteady(Duration timeout) throws InterruptedException {
        long start = System.nanoTime();
        long deadline = start + timeout.toNanos();
        while (System.nanoTime() < deadline) {
            synchronized (this) {
                if (failure != null) {
                    throw new AssertionError("the stand-in control plane failed", failure);
                }
                if (steady()) {
                    event("steady state");
                    return Duration.ofNanos(System.nanoTime() - start);
                }
            }
            Thread.sleep(TICK.toMillis());
        }
        throw new AssertionError("not steady after " + timeout + ": " + describe());
    }

    /** The tasks, their deployment, status and protection, and the events so far. */
    public synchronized String describe() {
        Instant now = Instant.now();
        StringBuilder s = new StringBuilder();
        s.append("desired ").append(desiredCount).append(", PRIMARY deployment ").append(primary);
        for (Task t : tasks.values()) {
            s.append("\n  ")
                    .append(t.id)
                    .append(" deployment ")
                    .append(t.deployment)
                    .append(' ')
                    .append(t.status)
                    .append(t.isProtected(now) ? " protected" : "");
        }
        s.append("\nagent answers: ").append(answers);
        events.forEach(e -> s.append("\n  ").append(e));
        return s.toString();
    }

    /** How often the agent answered with this code or reason so far. */
    public synchronized int answered(String codeOrReason) {
        AtomicInteger n = answers.get(codeOrReason);
        return n == null ? 0 : n.get();
    }

    /** The ids of the tasks protected now. */
    public synchronized List<String> protectedTasks() {
        Instant now = Instant.now();
        return tasks.values().stream().filter(t -> t.isProtected(now)).map(t -> t.id).toList();
    }

    /** The ids of the tasks in this status. */
    public synchronized List<String> tasks(Status status) {
        return tasks.values().stream().filter(t -> t.status == status).map(t -> t.id).toList();
    }

    @Override
    public void close() throws InterruptedException {
        scheduler.shutdownNow();
        scheduler.awaitTermination(10, TimeUnit.SECONDS);
        agent.stop(0);
        containers.shutdownNow();
    }

    // --- the service scheduler ---------------------------------------------------------------

    private synchronized void schedule() {
        try {
            Instant now = Instant.now();
            List<Task> live =
                    tasks.values().stream()
                            .filter(t -> t.status.compareTo(Status.STOPPING) < 0)
                            .toList();
            long ofPrimary = live.stream().filter(t -> t.deployment == primary).count();
            long running = live.stream().filter(t -> t.status == Status.RUNNING).count();
            // The maximum counts every task whose containers still run, a stopping one too.
            long started = tasks.values().stream().filter(t -> t.status != Status.STOPPED).count();
            if (ofPrimary < desiredCount && started < desiredCount * maximumPercent / 100) {
                launch(new Task("t" + ++taskNumber, primary));
                return;
            }
            // A task stops only while the running ones stay at the minimum healthy count without
            // it. The older deployments' tasks go first, then a scale-in's (down to the desired
            // count).
            List<Task> old =
                    live.stream()
                            .filter(t -> t.deployment != primary && t.status == Status.RUNNING)
                            .toList();
            List<Task> candidates =
                    (old.isEmpty() ? live : old)
                            .stream()
                                    .filter(t -> t.status == Status.RUNNING && !t.isProtected(now))
                                    .toList();
            long floor =
                    old.isEmpty()
                            ? desiredCount
                            : (desiredCount * minimumHealthyPercent + 99) / 100;
            if (running > floor && !candidates.isEmpty()) {
                stop(candidates.get(random.nextInt(candidates.size())));
            }
        } catch (RuntimeException e) {
            failure = e;
        }
    }

    private boolean steady() {
        long ofPrimary = 0;
        for (Task t : tasks.values()) {
            if (t.status == Status.PROVISIONING || t.status == Status.STOPPING) {
                return false;
            }
            if (t.status == Status.RUNNING) {
                if (t.deployment != primary) {
                    return false;
                }
                ofPrimary++;
            }
        }
        return ofPrimary == desiredCount;
    }

    private void launch(Task task) {
        tasks.put(task.id, task);
        event(task.id + " provisioning (deployment " + task.deployment + ")");
        String agentUri = "http://127.0.0.1:" + agent.getAddress().getPort() + "/api/" + task.id;
        onTaskThread(
                () -> {
                    RunningTask started = launcher.start(task.id, agentUri);
                    synchronized (this) {
                        task.containers = started;
                        task.status = Status.RUNNING;
                        event(task.id + " running");
                    }
                });
    }

    /** ECS sets the task's desired status to STOPPED; its agent stops the containers. */
    private void stop(Task task) {
        task.status = Status.STOPPING;
        task.protectedUntil = null;
        event(task.id + " stopping (deployment " + task.deployment + ")");
        onTaskThread(
                () -> {
                    Thread.sleep(200); // the agent hears of it a moment later
                    task.containers.stop(STOP_TIMEOUT);
                    synchronized (this) {
                        task.status = Status.STOPPED;
                        event(task.id + " stopped");
                    }
                });
    }

    /**
     * Starting and stopping containers takes time: off the scheduler, a failure kept for the test.
     */
    private void onTaskThread(ContainerWork work) {
        containers.execute(
                () -> {
                    try {
                        work.run();
                    } catch (Exception e) {
                        synchronized (this) {
                            failure = e;
                        }
                    }
                });
    }

    private void event(String what) {
        events.add(String.format("%6.1f s %s", (System.nanoTime() - startNanos) / 1e9, what));
    }

    // --- the agent endpoint ------------------------------------------------------------------

    private void agentRequest(HttpExchange exchange) throws IOException {
        try (exchange) {
            String[] path = exchange.getRequestURI().getPath().split("/");
            // /api/{task}/task-protection/v1/state
            if (path.length != 6
                    || !String.join("/", List.of(path).subList(3, 6))
                            .equals("task-protection/v1/state")) {
                respond(exchange, 404, error(null, "ResourceNotFoundException", "no such path"));
                return;
            }
            JsonNode request =
                    exchange.getRequestMethod().equals("PUT")
                            ? JSON.readTree(exchange.getRequestBody().readAllBytes())
                            : null;
            synchronized (this) {
                answer(exchange, tasks.get(path[2]), request);
            }
        }
    }

    private void answer(HttpExchange exchange, Task task, JsonNode request) throws IOException {
        if (task == null) {
            respond(exchange, 404, error(null, "ResourceNotFoundException", "no such task"));
            return;
        }
        String arn = ARN_PREFIX + task.id;
        if (random.nextDouble() < throttleRate) {
            count("ThrottlingException");
            respond(exchange, 400, error(arn, "ThrottlingException", "Rate exceeded"));
            return;
        }
        if (task.status.compareTo(Status.STOPPING) >= 0) {
            count("TASK_STOPPING_OR_STOPPED");
            respond(exchange, 200, failure(arn, "TASK_STOPPING_OR_STOPPED"));
            return;
        }
        Instant now = Instant.now();
        if (request != null) {
            if (!request.path("ProtectionEnabled").isBoolean()) {
                count("InvalidParameterException");
                respond(
                        exchange,
                        400,
                        error(arn, "InvalidParameterException", "ProtectionEnabled is required"));
                return;
            }
            if (request.path("ProtectionEnabled").asBoolean()) {
                int minutes = request.path("ExpiresInMinutes").asInt(120);
                if (minutes < 1 || minutes > 2880) {
                    count("InvalidParameterException");
                    respond(
                            exchange,
                            400,
                            error(arn, "InvalidParameterException", "ExpiresInMinutes 1..2880"));
                    return;
                }
                long others =
                        tasks.values().stream()
                                .filter(t -> t != task && t.isProtected(now))
                                .count();
                if (others + 1 > desiredCount) {
                    count("DEPLOYMENT_BLOCKED");
                    respond(exchange, 200, failure(arn, "DEPLOYMENT_BLOCKED"));
                    return;
                }
                task.protectedUntil = now.plus(Duration.ofMinutes(minutes));
                count("protected");
            } else {
                task.protectedUntil = null;
                count("released");
            }
        }
        ObjectNode protection = JSON.createObjectNode();
        boolean on = task.isProtected(now);
        protection.put("ExpirationDate", on ? task.protectedUntil.toString() : null);
        protection.put("ProtectionEnabled", on);
        protection.put("TaskArn", arn);
        ObjectNode body = JSON.createObjectNode();
        body.set("protection", protection);
        respond(exchange, 200, body);
    }

    private void count(String answer) {
        answers.computeIfAbsent(answer, a -> new AtomicInteger()).incrementAndGet();
    }

    private static ObjectNode failure(String arn, String reason) {
        ObjectNode failure = JSON.createObjectNode();
        failure.put("Arn", arn);
        failure.putNull("Detail");
        failure.put("Reason", reason);
        ObjectNode body = JSON.createObjectNode();
        body.set("failure", failure);
        return body;
    }

    private ObjectNode error(String arn, String code, String message) {
        ObjectNode error = JSON.createObjectNode();
        error.put("Arn", arn);
        error.put("Code", code);
        error.put("Message", message);
        ObjectNode body = JSON.createObjectNode();
        body.put("requestID", Long.toHexString(random.nextLong()));
        body.set("error", error);
        return body;
    }

    private static void respond(HttpExchange exchange, int status, JsonNode body)
            throws IOException {
        byte[] bytes = JSON.writeValueAsBytes(body);
        exchange.getResponseHeaders().set("Content-Type", "application/json");
        exchange.sendResponseHeaders(status, bytes.length);
        try (OutputStream o = exchange.getResponseBody()) {
            o.write(bytes);
        }
    }
}
