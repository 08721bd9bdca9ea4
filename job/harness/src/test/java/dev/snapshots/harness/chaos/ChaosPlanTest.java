package dev.snapshots.harness.chaos;

import static org.assertj.core.api.Assertions.assertThat;

import dev.snapshots.harness.chaos.ChaosPlan.Action;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The seed decides the kill moments; the deployments fall where the flags put them, the JobManager
 * steps outside the instances' overlap.
 */
class ChaosPlanTest {

    @Test
    void theSameSeedPlansTheSameRunAndEveryActionFallsInsideIt() {
        ChaosPlan plan =
                ChaosPlan.parse(
                        new String[] {
                            "--windows", "12", "--kills", "2", "--overlap", "3", "--s3-outage", "20"
                        });
        List<String> labels = plan.actions(new Random(1)).stream().map(Action::label).toList();

        assertThat(labels)
                .isEqualTo(plan.actions(new Random(1)).stream().map(Action::label).toList());
        assertThat(labels)
                .containsSubsequence(
                        "older-savepoint@1+0.50",
                        "overlap-start@3+0.50",
                        "overlap-end@6+0.50",
                        "s3-outage@7+0.20",
                        "rolling-update@9+0.50",
                        "jobmanager-overlap-start@10+0.70",
                        "jobmanager-overlap-end@11+0.70");
        assertThat(labels).filteredOn(l -> l.startsWith("kill@")).hasSize(2);
        assertThat(plan.actions(new Random(1)))
                .filteredOn(a -> a.what().equals("jobmanager-kill"))
                .singleElement()
                .as("the JobManager is killed outside the instances' overlap")
                .satisfies(a -> assertThat(a.window() < 3 || a.window() > 6).isTrue());
        assertThat(plan.actions(new Random(1)))
                .allSatisfy(a -> assertThat(a.window()).isBetween(1, 11))
                .isSortedAccordingTo(
                        (a, b) -> Double.compare(a.window() + a.at(), b.window() + b.at()));
    }

    @Test
    void theCommandSpellsOutEveryFlagAndItsDefault() {
        assertThat(ChaosPlan.parse(new String[] {"--seed", "7", "--keep-cluster"}).command())
                .startsWith("./snapshots chaos --windows 12")
                .contains(" --seed 7", " --inline-threshold 5200", " --keep-cluster")
                .doesNotContain("true");
    }
}
