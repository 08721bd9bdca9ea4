package dev.snapshots.cli.deploy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.snapshots.cli.testutils.StandInJobManager;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
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
        jobManager.close();
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
        assertThat(jobManager.runs()).containsExactly("jobmanager-1", "jobmanager-2");
        assertThat(jobManager.jars()).as("uploads left on the JobManager").isEmpty();
    }

    @Test
    void aJobManagerReplacedBetweenTheUploadAndTheRunGetsTheJarAgain() throws IOException {
        FlinkRest rest = new FlinkRest(jobManager.address());
        jobManager.replaceAfterNextUpload();

        rest.uploadAndRun(jar, null, List.of(), null, null);

        assertThat(jobManager.uploads()).containsExactly("jobmanager-1", "jobmanager-2");
        assertThat(jobManager.runs()).containsExactly("jobmanager-2");
    }

    @Test
    void aRunRefusedForAnyOtherReasonIsNotTriedAgain() throws IOException {
        FlinkRest rest = new FlinkRest(jobManager.address());
        jobManager.refuseRuns();

        assertThatThrownBy(() -> rest.uploadAndRun(jar, null, List.of(), null, null))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("Could not execute application");
        assertThat(jobManager.uploads()).containsExactly("jobmanager-1");
        assertThat(jobManager.jars()).as("uploads left on the JobManager").isEmpty();
    }

    /**
     * A cluster whose configuration says CLAIM (or LEGACY): a run that names no restore mode gets
     * it, and a resumed incremental RocksDB job then keeps referencing an older JobManager's shared
     * files, which 'submit' prunes. A run from a checkpoint says NO_CLAIM itself.
     */
    @Test
    void aRunFromACheckpointRestoresWithNoClaimWhateverTheClusterSays() throws IOException {
        FlinkRest rest = new FlinkRest(jobManager.address());
        jobManager.clusterRestoreMode("CLAIM");

        rest.uploadAndRun(jar, null, List.of(), "s3://b/jm-1/f5905c/chk-7", "f5905c");
        rest.uploadAndRun(jar, null, List.of(), null, null);

        assertThat(jobManager.restoreModes()).containsExactly("NO_CLAIM", "none: no savepointPath");
        assertThat(jobManager.runBodies().get(0).path("restoreMode").asText())
                .isEqualTo("NO_CLAIM");
        assertThat(jobManager.runBodies().get(1).has("restoreMode")).isFalse();
    }
}
