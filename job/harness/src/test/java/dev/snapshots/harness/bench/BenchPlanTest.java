package dev.snapshots.harness.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.snapshots.harness.bench.BenchPlan.Run;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The runs go in the order that spreads machine drift over all sinks, and that names their files.
 */
class BenchPlanTest {

    @Test
    void roundsOfAllThreeSinksComeFirstThenTheScalingTableThenTheCatchUps() {
        List<Run> runs =
                BenchPlan.parse(
                                new String[] {
                                    "--events",
                                    "1000",
                                    "--keys",
                                    "10",
                                    "--buckets",
                                    "2",
                                    "--runs",
                                    "2",
                                    "--scale-keys",
                                    "10,200",
                                    "--scale-buckets",
                                    "2,4",
                                    "--scale-events",
                                    "1000",
                                    "--catch-up",
                                    "yes"
                                })
                        .runs();

        assertThat(runs)
                .extracting(
                        r ->
                                r.section()
                                        + " "
                                        + r.sink()
                                        + " "
                                        + r.events()
                                        + " "
                                        + r.keys()
                                        + " "
                                        + r.buckets()
                                        + " "
                                        + r.maxDrift())
                .containsExactly(
                        "COMPARISON DISCARDING 1000 10 2 null",
                        "COMPARISON FILESINK 1000 10 2 null",
                        "COMPARISON OURS 1000 10 2 null",
                        "COMPARISON DISCARDING 1000 10 2 null",
                        "COMPARISON FILESINK 1000 10 2 null",
                        "COMPARISON OURS 1000 10 2 null",
                        // rounds per key count: the discarding sink and FileSink have no buckets
                        "SCALING DISCARDING 1000 10 2 null",
                        "SCALING FILESINK 1000 10 2 null",
                        "SCALING OURS 1000 10 2 null",
                        "SCALING OURS 1000 10 4 null",
                        "SCALING DISCARDING 1000 10 2 null",
                        "SCALING FILESINK 1000 10 2 null",
                        "SCALING OURS 1000 10 2 null",
                        "SCALING OURS 1000 10 4 null",
                        // at least 8 events per key
                        "SCALING DISCARDING 1600 200 2 null",
                        "SCALING FILESINK 1600 200 2 null",
                        "SCALING OURS 1600 200 2 null",
                        "SCALING OURS 1600 200 4 null",
                        "SCALING DISCARDING 1600 200 2 null",
                        "SCALING FILESINK 1600 200 2 null",
                        "SCALING OURS 1600 200 2 null",
                        "SCALING OURS 1600 200 4 null",
                        "CATCH_UP OURS 1000 10 2 0s",
                        "CATCH_UP OURS 1000 10 2 5m");
        assertThat(runs.get(3).label()).isEqualTo("round 2/2");
        assertThat(runs.get(10).label()).isEqualTo("scaling 10 keys, round 2/2");
    }

    @Test
    void redistributedRunsRightAfterOursInEachRound() {
        assertThat(
                        BenchPlan.parse(
                                        new String[] {
                                            "--runs",
                                            "2",
                                            "--scale-keys",
                                            "none",
                                            "--redistributed",
                                            "yes"
                                        })
                                .runs())
                .extracting(r -> r.sink() + " " + r.label())
                .containsExactly(
                        "DISCARDING round 1/2",
                        "FILESINK round 1/2",
                        "OURS round 1/2",
                        "REDISTRIBUTED round 1/2",
                        "DISCARDING round 2/2",
                        "FILESINK round 2/2",
                        "OURS round 2/2",
                        "REDISTRIBUTED round 2/2");
    }

    @Test
    void redistributedIsRefusedForABucketCountItsWindowKeepsWhole() {
        assertThatThrownBy(
                        () ->
                                BenchPlan.parse(
                                        new String[] {
                                            "--buckets", "128", "--redistributed", "yes"
                                        }))
                .hasMessageContaining("--redistributed runs the window at 3, which keeps 128");
    }

    @Test
    void noneSkipsTheScalingTable() {
        assertThat(BenchPlan.parse(new String[] {"--runs", "1", "--scale-keys", "none"}).runs())
                .extracting(Run::section)
                .containsOnly(BenchPlan.Section.COMPARISON);
    }
}
