package dev.snapshots.cli.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import dev.snapshots.cli.Cli;
import dev.snapshots.cli.testutils.StandInJobManager;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code snapshots release}: before it returns, every job on the JobManager has ended cancelled,
 * those that appear while it works too.
 */
class ReleaseCommandTest {
    @TempDir Path dir;

    /**
     * A job still initializing refuses a cancel (Flink answers 500): the JobManager a chaos plan
     * started in a dead one's role had just resumed the job when the deployment's end released it,
     * and release failed (seed 13). It asks again at its next read.
     */
    @Test
    void aJobThatRefusesItsFirstCancelIsCancelledAtTheNextRead() throws Exception {
        String v1 = JobLifecycle.jobId("telemetry", 1);
        try (StandInJobManager jobManager = new StandInJobManager()) {
            Path jar = Files.write(dir.resolve("job.jar"), new byte[] {'P', 'K', 3, 4});
            new FlinkRest(jobManager.address()).uploadAndRun(jar, null, List.of(), null, v1);
            jobManager.refuseCancels(2);

            String printed = release(jobManager);
            assertThat(jobManager.jobs()).isEqualTo(Map.of(v1, "CANCELED"));
            assertThat(printed).contains("not cancelled yet", "(RUNNING): cancelling");
        }
    }

    @Test
    void aJobWhoseRunAnswersWhileReleaseWaitsForAnotherIsCancelledToo() throws Exception {
        String v1 = JobLifecycle.jobId("telemetry", 1);
        String v2 = JobLifecycle.jobId("telemetry", 2);
        try (StandInJobManager jobManager = new StandInJobManager()) {
            FlinkRest rest = new FlinkRest(jobManager.address());
            Path jar = Files.write(dir.resolve("job.jar"), new byte[] {'P', 'K', 3, 4});
            rest.uploadAndRun(jar, null, List.of(), null, v1);
            // A replay's run, still compiling as release reads the jobs; v1's tasks take longer
            // to end than that.
            jobManager.runTakes(Duration.ofMillis(500));
            jobManager.cancelTakes(Duration.ofSeconds(2));
            CompletableFuture<String> replay =
                    CompletableFuture.supplyAsync(
                            () -> {
                                try {
                                    return rest.uploadAndRun(jar, null, List.of(), null, v2);
                                } catch (Exception e) {
                                    throw new IllegalStateException(e);
                                }
                            });

            String printed = release(jobManager);
            assertThat(replay.get()).isEqualTo(v2);
            assertThat(jobManager.jobs())
                    .as("the jobs once release returned; it printed:%n%s", printed)
                    .isEqualTo(Map.of(v1, "CANCELED", v2, "CANCELED"));
            assertThat(printed.lines())
                    .containsSubsequence(
                            "job " + v1 + " (RUNNING): cancelling",
                            "job " + v2 + " (RUNNING): cancelling",
                            "job "
                                    + v1
                                    + " cancelled before this JobManager stops: CANCELED;"
                                    + " its checkpoints stay",
                            "job "
                                    + v2
                                    + " cancelled before this JobManager stops: CANCELED;"
                                    + " its checkpoints stay");
        }
    }

    /** {@code snapshots release} against the stand-in: it must exit 0; what it printed. */
    private static String release(StandInJobManager jobManager) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        int code =
                Cli.run(
                        new String[] {"release", "--rest", jobManager.address()},
                        new PrintStream(out, true, StandardCharsets.UTF_8),
                        System.err,
                        Cli.commands(Map.of()),
                        "snapshots");
        String printed = out.toString(StandardCharsets.UTF_8);
        assertThat(code).as(printed).isZero();
        return printed;
    }
}
