package dev.snapshots.harness.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import dev.snapshots.harness.bench.BenchPlan.Run;
import dev.snapshots.harness.bench.BenchSummary.Measured;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;

/** The statistics of interleaved rounds, and the cost rows that pair a round's three sinks. */
class RoundsTest {

    @Test
    void theMedianOfAnOddCountIsTheMiddleAndOfAnEvenOneTheMeanOfTheMiddleTwo() {
        assertThat(Rounds.of(5, 1, 3).median()).isEqualTo(3);
        assertThat(Rounds.of(4, 1, 3, 2).median()).isEqualTo(2.5);
    }

    @Test
    void theSpreadIsTheRangeOverTheMedianWhateverTheOrderOfTheRounds() {
        Rounds.Stats s = Rounds.of(1.10, 0.90, 1.00, 1.05, 0.95);

        assertThat(s.min()).isEqualTo(0.90);
        assertThat(s.max()).isEqualTo(1.10);
        assertThat(s.spreadPercent()).isCloseTo(20, within(1e-9));
    }

    @Test
    void aRatioIsMetOrMissedByItsMedianAndInconclusiveWhenItsRoundsSpreadMoreThanFivePercent() {
        assertThat(Rounds.verdict(Rounds.of(0.97, 0.99, 1.00), 1)).isEqualTo("met");
        assertThat(Rounds.verdict(Rounds.of(1.01, 1.02, 1.03), 1)).isEqualTo("missed");
        assertThat(Rounds.verdict(Rounds.of(0.775, 1.0, 1.371), 1)).isEqualTo("inconclusive");
        // 5 % exactly still decides (numbers exact in binary, so the spread is 5.0).
        assertThat(Rounds.verdict(Rounds.of(100, 100, 105), 200)).isEqualTo("met");
    }

    @Test
    void ratiosAndDifferencesAreTakenRoundByRound() {
        assertThat(Rounds.ratios(new double[] {2, 9}, new double[] {1, 3})).containsExactly(2, 3);
        assertThat(Rounds.differences(new double[] {2, 9}, new double[] {1, 3}))
                .containsExactly(1, 6);
        assertThatThrownBy(() -> Rounds.ratios(new double[] {1}, new double[] {1, 2}))
                .hasMessageContaining("rounds differ");
    }

    @Test
    void aCostRowPairsEachRoundsSinksAndJudgesOurCpuAgainstFileSinksOfTheSameRound() {
        List<Measured> runs = threeRounds();

        List<Map<String, Object>> rows = BenchSummary.cost(runs);

        assertThat(rows).hasSize(1);
        Map<String, Object> row = rows.get(0);
        assertThat(row).containsEntry("keys", 10).containsEntry("rounds", 3);
        assertThat(json(row).path("cpuNanosPerEvent").path("ours").path("median").asDouble())
                .isEqualTo(1620);
        assertThat(json(row).path("ownCpuNanosPerEvent").path("ours").path("min").asDouble())
                .isEqualTo(80);
        assertThat(json(row).path("ownCpuNanosPerEvent").path("filesink").path("max").asDouble())
                .isEqualTo(200);
        assertThat(json(row).path("oursOverFileSinkCpu").path("median").asDouble())
                .isEqualTo(0.982);
        assertThat(json(row).path("oursOverFileSinkCpu").path("spreadPercent").asDouble()).isZero();
        assertThat(
                        json(row)
                                .path("sinkCpuNanosPerEvent")
                                .path("filesink")
                                .path("median")
                                .asDouble())
                .isEqualTo(400);
        assertThat(json(row).path("oursOverFileSinkSinkCpu").path("median").asDouble())
                .isEqualTo(0.75);
        assertThat(json(row).path("oursOverFileSinkSinkCpuOverall").path("median").asDouble())
                .isEqualTo(0.75);
        assertThat(row)
                .containsEntry("roundsOursAtMostFileSink", "3 of 3")
                .containsEntry("verdict", "met")
                .containsEntry("wholeProcessVerdict", "met");
    }

    /**
     * Neither the whole process's nor the steady state's: ours is below FileSink on both, and above
     * it over the whole run, which decides.
     */
    @Test
    void theVerdictIsTheSinkThreadsCpuOverTheWholeRun() {
        Map<String, Object> row = BenchSummary.cost(threeRounds(300, 625)).get(0);

        assertThat(json(row).path("oursOverFileSinkSinkCpu").path("median").asDouble())
                .isEqualTo(0.75);
        assertThat(json(row).path("oursOverFileSinkSinkCpuOverall").path("median").asDouble())
                .isEqualTo(1.25);
        assertThat(row)
                .containsEntry("roundsOursAtMostFileSink", "0 of 3")
                .containsEntry("verdict", "missed")
                .containsEntry("wholeProcessVerdict", "met");
    }

    /**
     * Three rounds of the three sinks as the plan orders them; the machine slows down round by
     * round, which a ratio within each round does not see. Ours: 1,080, 1,620 and 2,160 ns per
     * event, FileSink 10 % above the discarding sink, ours 8 %. The sink threads: the discarding
     * sink's 50 ns per event, FileSink's 400, ours 300 in the steady state; over the whole run a
     * quarter more each.
     */
    static List<Measured> threeRounds() {
        return threeRounds(300, 375);
    }

    /** As {@link #threeRounds()}, with our sink threads at these ns per event. */
    static List<Measured> threeRounds(double oursSteady, double oursWholeRun) {
        double[] threads = {50, 400, oursSteady};
        double[] wholeRun = {62.5, 500, oursWholeRun};
        double[][] cpu = {{1000, 1100, 1080}, {1500, 1650, 1620}, {2000, 2200, 2160}};
        List<Measured> runs = new ArrayList<>();
        List<Run> plan =
                BenchPlan.parse(
                                new String[] {
                                    "--runs", "3", "--keys", "10", "--scale-keys", "none"
                                })
                        .runs();
        for (int i = 0; i < plan.size(); i++) {
            runs.add(
                    new Measured(
                            plan.get(i),
                            result(
                                    cpu[i / 3][i % 3],
                                    threads[i % 3],
                                    wholeRun[i % 3],
                                    1e6 / (i + 1))));
        }
        return runs;
    }

    private static JsonNode result(
            double cpuNanosPerEvent,
            double sinkCpuNanosPerEvent,
            double sinkCpuNanosPerEventOverall,
            double eventsPerSecond) {
        return new ObjectMapper()
                .createObjectNode()
                .put("events", 1000)
                .put("cpuNanosPerEvent", cpuNanosPerEvent)
                .put("sinkCpuNanosPerEvent", sinkCpuNanosPerEvent)
                .put("sinkCpuNanosPerEventOverall", sinkCpuNanosPerEventOverall)
                .put("allocatedBytesPerEvent", 100)
                .put("eventsPerSecond", eventsPerSecond);
    }

    private static JsonNode json(Object o) {
        return new ObjectMapper().valueToTree(o);
    }
}
