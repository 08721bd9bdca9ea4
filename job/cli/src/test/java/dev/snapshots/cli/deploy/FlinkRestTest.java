package dev.snapshots.cli.deploy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Running a jar on "the JobManager", an address whose process ECS replaces: each JobManager has
 * only its own uploads. A chaos run stopped at window 7.5 with "Jar file ... does not exist" when
 * its deployer ran a jar id uploaded to a JobManager that had since been SIGKILLed.
 */
class FlinkRestTest {
    @TempDir Path dir;

    private StandInJobManager jobManager;
    private Path jar;

    @BeforeEach
    void start() throws IOException {
        jobManager = new StandInJobManager();
        jar = Files.write(dir.resolve("job.jar"), new byte[] {'P', 'K', 3, 4});
    }

    @AfterEach
    void stop() {
        jobManager.server.stop(0);
    }

    @Test
    void aJarRunsOnTheJobManagerThatIsThereNowAfterTheFirstOneWasReplaced() throws IOException {
        FlinkRest rest = new FlinkRest(jobManager.address());
        rest.uploadAndRun(
                jar, null, List.of("--windows", "3"), null, "f5905c4dee5e263030e8896b815b7f35");

        jobManager.replace();
        String second =
                rest.uploadAndRun(jar, null, List.of("--windows", "3"), "s3://b/sp-1", null);

        assertThat(second).isNotEmpty();
        assertThat(jobManager.runs).containsExactly("jobmanager-1", "jobmanager-2");
        assertThat(jobManager.jars).as("uploads left on the JobManager").isEmpty();
    }

    @Test
    void aJobManagerReplacedBetweenTheUploadAndTheRunGetsTheJarAgain() throws IOException {
        FlinkRest rest = new FlinkRest(jobManager.address());
        jobManager.replaceAfterNextUpload = true;

        rest.uploadAndRun(jar, null, List.of(), null, null);

        assertThat(jobManager.uploads).containsExactly("jobmanager-1", "jobmanager-2");
        assertThat(jobManager.runs).containsExactly("jobmanager-2");
    }

    @Test
    void aRunRefusedForAnyOtherReasonIsNotTriedAgain() throws IOException {
        FlinkRest rest = new FlinkRest(jobManager.address());
        jobManager.refuseRuns = true;

        assertThatThrownBy(() -> rest.uploadAndRun(jar, null, List.of(), null, null))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("Could not execute application");
        assertThat(jobManager.uploads).containsExactly("jobmanager-1");
        assertThat(jobManager.jars).as("uploads left on the JobManager").isEmpty();
    }

    /**
     * A cluster whose configuration says CLAIM (or LEGACY): a run that names no restore mode gets
     * it, and a resumed incremental RocksDB job then keeps referencing an older JobManager's shared
     * files, which 'submit' prunes. A run from a checkpoint says NO_CLAIM itself.
     */
    @Test
    void aRunFromACheckpointRestoresWithNoClaimWhateverTheClusterSays() throws IOException {
        FlinkRest rest = new FlinkRest(jobManager.address());
        jobManager.clusterRestoreMode = "CLAIM";

        rest.uploadAndRun(jar, null, List.of(), "s3://b/jm-1/f5905c/chk-7", "f5905c");
        rest.uploadAndRun(jar, null, List.of(), null, null);

        assertThat(jobManager.restoreModes).containsExactly("NO_CLAIM", "none: no savepointPath");
        assertThat(jobManager.runBodies.get(0).path("restoreMode").asText()).isEqualTo("NO_CLAIM");
        assertThat(jobManager.runBodies.get(1).has("restoreMode")).isFalse();
    }

    /**
     * Flink 1.20's jar endpoints behind one address, as its web submission answers them: an upload
     * gets an id naming a file in this JobManager's own upload directory; a run of an id it has no
     * file for answers 500 with the text a real JobManager gave (recorded from the local cluster);
     * a delete removes the upload, or answers 400 if there is none.
     */
    private static final class StandInJobManager {
        final HttpServer server;
        final List<String> uploads = new ArrayList<>();
        final List<String> runs = new ArrayList<>();
        boolean replaceAfterNextUpload;
        boolean refuseRuns;

        /** The cluster's execution.state-recovery.claim-mode: Flink's default is NO_CLAIM. */
        String clusterRestoreMode = "NO_CLAIM";

        /** Each run's request body, and the restore mode Flink would apply to it. */
        final List<JsonNode> runBodies = new ArrayList<>();

        final List<String> restoreModes = new ArrayList<>();
        private int incarnation = 1;
        private Set<String> jars = new HashSet<>();

        StandInJobManager() throws IOException {
            server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 8);
            server.createContext("/jars/", this::handle);
            server.start();
        }

        String address() {
            return "http://127.0.0.1:" + server.getAddress().getPort();
        }

        /** A new JobManager process behind the address: none of the old one's uploads. */
        synchronized void replace() {
            incarnation++;
            jars = new HashSet<>();
        }

        private String uploadDirectory() {
            return "/tmp/jobmanager-"
                    + incarnation
                    + "/flink-web-"
                    + incarnation
                    + "/flink-web-upload/";
        }

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

        private synchronized void handle(HttpExchange exchange) throws IOException {
            byte[] body = exchange.getRequestBody().readAllBytes();
            String path = exchange.getRequestURI().getPath();
            if (path.equals("/jars/upload")) {
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
                return;
            }
            if (exchange.getRequestMethod().equals("DELETE")) {
                String id = path.substring("/jars/".length());
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
                return;
            }
            String id = path.substring("/jars/".length(), path.length() - "/run".length());
            if (!jars.contains(id)) {
                answer(
                        exchange,
                        500,
                        "{\"errors\":[\"Internal server error.\",\"<Exception on server side:\\n"
                                + "java.util.concurrent.CompletionException: org.apache.flink.runtime"
                                + ".rest.handler.RestHandlerException: Jar file "
                                + uploadDirectory()
                                + id
                                + " does not exist\\n\\tat org.apache.flink.runtime.webmonitor"
                                + ".handlers.utils.JarHandlerUtils$JarHandlerContext"
                                + ".toPackagedProgram(JarHandlerUtils.java:181)\\n\\t...\\n"
                                + "End of exception on server side>\"]}");
            } else if (refuseRuns) {
                answer(
                        exchange,
                        400,
                        "{\"errors\":[\"org.apache.flink.runtime.rest.handler.RestHandlerException:"
                                + " Could not execute application.\\n\\tat ...\"]}");
            } else {
                JsonNode run = new ObjectMapper().readTree(body);
                List<String> fields = new ArrayList<>();
                run.fieldNames().forEachRemaining(fields::add);
                String mode = run.path("restoreMode").asText(run.path("claimMode").asText(""));
                if (!RUN_FIELDS.containsAll(fields)
                        || !(mode.isEmpty() || RESTORE_MODES.contains(mode))) {
                    answer(
                            exchange,
                            400,
                            "{\"errors\":[\"Bad request received. Request did not match"
                                    + " expected format JarRunRequestBody.\"]}");
                    return;
                }
                runBodies.add(run);
                restoreModes.add(
                        !run.hasNonNull("savepointPath")
                                ? "none: no savepointPath"
                                : mode.isEmpty() ? clusterRestoreMode : mode);
                runs.add("jobmanager-" + incarnation);
                answer(
                        exchange,
                        200,
                        "{\"jobid\":\"" + UUID.randomUUID().toString().replace("-", "") + "\"}");
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
