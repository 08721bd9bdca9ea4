package dev.snapshots.harness.chaos;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.snapshots.harness.chaos.Deployer.JobManagerOverlap;
import org.junit.jupiter.api.Test;

/**
 * Who takes the job over when a JobManager dies during a deployment at 200 %, and whom the
 * deployment's end stops.
 */
class JobManagerOverlapTest {
    private final JobManagerOverlap overlap =
            new JobManagerOverlap("jobmanager-3", "jobmanager-4", 22.7, 0);

    @Test
    void theSuccessorWaitingBesideTheOldOneTakesOverWhenTheOldOneDies() {
        assertThat(overlap.beside("jobmanager-3")).isEqualTo("jobmanager-4");

        JobManagerOverlap after = overlap.replace("jobmanager-3", "jobmanager-5");

        assertThat(after.old())
                .as("the deployment's end stops the replacement")
                .isEqualTo("jobmanager-5");
        assertThat(after.successor()).isEqualTo("jobmanager-4");
        assertThat(after.beside("jobmanager-4")).isEqualTo("jobmanager-5");
    }

    @Test
    void
            aSuccessorKilledAfterTakingOverLeavesTheJobToTheOldRolesReplacementAndIsReplacedInItsRole() {
        JobManagerOverlap after =
                overlap.replace("jobmanager-3", "jobmanager-5")
                        .replace("jobmanager-4", "jobmanager-6");

        assertThat(after.beside("jobmanager-5")).isEqualTo("jobmanager-6");
        assertThat(after.old()).isEqualTo("jobmanager-5");
        assertThat(after.successor())
                .as("resumes the job once jobmanager-5 stops, as a successor does")
                .isEqualTo("jobmanager-6");
        assertThat(after.from()).isEqualTo(22.7);
    }

    @Test
    void aJobManagerOutsideTheOverlapIsNeitherRole() {
        assertThatThrownBy(() -> overlap.replace("jobmanager-2", "jobmanager-5"))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("jobmanager-2 is neither");
    }
}
