package dev.snapshots.harness.chaos;

import static org.assertj.core.api.Assertions.assertThat;

import dev.snapshots.harness.chaos.ChaosPlan.Action;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

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
    void aJobManagerKillCanFallInsideTheJobManagerOverlap() {
        // Seed 13 of the long plan: jobmanager-3 killed while jobmanager-4 waited beside it.
        ChaosPlan plan =
                ChaosPlan.parse(
                        new String[] {
                            "--windows", "30", "--kills", "5", "--jobmanager-kills", "2",
                            "--overlap", "6", "--jobmanager-overlap", "2", "--catch-up", "4",
                            "--s3-outage", "40", "--seed", "13"
                        });
        List<String> labels =
                plan.actions(new Random(plan.seed)).stream().map(Action::label).toList();

        assertThat(labels)
                .containsSubsequence(
                        "jobmanager-overlap-start@22+0.70",
                        "jobmanager-kill@24+0.28",
                        "jobmanager-overlap-end@24+0.70");
    }

    /**
     * What the deployer relies on, under every seed and flags from the least to a long run: the
     * actions of its thread never interleave an instance overlap with a JobManager step, nor the
     * rolling update or the outage with the JobManager overlap; a JobManager kill inside the
     * JobManager overlap is the deployer's to handle.
     */
    @ParameterizedTest(name = "--overlap {0} --catch-up {1} --jobmanager-overlap {2}")
    @CsvSource({"0,0,0", "0,0,1", "1,0,1", "3,2,1", "6,4,2", "10,3,2", "2,1,6", "1,1,12"})
    void everyPlanKeepsItsDeploymentStepsApart(int overlap, int catchUp, int jobManagerOverlap) {
        int least = overlap + catchUp + jobManagerOverlap + 6;
        int planned = 0;
        for (int windows = least; windows <= least + 40; windows++) {
            String[] flags = {
                "--windows", Integer.toString(windows),
                "--overlap", Integer.toString(overlap),
                "--catch-up", Integer.toString(catchUp),
                "--jobmanager-overlap", Integer.toString(jobManagerOverlap),
                "--kills", "5",
                "--jobmanager-kills", "3",
                "--s3-outage", "40"
            };
            ChaosPlan plan;
            try {
                plan = ChaosPlan.parse(flags);
            } catch (IllegalArgumentException tooFew) {
                assertThat(planned)
                        .as("every number of windows above the least is accepted")
                        .isZero();
                continue;
            }
            planned++;
            for (long seed = 1; seed <= 20; seed++) {
                List<String> steps =
                        plan.actions(new Random(seed)).stream()
                                .filter(a -> !a.what().equals("kill"))
                                .map(Action::what)
                                .toList();
                String seen = "windows " + windows + ", seed " + seed + ": " + steps;
                int last = windows - 1;
                assertThat(plan.actions(new Random(seed)))
                        .as(seen)
                        .allSatisfy(a -> assertThat(a.window()).isBetween(1, last));
                assertThat(steps.indexOf("rolling-update"))
                        .as(seen)
                        .isGreaterThan(steps.indexOf("overlap-end"))
                        .isGreaterThan(steps.indexOf("s3-outage"))
                        .isLessThan(
                                jobManagerOverlap == 0
                                        ? steps.size()
                                        : steps.indexOf("jobmanager-overlap-start"));
                if (overlap > 0) {
                    assertThat(
                                    steps.subList(
                                            steps.indexOf("overlap-start"),
                                            steps.indexOf("overlap-end")))
                            .as(seen)
                            .containsOnly("overlap-start");
                    assertThat(steps.indexOf("s3-outage"))
                            .as(seen)
                            .isGreaterThan(steps.indexOf("overlap-end"));
                }
            }
        }
        assertThat(planned).isGreaterThan(20);
    }

    @Test
    void theCommandSpellsOutEveryFlagAndItsDefault() {
        assertThat(ChaosPlan.parse(new String[] {"--seed", "7", "--keep-cluster"}).command())
                .startsWith("./snapshots chaos --windows 12")
                .contains(" --seed 7", " --inline-threshold 5200", " --keep-cluster")
                .doesNotContain("true");
    }
}
