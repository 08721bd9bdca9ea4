package dev.snapshots.job.source;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Random;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The per-split lateness rule. The property that matters downstream: nothing a split's source
 * announces (its watermark after each record, or a watermark moved on while it was idle) is ever at
 * or past the window of a record the split later emits, event or dead letter. If it were, the
 * window operator would drop that record, and which records it dropped would depend on timing.
 */
class LatenessRuleTest {
    private static final long WINDOW = 300_000;
    private static final LatenessRule RULE = new LatenessRule(WINDOW, 10_000, 30_000);

    static LongStream seeds() {
        return LongStream.rangeClosed(1, 500);
    }

    @ParameterizedTest(name = "seed {0}")
    @MethodSource("seeds")
    void nothingASplitAnnouncesPassesARecordItEmitsLater(long seed) {
        Random random = new Random(seed);
        SplitProgress p =
                new SplitProgress(Long.MIN_VALUE, random.nextBoolean() ? 0 : Long.MIN_VALUE);
        long announced = Long.MIN_VALUE;
        long arrival = random.nextInt(1_000);
        for (int i = 0; i < 2_000; i++) {
            // Arrivals mostly close together, now and then after a quiet spell longer than the
            // idleness timeout.
            long gap =
                    random.nextInt(10) == 0
                            ? 20_000 + random.nextInt(120_000)
                            : random.nextInt(2_000);
            if (random.nextInt(4) == 0) {
                // Caught up somewhere in the gap: every record that arrived before then has been
                // read.
                long caughtUpTo = arrival + random.nextLong(gap + 1);
                announced = Math.max(announced, RULE.idleWatermark(p, caughtUpTo));
            }
            arrival += gap;
            long lag =
                    random.nextInt(20) == 0
                            ? random.nextInt(1_200_000) - 100_000
                            : random.nextInt(15_000);
            long eventTime = arrival - lag;

            RULE.arrive(p, arrival);
            String what =
                    "seed "
                            + seed
                            + ", record "
                            + i
                            + " (event time "
                            + eventTime
                            + ", arrival "
                            + arrival
                            + ")";
            if (RULE.isLate(p, eventTime)) {
                assertThat(RULE.timestampOfRejected(p, arrival))
                        .as(what + ": a dead letter's time")
                        .isGreaterThan(announced);
            } else {
                long windowEnd = eventTime - Math.floorMod(eventTime, WINDOW) + WINDOW;
                assertThat(windowEnd - 1)
                        .as(what + ": an accepted event's window")
                        .isGreaterThan(announced);
                RULE.accept(p, eventTime);
            }
            assertThat(p.watermark())
                    .as(what + ": the split's watermark never moves back")
                    .isGreaterThanOrEqualTo(announced);
            announced = p.watermark();
        }
    }

    @Test
    void anEventIsLateOnlyOnceItsWindowIsBehindTheSplitsOwnEvents() {
        SplitProgress p = SplitProgress.none();
        RULE.arrive(p, 1_000_000);
        RULE.accept(p, 1_000_000); // watermark 989,999
        assertThat(RULE.isLate(p, 899_999)).as("window [600000, 900000) is closed").isTrue();
        assertThat(RULE.isLate(p, 900_000)).as("window [900000, 1200000) is open").isFalse();
    }

    @Test
    void aRecordAfterAQuietSpellIsJudgedByItsArrivalAsWellAsItsSplitsEvents() {
        SplitProgress p = SplitProgress.none();
        RULE.arrive(p, 1_000_000);
        RULE.accept(p, 1_000_000);
        RULE.arrive(
                p, 3_000_000); // 2,000 s later: the split may have been moved to 2,960 s meanwhile
        assertThat(p.watermark()).isEqualTo(3_000_000 - 30_000 - 10_000 - 1);
        assertThat(RULE.isLate(p, 2_699_999)).isTrue();
        assertThat(RULE.isLate(p, 2_700_000)).isFalse();
    }

    @Test
    void withoutIdlenessAQuietSplitNeverMovesOnByTheClock() {
        LatenessRule neverIdle = new LatenessRule(WINDOW, 10_000, 0);
        SplitProgress p = SplitProgress.none();
        neverIdle.arrive(p, 1_000_000);
        neverIdle.accept(p, 1_000_000);
        assertThat(neverIdle.idleWatermark(p, 9_000_000)).isEqualTo(p.watermark());
        neverIdle.arrive(p, 9_000_000);
        assertThat(neverIdle.isLate(p, 900_000)).isFalse();
    }

    @Test
    void aChildShardStartsWhereTheFurthestOfItsParentsEnded() {
        SplitProgress child =
                SplitProgress.inherit(
                        List.of(new SplitProgress(500, 9_000), new SplitProgress(700, 8_000)));
        assertThat(child).isEqualTo(new SplitProgress(700, 9_000));
        assertThat(SplitProgress.inherit(List.of())).isEqualTo(SplitProgress.none());
    }
}
