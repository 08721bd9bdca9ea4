package dev.snapshots.cli.deploy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.snapshots.key.PartKind;
import dev.snapshots.progress.VersionIdentity;
import dev.snapshots.store.ObjectStore;
import dev.snapshots.store.StoreSpec;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The check that 'upgrade' and 'replay' run before they touch the running version compares the new
 * version's settings with its recorded identity, and records none: a deploy aborted after the
 * check, with a mistyped B, must not pin that B on a version that never ran. The store is real
 * (files); the JobManager is a stand-in answering the few REST calls as Flink 1.20 does.
 */
class PreStopCheckTest {
    private static final String V2 = JobLifecycle.jobId("telemetry", 2);

    @TempDir Path dir;

    private StandInJobManager jobManager;
    private StoreSpec store;
    private Path jar;

    @BeforeEach
    void start() throws IOException {
        jobManager = new StandInJobManager(dir.resolve("checkpoints/jm-1").toUri().toString());
        store = StoreSpec.parse(dir.resolve("store").toUri().toString());
        jar = Files.write(dir.resolve("job.jar"), new byte[] {'P', 'K', 3, 4});
    }

    @AfterEach
    void stop() {
        jobManager.server.stop(0);
    }

    @Test
    void anUpgradeAbortedAfterTheCheckPinsNoBAndTheRightOneThenSucceeds() throws Exception {
        // v2 is not running (it was meant for a replay): the check passes, the stop is refused.
        assertThatThrownBy(() -> run("upgrade", "--roll", "true", "--buckets", "8"))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("404");
        assertThat(identity()).as("v=2's identity after the aborted upgrade").isEmpty();

        jobManager.jobs.put(V2, "RUNNING");
        String upgrade = run("upgrade", "--roll", "true", "--buckets", "4");

        assertThat(upgrade).contains("stopped with savepoint").doesNotContain("refused");
        assertThat(jobManager.stopped).containsExactly(V2);
    }

    @Test
    void aReplayAbortedAfterTheCheckPinsNoBAndTheRightOneThenSucceeds() throws Exception {
        // A mistyped savepoint too: the JobManager refuses the run after the check passed.
        assertThatThrownBy(
                        () -> run("replay", "--from-savepoint", "file:///typo", "--buckets", "8"))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("Could not execute application");
        assertThat(identity()).as("v=2's identity after the aborted replay").isEmpty();

        String replay =
                run("replay", "--from-savepoint", StandInJobManager.SAVEPOINT, "--buckets", "4");

        assertThat(replay).contains("replaying telemetry into v=2").doesNotContain("refused");
        assertThat(jobManager.runs).containsExactly(V2);
    }

    /** A recorded identity is still compared: the check refuses what the version's run would. */
    @Test
    void theCheckStillRefusesSettingsOtherThanTheRecordedOnes() throws Exception {
        try (ObjectStore s = store.open()) {
            new VersionIdentity(
                            PartKind.SNAPSHOT,
                            "telemetry",
                            2,
                            1,
                            "",
                            4,
                            "KEY_GROUPS",
                            128,
                            300_000,
                            "",
                            dev.snapshots.key.ObjectKeys.KEY_SCHEME,
                            VersionIdentity.FINGERPRINT_SCHEME_UNRECORDED)
                    .require(s);
        }
        jobManager.jobs.put(V2, "RUNNING");

        String upgrade = run("upgrade", "--roll", "true", "--buckets", "8");

        assertThat(upgrade)
                .contains("upgrade refused: telemetry v=2 was first written with other settings")
                .contains("buckets (B) 4 (recorded), 8 (this run)");
        assertThat(jobManager.stopped).isEmpty();
    }

    private Optional<VersionIdentity> identity() throws IOException {
        try (ObjectStore s = store.open()) {
            return VersionIdentity.read(s, PartKind.SNAPSHOT, "telemetry", 2);
        }
    }

    private String run(String command, String... flags) throws Exception {
        List<String> args =
                new ArrayList<>(
                        List.of(
                                "--rest",
                                jobManager.address(),
                                "--jar",
                                jar.toString(),
                                "--store",
                                store.uri().toString(),
                                "--job-version",
                                "2"));
        args.addAll(List.of(flags));
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (PrintStream out = new PrintStream(bytes, true, StandardCharsets.UTF_8)) {
            JobLifecycle.run(command, args.toArray(String[]::new), out, Map.of());
        } finally {
            System.out.print(bytes.toString(StandardCharsets.UTF_8));
        }
        return bytes.toString(StandardCharsets.UTF_8);
    }

    /**
     * What an upgrade (stop with a savepoint) and a replay (upload and run) ask of Flink 1.20's
     * REST API: an unknown job answers 404, a run from a savepoint that is not there 400.
     */
    private static final class StandInJobManager {
        static final String SAVEPOINT = "file:///savepoints/savepoint-1";

        final HttpServer server;
        final Map<String, String> jobs = new HashMap<>();
        final List<String> stopped = new ArrayList<>();
        final List<String> runs = new ArrayList<>();
        private final String checkpoints;

        StandInJobManager(String checkpoints) throws IOException {
            this.checkpoints = checkpoints;
            server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 8);
            server.createContext("/", this::handle);
            server.start();
        }

        String address() {
            return "http://127.0.0.1:" + server.getAddress().getPort();
        }

        private synchronized void handle(HttpExchange exchange) throws IOException {
            String body =
                    new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
            String path = exchange.getRequestURI().getPath();
            String method = exchange.getRequestMethod();
            String[] parts = path.split("/");
            if (path.equals("/jobmanager/config")) {
                answer(
                        exchange,
                        200,
                        "[{\"key\":\"state.checkpoints.dir\",\"value\":\"" + checkpoints + "\"}]");
            } else if (path.equals("/jobs/overview")) {
                StringBuilder list = new StringBuilder();
                jobs.forEach(
                        (id, state) ->
                                list.append(list.length() == 0 ? "" : ",")
                                        .append(
                                                "{\"jid\":\""
                                                        + id
                                                        + "\",\"state\":\""
                                                        + state
                                                        + "\"}"));
                answer(exchange, 200, "{\"jobs\":[" + list + "]}");
            } else if (path.startsWith("/jobs/") && !jobs.containsKey(parts[2])) {
                answer(
                        exchange,
                        404,
                        "{\"errors\":[\"org.apache.flink.runtime.rest.NotFoundException: Job "
                                + parts[2]
                                + " not found\"]}");
            } else if (path.endsWith("/stop") && method.equals("POST")) {
                stopped.add(parts[2]);
                jobs.put(parts[2], "FINISHED");
                answer(exchange, 202, "{\"request-id\":\"trigger-1\"}");
            } else if (path.contains("/savepoints/")) {
                answer(
                        exchange,
                        200,
                        "{\"status\":{\"id\":\"COMPLETED\"},\"operation\":{\"location\":\""
                                + SAVEPOINT
                                + "\"}}");
            } else if (path.startsWith("/jobs/")) {
                answer(exchange, 200, "{\"state\":\"" + jobs.get(parts[2]) + "\"}");
            } else if (path.equals("/jars/upload")) {
                answer(
                        exchange,
                        200,
                        "{\"filename\":\"/tmp/flink-web-upload/1_job.jar\",\"status\":\"success\"}");
            } else if (method.equals("DELETE")) {
                answer(exchange, 200, "{}");
            } else if (path.endsWith("/run")
                    && !body.contains("\"savepointPath\":\"" + SAVEPOINT + "\"")) {
                answer(
                        exchange,
                        400,
                        "{\"errors\":[\"org.apache.flink.runtime.rest.handler.RestHandlerException:"
                                + " Could not execute application.\\n\\tat ...\"]}");
            } else if (path.endsWith("/run")) {
                String id = body.replaceAll(".*\"jobId\":\"(\\w+)\".*", "$1");
                runs.add(id);
                jobs.put(id, "RUNNING");
                answer(exchange, 200, "{\"jobid\":\"" + id + "\"}");
            } else {
                answer(exchange, 404, "{\"errors\":[\"Not found: " + path + "\"]}");
            }
        }

        private static void answer(HttpExchange exchange, int status, String body)
                throws IOException {
            byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
            exchange.getResponseHeaders().add("Content-Type", "application/json");
            exchange.sendResponseHeaders(status, bytes.length);
            try (OutputStream out = exchange.getResponseBody()) {
                out.write(bytes);
            }
        }
    }
}
