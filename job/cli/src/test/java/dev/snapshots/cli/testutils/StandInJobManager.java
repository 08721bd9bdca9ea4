package dev.snapshots.cli.testutils;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.node.ArrayNode;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * The REST API of a Flink 1.20 JobManager in session mode behind one address (which ECS may give to
 * a new JobManager process), for the calls {@code FlinkRest} makes, answered as Flink's REST
 * reference documents them and as a real JobManager did:
 *
 * <ul>
 *   <li>{@code POST /jars/upload} gives an id naming a file in this JobManager's own upload
 *       directory; {@code DELETE /jars/:id} removes it, or answers 400 if there is none.
 *   <li>{@code POST /jars/:id/run} takes only JarRunRequestBody's fields (Flink 1.20's strict
 *       mapper answers 400 "Request did not match expected format" to any other, or to an unknown
 *       restore mode); each body is kept, with the restore mode Flink would apply: the body's
 *       {@code restoreMode} (or {@code claimMode}), else the cluster's ({@link
 *       #clusterRestoreMode}). It runs the program on the JobManager: for {@link #runTakes} (a SQL
 *       script compiles there), whether or not the client still listens, and then the job exists
 *       under the requested {@code jobId}, RUNNING, and the run answers with it. A run of an id it
 *       has no file for answers 500 with the text a real JobManager gave (recorded from the local
 *       cluster).
 *   <li>{@code GET /jobs/overview} lists the jobs with their states; {@code GET /jobs/:id} is one
 *       job, 404 if unknown.
 *   <li>{@code PATCH /jobs/:id?mode=cancel} answers 202 and the job is CANCELLING, then CANCELED
 *       once its tasks have ended ({@link #cancelTakes}); 404 for an unknown job, 409 for one
 *       already ended.
 *   <li>{@code GET /overview} and {@code GET /jobmanager/config} (the keys set with {@link
 *       #config}).
 * </ul>
 */
public final class StandInJobManager implements AutoCloseable {
    private static final ObjectMapper JSON = new ObjectMapper();

    /** JarRunRequestBody's fields (Flink 1.20); its strict mapper refuses any other. */
    private static final Set<String> RUN_FIELDS =
            Set.of(
                    "entryClass",
                    "programArgs",
                    "programArgsList",
                    "parallelism",
                    "jobId",
                    "allowNonRestoredState",
                    "savepointPath",
                    "restoreMode",
                    "claimMode",
                    "flinkConfiguration");

    private static final Set<String> RESTORE_MODES = Set.of("CLAIM", "NO_CLAIM", "LEGACY");

    private final HttpServer server;
    private final ExecutorService requests = Executors.newCachedThreadPool();
    private final ScheduledExecutorService tasks = Executors.newSingleThreadScheduledExecutor();
    private final List<String> uploads = new ArrayList<>();
    private final List<String> runs = new ArrayList<>();
    private final List<JsonNode> runBodies = new ArrayList<>();
    private final List<String> restoreModes = new ArrayList<>();
    private final Map<String, String> jobs = new LinkedHashMap<>();
    private final Map<String, String> config = new LinkedHashMap<>();
    private final CountDownLatch runRequested = new CountDownLatch(1);
    private final CountDownLatch runAnswered = new CountDownLatch(1);
    private boolean replaceAfterNextUpload;
    private boolean refuseRuns;
    private Duration runTakes = Duration.ZERO;
    private Duration cancelTakes = Duration.ofMillis(200);
    private int refusedCancels;
    private Path jobLog;

    /** The cluster's execution.state-recovery.claim-mode: Flink's default is NO_CLAIM. */
    private String clusterRestoreMode = "NO_CLAIM";

    private int incarnation = 1;
    private Set<String> jars = new HashSet<>();

    public StandInJobManager() throws IOException {
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 16);
        // A run that takes its time must not hold up the other requests, as on a real JobManager.
        server.setExecutor(requests);
        server.createContext("/", this::handle);
        server.start();
    }

    public String address() {
        return "http://127.0.0.1:" + server.getAddress().getPort();
    }

    /** A new JobManager process behind the address: none of the old one's uploads or jobs. */
    public synchronized void replace() {
        incarnation++;
        jars = new HashSet<>();
        jobs.clear();
    }

    /** The JobManager is replaced right after it answers the next upload. */
    public synchronized void replaceAfterNextUpload() {
        replaceAfterNextUpload = true;
    }

    /** Every run fails as a program that throws does. */
    public synchronized void refuseRuns() {
        refuseRuns = true;
    }

    /** How long a run works on the JobManager before the job exists and the run answers. */
    public synchronized void runTakes(Duration duration) {
        runTakes = duration;
    }

    /** How long a cancelled job's tasks take to end. */
    public synchronized void cancelTakes(Duration duration) {
        cancelTakes = duration;
    }

    /**
     * The next {@code count} cancels answer 500 "Cancellation failed", as Flink's does for a job
     * still initializing (a resume answered a moment ago).
     */
    public synchronized void refuseCancels(int count) {
        refusedCancels = count;
    }

    /**
     * The cluster's execution.state-recovery.claim-mode, which Flink applies to a run from a
     * checkpoint or savepoint that names no restore mode.
     */
    public synchronized void clusterRestoreMode(String mode) {
        clusterRestoreMode = mode;
    }

    public synchronized void config(String key, String value) {
        config.put(key, value);
    }

    /**
     * Appends "job ID STATE" to {@code log} as each job comes to run and to end: a test orders them
     * against other processes' lines there.
     */
    public synchronized void logJobsTo(Path log) {
        jobLog = log;
    }

    /** The JobManager incarnation each upload went to, in order. */
    public synchronized List<String> uploads() {
        return List.copyOf(uploads);
    }

    /** The JobManager incarnation each started job ran on, in order. */
    public synchronized List<String> runs() {
        return List.copyOf(runs);
    }

    /** Each accepted run's request body, in order. */
    public synchronized List<JsonNode> runBodies() {
        return List.copyOf(runBodies);
    }

    /**
     * The restore mode Flink would apply to each accepted run, in order: "none: no savepointPath"
     * for a run from no checkpoint or savepoint.
     */
    public synchronized List<String> restoreModes() {
        return List.copyOf(restoreModes);
    }

    /** The uploads still on the JobManager. */
    public synchronized Set<String> jars() {
        return Set.copyOf(jars);
    }

    /** Every job with its state. */
    public synchronized Map<String, String> jobs() {
        return Map.copyOf(jobs);
    }

    /** Until the first run request has arrived. */
    public boolean awaitRunRequested(Duration timeout) throws InterruptedException {
        return runRequested.await(timeout.toMillis(), TimeUnit.MILLISECONDS);
    }

    /** Until the first run has answered (its job exists). */
    public boolean awaitRunAnswered(Duration timeout) throws InterruptedException {
        return runAnswered.await(timeout.toMillis(), TimeUnit.MILLISECONDS);
    }

    @Override
    public void close() {
        server.stop(0);
        requests.shutdownNow();
        tasks.shutdownNow();
    }

    private String uploadDirectory() {
        return "/tmp/jobmanager-"
                + incarnation
                + "/flink-web-"
                + incarnation
                + "/flink-web-upload/";
    }

    private void handle(HttpExchange exchange) throws IOException {
        byte[] body = exchange.getRequestBody().readAllBytes();
        String path = exchange.getRequestURI().getPath();
        String method = exchange.getRequestMethod();
        if (path.startsWith("/jars/") && path.endsWith("/run")) {
            run(exchange, path.substring("/jars/".length(), path.length() - "/run".length()), body);
            return;
        }
        synchronized (this) {
            if (path.equals("/jars/upload")) {
                upload(exchange);
            } else if (path.startsWith("/jars/") && method.equals("DELETE")) {
                forget(exchange, path.substring("/jars/".length()));
            } else if (path.equals("/overview")) {
                answer(exchange, 200, "{\"taskmanagers\":0,\"flink-version\":\"1.20.1\"}");
            } else if (path.equals("/jobmanager/config")) {
                ArrayNode entries = JSON.createArrayNode();
                config.forEach((k, v) -> entries.addObject().put("key", k).put("value", v));
                answer(exchange, 200, entries.toString());
            } else if (path.equals("/jobs/overview")) {
                ObjectNode overview = JSON.createObjectNode();
                ArrayNode list = overview.putArray("jobs");
                jobs.forEach(
                        (id, state) ->
                                list.addObject()
                                        .put("jid", id)
                                        .put("name", "insert-into_default_catalog")
                                        .put("state", state));
                answer(exchange, 200, overview.toString());
            } else if (path.startsWith("/jobs/")) {
                job(exchange, path.substring("/jobs/".length()), method);
            } else {
                answer(exchange, 404, "{\"errors\":[\"Not found: " + path + "\"]}");
            }
        }
    }

    private void upload(HttpExchange exchange) throws IOException {
        String id = UUID.randomUUID() + "_job.jar";
        jars.add(id);
        uploads.add("jobmanager-" + incarnation);
        answer(
                exchange,
                200,
                "{\"filename\":\"" + uploadDirectory() + id + "\",\"status\":\"success\"}");
        if (replaceAfterNextUpload) {
            replaceAfterNextUpload = false;
            replace();
        }
    }

    private void forget(HttpExchange exchange, String id) throws IOException {
        if (jars.remove(id)) {
            answer(exchange, 200, "{}");
        } else {
            answer(
                    exchange,
                    400,
                    "{\"errors\":[\"File "
                            + id
                            + " does not exist in "
                            + uploadDirectory()
                            + ".\"]}");
        }
    }

    private void run(HttpExchange exchange, String jarId, byte[] body) throws IOException {
        Duration takes;
        JsonNode request = JSON.readTree(body);
        synchronized (this) {
            if (!jars.contains(jarId)) {
                answer(
                        exchange,
                        500,
                        "{\"errors\":[\"Internal server error.\",\"<Exception on server side:\\n"
                                + "java.util.concurrent.CompletionException: org.apache.flink.runtime"
                                + ".rest.handler.RestHandlerException: Jar file "
                                + uploadDirectory()
                                + jarId
                                + " does not exist\\n\\tat org.apache.flink.runtime.webmonitor"
                                + ".handlers.utils.JarHandlerUtils$JarHandlerContext"
                                + ".toPackagedProgram(JarHandlerUtils.java:181)\\n\\t...\\n"
                                + "End of exception on server side>\"]}");
                return;
            }
            if (refuseRuns) {
                answer(
                        exchange,
                        400,
                        "{\"errors\":[\"org.apache.flink.runtime.rest.handler.RestHandlerException:"
                                + " Could not execute application.\\n\\tat ...\"]}");
                return;
            }
            List<String> fields = new ArrayList<>();
            request.fieldNames().forEachRemaining(fields::add);
            String mode = request.path("restoreMode").asText(request.path("claimMode").asText(""));
            if (!RUN_FIELDS.containsAll(fields)
                    || !(mode.isEmpty() || RESTORE_MODES.contains(mode))) {
                answer(
                        exchange,
                        400,
                        "{\"errors\":[\"Bad request received. Request did not match"
                                + " expected format JarRunRequestBody.\"]}");
                return;
            }
            runBodies.add(request);
            restoreModes.add(
                    !request.hasNonNull("savepointPath")
                            ? "none: no savepointPath"
                            : mode.isEmpty() ? clusterRestoreMode : mode);
            takes = runTakes;
        }
        runRequested.countDown();
        try {
            Thread.sleep(takes.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return; // closed
        }
        String jobId =
                request.hasNonNull("jobId")
                        ? request.path("jobId").asText()
                        : UUID.randomUUID().toString().replace("-", "");
        synchronized (this) {
            runs.add("jobmanager-" + incarnation);
            transition(jobId, "RUNNING");
        }
        runAnswered.countDown();
        try {
            answer(exchange, 200, "{\"jobid\":\"" + jobId + "\"}");
        } catch (IOException e) {
            // The client has gone: the job runs all the same.
        }
    }

    private void job(HttpExchange exchange, String id, String method) throws IOException {
        String state = jobs.get(id);
        if (state == null) {
            answer(
                    exchange,
                    404,
                    "{\"errors\":[\"org.apache.flink.runtime.rest.NotFoundException: Job "
                            + id
                            + " not found\"]}");
        } else if (!method.equals("PATCH")) {
            answer(
                    exchange,
                    200,
                    JSON.createObjectNode()
                            .put("jid", id)
                            .put("state", state)
                            .set("vertices", JSON.createArrayNode())
                            .toString());
        } else if (Set.of("FINISHED", "FAILED", "CANCELED").contains(state)) {
            answer(
                    exchange,
                    409,
                    "{\"errors\":[\"Job cancellation failed: Job "
                            + id
                            + " has already reached a terminal state.\"]}");
        } else if (refusedCancels > 0) {
            refusedCancels--;
            answer(
                    exchange,
                    500,
                    "{\"errors\":[\"org.apache.flink.runtime.rest.handler.RestHandlerException:"
                            + " Job cancellation failed: Cancellation failed.\"]}");
        } else {
            transition(id, "CANCELLING");
            tasks.schedule(
                    () -> {
                        synchronized (this) {
                            transition(id, "CANCELED");
                        }
                    },
                    cancelTakes.toMillis(),
                    TimeUnit.MILLISECONDS);
            answer(exchange, 202, "{}");
        }
    }

    private void transition(String id, String state) {
        jobs.put(id, state);
        if (jobLog != null) {
            try {
                Files.writeString(
                        jobLog,
                        "job " + id + " " + state + "\n",
                        StandardOpenOption.CREATE,
                        StandardOpenOption.APPEND);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }

    private static void answer(HttpExchange exchange, int status, String body) throws IOException {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        exchange.getResponseHeaders().add("Content-Type", "application/json");
        exchange.sendResponseHeaders(status, bytes.length);
        try (OutputStream out = exchange.getResponseBody()) {
            out.write(bytes);
        }
    }
}
