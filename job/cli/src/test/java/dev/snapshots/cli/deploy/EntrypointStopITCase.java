package dev.snapshots.cli.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import dev.snapshots.cli.testutils.StandInJobManager;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The JobManager container's entrypoint stopped by ECS while {@code submit}'s run is in flight: the
 * real {@code submit} and {@code release} against a stand-in JobManager on which a SQL script takes
 * seconds to compile, as on a real one; the JobManager process itself is a stand-in that runs until
 * SIGTERM and exits 143 as Flink's JVM does. (DeployFilesITCase runs the entrypoint in each state
 * of a stand-in {@code submit}.)
 */
class EntrypointStopITCase {
    private static final Path ROOT = Path.of(System.getProperty("snapshots.root", "../.."));
    private static final Duration COMPILING = Duration.ofSeconds(6);

    @TempDir Path dir;

    @Test
    void aJobWhoseRunWasInFlightAtTheSigtermIsCancelledBeforeTheJobManagerStops() throws Exception {
        Path script = ROOT.resolve("examples/orders/orders.sql");
        Program program = Program.sql(script);
        String id = JobLifecycle.jobId(program.pipeline(), program.jobVersion());
        Path log = dir.resolve("log");
        Path pids = dir.resolve("pids");
        standIn(
                "docker-entrypoint.sh",
                "echo $$ >> \"$PIDS\"",
                "trap 'echo \"jobmanager TERM\" >> \"$LOG\"; exit 143' TERM",
                "while :; do sleep 0.1; done");
        standIn(
                "java", // the real command line, from this test's classpath
                "echo $$ >> \"$PIDS\"",
                "exec \"$JAVA\" -Xmx256m -cp \"$TEST_CLASSPATH\" \"${@:3}\"");
        try (StandInJobManager jobManager = new StandInJobManager()) {
            jobManager.logJobsTo(log);
            jobManager.runTakes(COMPILING);
            jobManager.config(
                    "state.checkpoints.dir", dir.resolve("checkpoints").toUri().toString());
            Files.writeString(
                    dir.resolve("entrypoint.sh"),
                    Files.readString(ROOT.resolve("deploy/docker/snapshots-entrypoint.sh"))
                            .replace(
                                    "/docker-entrypoint.sh",
                                    dir.resolve("docker-entrypoint.sh").toString())
                            .replace("http://localhost:8081", jobManager.address()));
            ProcessBuilder pb =
                    new ProcessBuilder(
                                    "bash", dir.resolve("entrypoint.sh").toString(), "jobmanager")
                            .redirectErrorStream(true)
                            .redirectOutput(dir.resolve("out").toFile());
            pb.environment().put("PATH", dir + ":" + System.getenv("PATH"));
            pb.environment()
                    .put(
                            "JAVA",
                            Path.of(System.getProperty("java.home"), "bin", "java").toString());
            pb.environment().put("TEST_CLASSPATH", System.getProperty("java.class.path"));
            pb.environment().put("LOG", log.toString());
            pb.environment().put("PIDS", pids.toString());
            pb.environment()
                    .put(
                            "SNAPSHOTS_JAR",
                            Files.write(dir.resolve("job.jar"), new byte[] {'P', 'K', 3, 4})
                                    .toString());
            pb.environment().put("SNAPSHOTS_SQL", Files.readString(script));
            Process container = pb.start();
            List<Long> leftBehind;
            try {
                assertThat(jobManager.awaitRunRequested(Duration.ofSeconds(60)))
                        .as(
                                "submit's run request arrived; %s",
                                Files.readString(dir.resolve("out")))
                        .isTrue();
                container.destroy(); // SIGTERM, while the JobManager compiles the script
                assertThat(container.waitFor(90, TimeUnit.SECONDS))
                        .as("the container stopped")
                        .isTrue();
                assertThat(jobManager.awaitRunAnswered(COMPILING.multipliedBy(2))).isTrue();
                leftBehind =
                        Files.readAllLines(pids).stream()
                                .map(Long::parseLong)
                                .filter(
                                        pid ->
                                                ProcessHandle.of(pid)
                                                        .map(ProcessHandle::isAlive)
                                                        .orElse(false))
                                .toList();
            } finally {
                container.destroyForcibly();
                for (String pid :
                        Files.exists(pids) ? Files.readAllLines(pids) : List.<String>of()) {
                    ProcessHandle.of(Long.parseLong(pid)).ifPresent(ProcessHandle::destroyForcibly);
                }
            }
            String described =
                    Files.readAllLines(log) + "\n" + Files.readString(dir.resolve("out"));
            assertThat(Files.readAllLines(log))
                    .as("the job ran, ended cancelled, then the JobManager stopped: %s", described)
                    .containsSubsequence(
                            "job " + id + " RUNNING", "job " + id + " CANCELED", "jobmanager TERM");
            assertThat(container.exitValue()).as("a stop as designed: %s", described).isZero();
            assertThat(leftBehind)
                    .as("processes still running after the container stopped")
                    .isEmpty();
        }
    }

    private void standIn(String name, String... lines) throws Exception {
        Path file = dir.resolve(name);
        Files.writeString(file, "#!/usr/bin/env bash\n" + String.join("\n", lines) + "\n");
        assertThat(file.toFile().setExecutable(true)).isTrue();
    }
}
