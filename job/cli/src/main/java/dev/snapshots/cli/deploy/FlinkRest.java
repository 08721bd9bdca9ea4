package dev.snapshots.cli.deploy;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.net.ssl.SSLException;
import org.apache.flink.annotation.Internal;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.ObjectMapper;

/**
 * The few calls of Flink's REST API that deploying and operating the job needs: upload a jar, run
 * it (optionally from a savepoint), take a savepoint, stop with a savepoint, cancel, and read job
 * state and checkpoints. What {@code flink run} and {@code flink stop} do, without a Flink install.
 */
@Internal
public final class FlinkRest {
    public static final Set<String> TERMINAL = Set.of("FINISHED", "FAILED", "CANCELED");
    private static final ObjectMapper JSON = new ObjectMapper();

    /**
     * How every run from a checkpoint or savepoint restores: {@code restoreMode} of {@code POST
     * /jars/:jarid/run} (Flink 1.20 also reads it as {@code claimMode}).
     */
    static final String RESTORE_MODE = "NO_CLAIM";

    private final String base;
    private final Optional<RestTls> tls;
    private final HttpClient http;

    /**
     * The REST API at {@code base}; an {@code https} one with the stores the environment names
     * ({@link RestTls#fromEnvironment}).
     */
    public FlinkRest(String base) {
        this(base, RestTls.fromEnvironment(System.getenv()));
    }

    public FlinkRest(String base, Optional<RestTls> tls) {
        this.base = base;
        this.tls = tls;
        // HTTP/1.1: the JDK client's default h2c upgrade attempt is refused by some proxies in
        // front of Flink.
        HttpClient.Builder http =
                HttpClient.newBuilder()
                        .version(HttpClient.Version.HTTP_1_1)
                        .connectTimeout(Duration.ofSeconds(5));
        if (tls.isPresent() && base.startsWith("https:")) {
            try {
                http.sslContext(tls.get().sslContext());
            } catch (IOException e) {
                throw new IllegalArgumentException(e.getMessage(), e);
            }
        }
        this.http = http.build();
    }

    /**
     * Runs a job jar on the JobManager that answers now: its {@code entryClass} (null: the jar's
     * Main-Class) with these program arguments, from {@code savepoint} and under job id {@code
     * jobId} when not null (else Flink picks a fresh id); returns the job's id.
     *
     * <p>An uploaded jar is a file of one JobManager process: a successor (a task ECS replaced, a
     * JobManager killed and started again) has none of its predecessor's uploads, and answers a run
     * of one with "Jar file ... does not exist". So no jar id outlives this call: the jar is
     * uploaded each time, and again when the JobManager behind the address changed between the
     * upload and the run.
     */
    public String uploadAndRun(
            Path jar, String entryClass, List<String> args, String savepoint, String jobId)
            throws IOException {
        for (int attempt = 1; ; attempt++) {
            String jarId = upload(jar);
            try {
                return run(jarId, entryClass, args, savepoint, jobId);
            } catch (IOException e) {
                if (attempt == 3 || !jarGone(e)) {
                    throw e;
                }
            } finally {
                forget(jarId);
            }
        }
    }

    /**
     * Deletes an upload once it has served: the job runs from what Flink copied to its blob store,
     * and a JobManager keeps every upload on its disk until told otherwise (about 100 MB each, two
     * an upgrade).
     */
    private void forget(String jarId) {
        try {
            send(HttpRequest.newBuilder(URI.create(base + "/jars/" + jarId)).DELETE());
        } catch (IOException e) {
            // Not there, or not its JobManager any more (replaced meanwhile): nothing to free.
        }
    }

    /** A run refused because this JobManager has no such upload: nothing was started. */
    private static boolean jarGone(IOException e) {
        String message = String.valueOf(e.getMessage());
        return message.contains("/run: ")
                && message.contains("Jar file ")
                && message.contains(" does not exist");
    }

    /** Uploads a job jar, streamed from the file (it is a hundred MB); returns its id here. */
    private String upload(Path jar) throws IOException {
        String boundary = "----snapshots" + UUID.randomUUID();
        byte[] head =
                ("--"
                                + boundary
                                + "\r\nContent-Disposition: form-data; name=\"jarfile\"; filename=\"job.jar\"\r\n"
                                + "Content-Type: application/x-java-archive\r\n\r\n")
                        .getBytes(StandardCharsets.UTF_8);
        byte[] tail = ("\r\n--" + boundary + "--\r\n").getBytes(StandardCharsets.UTF_8);
        JsonNode uploaded =
                send(
                        HttpRequest.newBuilder(URI.create(base + "/jars/upload"))
                                .header("Content-Type", "multipart/form-data; boundary=" + boundary)
                                .POST(
                                        HttpRequest.BodyPublishers.concat(
                                                HttpRequest.BodyPublishers.ofByteArray(head),
                                                HttpRequest.BodyPublishers.ofFile(jar),
                                                HttpRequest.BodyPublishers.ofByteArray(tail))));
        return Path.of(uploaded.path("filename").asText()).getFileName().toString();
    }

    /**
     * Runs a job jar's main on the JobManager up to the job's start, without starting it: what it
     * refuses as it builds the job (a table it cannot plan, a store or job version identity the
     * sink refuses), it refuses now.
     *
     * @throws IllegalArgumentException with the refusal's innermost cause, if the program refused
     * @throws IOException if the JobManager could not be asked
     */
    public void plan(Path jar, String entryClass, List<String> args) throws IOException {
        String jarId = upload(jar);
        try {
            post("/jars/" + jarId + "/plan", request(entryClass, args));
        } catch (IOException e) {
            String message = String.valueOf(e.getMessage());
            if (!message.contains("/plan: 4") && !message.contains("/plan: 5")) {
                throw e;
            }
            // The program's exception comes as the text of its stack trace: the innermost cause
            // says what to change.
            Matcher cause = CAUSE.matcher(message.replace("\\n", "\n").replace("\\t", "\t"));
            String reason = "the program refused: " + message;
            while (cause.find()) {
                reason = cause.group(1).strip();
            }
            throw new IllegalArgumentException(reason, e);
        } finally {
            forget(jarId);
        }
    }

    private static final Pattern CAUSE = Pattern.compile("Caused by: [\\w.$]+: ([^\n]*)");

    private static Map<String, Object> request(String entryClass, List<String> args) {
        Map<String, Object> request = new LinkedHashMap<>();
        if (entryClass != null) {
            request.put("entryClass", entryClass);
        }
        request.put("programArgsList", args);
        return request;
    }

    private String run(
            String jarId, String entryClass, List<String> args, String savepoint, String jobId)
            throws IOException {
        Map<String, Object> request = request(entryClass, args);
        if (savepoint != null) {
            request.put("savepointPath", savepoint);
            // Never the cluster's default (execution.state-recovery.claim-mode): under CLAIM or
            // LEGACY an incremental RocksDB job goes on referencing the shared files of the
            // checkpoint it resumed from, which lie in an older JobManager's directory that
            // 'submit' prunes. Under NO_CLAIM its first checkpoint is a full one of its own.
            request.put("restoreMode", RESTORE_MODE);
        }
        if (jobId != null) {
            request.put("jobId", jobId);
        }
        return post("/jars/" + jarId + "/run", request).path("jobid").asText();
    }

    /** Takes a savepoint and keeps the job running; returns its path. */
    public String savepoint(String jobId, Duration timeout) throws IOException {
        return awaitSavepoint(
                jobId,
                post("/jobs/" + jobId + "/savepoints", Map.of("cancel-job", false)),
                timeout);
    }

    /**
     * Stops the job with a savepoint (draining event time when {@code drain}); returns its path.
     */
    public String stopWithSavepoint(String jobId, boolean drain, Duration timeout)
            throws IOException {
        return stopWithSavepoint(jobId, drain, null, timeout);
    }

    /** As above, into {@code directory} rather than the cluster's default savepoint directory. */
    public String stopWithSavepoint(String jobId, boolean drain, String directory, Duration timeout)
            throws IOException {
        Map<String, Object> request = new LinkedHashMap<>();
        request.put("drain", drain);
        if (directory != null) {
            request.put("targetDirectory", directory);
        }
        return awaitSavepoint(jobId, post("/jobs/" + jobId + "/stop", request), timeout);
    }

    /** A value of the JobManager's configuration, if set. */
    public Optional<String> config(String key) throws IOException {
        for (JsonNode entry : get("/jobmanager/config")) {
            if (entry.path("key").asText().equals(key)) {
                return Optional.of(entry.path("value").asText());
            }
        }
        return Optional.empty();
    }

    public void cancel(String jobId) throws IOException {
        send(
                HttpRequest.newBuilder(URI.create(base + "/jobs/" + jobId + "?mode=cancel"))
                        .method("PATCH", HttpRequest.BodyPublishers.noBody()));
    }

    /** Every job the cluster knows, with its state, from one call. */
    public Map<String, String> jobStates() throws IOException {
        Map<String, String> states = new LinkedHashMap<>();
        for (JsonNode job : get("/jobs/overview").path("jobs")) {
            states.put(job.path("jid").asText(), job.path("state").asText());
        }
        return states;
    }

    /** The ids of the jobs not yet FINISHED, FAILED or CANCELED. */
    public List<String> unfinishedJobs() throws IOException {
        return jobStates().entrySet().stream()
                .filter(j -> !TERMINAL.contains(j.getValue()))
                .map(Map.Entry::getKey)
                .toList();
    }

    JsonNode job(String jobId) throws IOException {
        return get("/jobs/" + jobId);
    }

    public String state(String jobId) throws IOException {
        return job(jobId).path("state").asText();
    }

    /** RUNNING with every task running: what a savepoint needs, and what "recovered" means here. */
    public boolean allTasksRunning(String jobId) throws IOException {
        JsonNode job = job(jobId);
        if (!job.path("state").asText().equals("RUNNING")) {
            return false;
        }
        for (JsonNode v : job.path("vertices")) {
            if (!v.path("status").asText().equals("RUNNING")) {
                return false;
            }
        }
        return true;
    }

    /** When the latest completed checkpoint was triggered (epoch ms), 0 if none. */
    public long latestCheckpointMillis(String jobId) throws IOException {
        return get("/jobs/" + jobId + "/checkpoints")
                .path("latest")
                .path("completed")
                .path("trigger_timestamp")
                .asLong(0);
    }

    /** The id of the latest checkpoint the job completed on this JobManager; -1 if none. */
    public long latestCheckpointId(String jobId) throws IOException {
        return get("/jobs/" + jobId + "/checkpoints")
                .path("latest")
                .path("completed")
                .path("id")
                .asLong(-1);
    }

    /**
     * The path of the latest checkpoint the job completed on this JobManager, if it is one of its
     * own: not the checkpoint it was restored from.
     */
    public Optional<String> ownCheckpoint(String jobId) throws IOException {
        JsonNode latest = get("/jobs/" + jobId + "/checkpoints").path("latest");
        String completed = latest.path("completed").path("external_path").asText("");
        String restored = latest.path("restored").path("external_path").asText("");
        return completed.isEmpty() || completed.equals(restored)
                ? Optional.empty()
                : Optional.of(completed);
    }

    /** The newest completed savepoint's path, if the job took one. */
    public Optional<String> latestSavepoint(String jobId) throws IOException {
        JsonNode savepoint =
                get("/jobs/" + jobId + "/checkpoints").path("latest").path("savepoint");
        return savepoint.hasNonNull("external_path")
                ? Optional.of(savepoint.path("external_path").asText())
                : Optional.empty();
    }

    /** How often the job failed and restarted so far. */
    public int restarts(String jobId) throws IOException {
        return get("/jobs/" + jobId + "/exceptions")
                .path("exceptionHistory")
                .path("entries")
                .size();
    }

    public JsonNode get(String path) throws IOException {
        return send(HttpRequest.newBuilder(URI.create(base + path)).GET());
    }

    /**
     * Until the REST API answers: a JobManager container's submitter starts beside a JobManager
     * still booting.
     */
    void awaitUp(Duration timeout) throws IOException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            try {
                get("/overview");
                return;
            } catch (SSLException e) {
                throw e; // it answered, and will answer the same again
            } catch (IOException e) {
                if (System.nanoTime() > deadline) {
                    throw new IOException(
                            "the JobManager at "
                                    + base
                                    + " did not answer within "
                                    + timeout
                                    + ": "
                                    + e,
                            e);
                }
                sleep(1000);
            }
        }
    }

    public String awaitTerminal(String jobId, Duration timeout) throws IOException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            String state = state(jobId);
            if (TERMINAL.contains(state)) {
                return state;
            }
            if (System.nanoTime() > deadline) {
                throw new IOException("job " + jobId + " still " + state + " after " + timeout);
            }
            sleep(500);
        }
    }

    private String awaitSavepoint(String jobId, JsonNode trigger, Duration timeout)
            throws IOException {
        return awaitOperation(
                        "savepoint",
                        jobId,
                        "/savepoints/" + trigger.path("request-id").asText(),
                        timeout)
                .path("location")
                .asText();
    }

    /** Triggers a checkpoint now and waits for it; returns its id. */
    long checkpoint(String jobId, Duration timeout) throws IOException {
        JsonNode trigger = post("/jobs/" + jobId + "/checkpoints", Map.of());
        return awaitOperation(
                        "checkpoint",
                        jobId,
                        "/checkpoints/" + trigger.path("request-id").asText(),
                        timeout)
                .path("checkpointId")
                .asLong();
    }

    /**
     * Polls an asynchronous operation of a job until it completes; its result, or an IOException
     * saying why it failed.
     */
    private JsonNode awaitOperation(String what, String jobId, String path, Duration timeout)
            throws IOException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (System.nanoTime() < deadline) {
            JsonNode status = get("/jobs/" + jobId + path);
            if (status.path("status").path("id").asText().equals("COMPLETED")) {
                JsonNode op = status.path("operation");
                if (op.has("failure-cause")) {
                    throw new IOException(
                            what
                                    + " of job "
                                    + jobId
                                    + " failed: "
                                    + op.path("failure-cause")
                                            .path("stack-trace")
                                            .asText()
                                            .lines()
                                            .findFirst()
                                            .orElse("?"));
                }
                return op;
            }
            sleep(200);
        }
        throw new IOException(what + " of job " + jobId + " not done after " + timeout);
    }

    private JsonNode post(String path, Object body) throws IOException {
        return send(
                HttpRequest.newBuilder(URI.create(base + path))
                        .header("Content-Type", "application/json")
                        .POST(HttpRequest.BodyPublishers.ofString(JSON.writeValueAsString(body))));
    }

    private JsonNode send(HttpRequest.Builder request) throws IOException {
        HttpResponse<String> response;
        try {
            response =
                    http.send(
                            request.timeout(Duration.ofSeconds(60)).build(),
                            HttpResponse.BodyHandlers.ofString());
        } catch (SSLException e) {
            throw new SSLException(
                    "TLS with the JobManager at "
                            + base
                            + " failed ("
                            + e.getMessage()
                            + "): "
                            + (tls.isPresent()
                                    ? "its certificate must name the host and be signed by what "
                                            + RestTls.TRUSTSTORE
                                            + " holds, and its truststore must accept "
                                            + RestTls.KEYSTORE
                                            + "'s"
                                    : "a JobManager with security.ssl.rest.authentication-enabled"
                                            + " takes a client certificate: set "
                                            + RestTls.KEYSTORE
                                            + ", "
                                            + RestTls.TRUSTSTORE
                                            + " and "
                                            + RestTls.PASSWORD),
                    e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException(e);
        }
        if (response.statusCode() >= 300) {
            throw new IOException(
                    response.request().method()
                            + " "
                            + response.uri()
                            + ": "
                            + response.statusCode()
                            + " "
                            + response.body());
        }
        return response.body().isEmpty() ? JSON.createObjectNode() : JSON.readTree(response.body());
    }

    static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
