package dev.snapshots.progress;

import static org.assertj.core.api.Assertions.assertThat;

import dev.snapshots.key.ObjectKeys;
import dev.snapshots.store.LocalObjectStore;
import dev.snapshots.store.ObjectStore;
import dev.snapshots.testkit.PipelineHistory;
import dev.snapshots.testutils.StoreContents;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Readers are switched to a new job version only once its history covers theirs: never back in
 * time, and never to a version that starts later, unless forced.
 */
class CurrentVersionTest {
    private static final long MINUTE = 60_000;
    private static final long T0 = Instant.parse("2026-11-30T10:00:00Z").toEpochMilli();

    @TempDir Path dir;

    @Test
    void promotionWaitsUntilTheTargetHasCaughtUp() throws Exception {
        try (ObjectStore store = new LocalObjectStore(dir)) {
            PipelineHistory history = history(store);
            assertThat(CurrentVersion.read(store, "telemetry")).isEmpty();
            assertThat(CurrentVersion.promote(store, "telemetry", 1).promoted())
                    .as("nothing complete in v1")
                    .isFalse();

            history.complete(1, T0, T0 + 10 * MINUTE);
            assertThat(CurrentVersion.promote(store, "telemetry", 1))
                    .satisfies(p -> assertThat(p.promoted()).isTrue())
                    .satisfies(p -> assertThat(p.before()).isEmpty());
            assertThat(CurrentVersion.read(store, "telemetry")).contains(1);

            history.complete(2, T0, T0 + 5 * MINUTE);
            CurrentVersion.Promotion behind = CurrentVersion.promote(store, "telemetry", 2);
            assertThat(behind.promoted()).isFalse();
            assertThat(behind.reason())
                    .contains(
                            "behind v=1",
                            "readers would lose 2026-11-30T10:05:00Z to 2026-11-30T10:10:00Z of v=1: 1 window",
                            "--force promotes anyway");
            assertThat(CurrentVersion.read(store, "telemetry"))
                    .as("refused: unchanged")
                    .contains(1);

            history.complete(2, T0, T0 + 10 * MINUTE);
            CurrentVersion.Promotion caughtUp = CurrentVersion.promote(store, "telemetry", 2);
            assertThat(caughtUp.promoted()).isTrue();
            assertThat(caughtUp.before()).isEqualTo(Optional.of(1));
            assertThat(CurrentVersion.read(store, "telemetry")).contains(2);

            assertThat(CurrentVersion.promote(store, "telemetry", 1).promoted())
                    .as(
                            "v1 is not behind v2 either, so going back is allowed; it is a choice, not an accident")
                    .isTrue();
            assertThat(CurrentVersion.promote(store, "telemetry", 1).reason())
                    .contains("already current");
        }
    }

    /** What a replay from a savepoint is: v2 starts where the savepoint was taken. */
    @Test
    void aTargetThatStartsLaterIsRefusedNamingTheWindowsReadersWouldLoseUnlessForced()
            throws Exception {
        try (ObjectStore store = new LocalObjectStore(dir)) {
            history(store)
                    .complete(1, T0, T0 + 240 * MINUTE)
                    .complete(2, T0 + 195 * MINUTE, T0 + 240 * MINUTE);
            assertThat(CurrentVersion.promote(store, "telemetry", 1).promoted()).isTrue();

            CurrentVersion.Promotion refused = CurrentVersion.promote(store, "telemetry", 2);

            assertThat(refused.promoted()).isFalse();
            assertThat(refused.reason())
                    .contains(
                            "v=2 starts at 2026-11-30T13:15:00Z, after v=1",
                            "readers would lose 2026-11-30T10:00:00Z to 2026-11-30T13:15:00Z of v=1: 39 windows",
                            "--force promotes anyway")
                    .doesNotContain("behind");
            assertThat(CurrentVersion.read(store, "telemetry")).contains(1);

            CurrentVersion.Promotion forced = CurrentVersion.promote(store, "telemetry", 2, true);

            assertThat(forced.promoted()).isTrue();
            assertThat(forced.reason()).contains("forced", "of v=1: 39 windows");
            assertThat(CurrentVersion.read(store, "telemetry")).contains(2);
        }
    }

    /**
     * Query engines skip {@code _current.json}: each promotion leaves a record they read, and the
     * highest sequence is the version promoted last. A promotion that stopped before its record
     * finishes when the same version is promoted again.
     */
    @Test
    void eachPromotionLeavesARecordReadersSeeAndTheNewestHasTheHighestSequence() throws Exception {
        try (ObjectStore store = new LocalObjectStore(dir)) {
            history(store).complete(1, T0, T0 + 10 * MINUTE).complete(2, T0, T0 + 10 * MINUTE);
            CurrentVersion.promote(store, "telemetry", 1);
            CurrentVersion.promote(store, "telemetry", 2);
            CurrentVersion.promote(store, "telemetry", 1);

            assertThat(promotion(store, 1).path("job_version").asInt()).isEqualTo(1);
            assertThat(promotion(store, 2).path("job_version").asInt()).isEqualTo(2);
            assertThat(promotion(store, 3).path("job_version").asInt()).isEqualTo(1);
            assertThat(promotion(store, 3).path("complete_through").asText())
                    .isEqualTo("2026-11-30T10:10:00Z");
            assertThat(promotion(store, 0).path("job_version").asInt())
                    .as("sequence 0: the first version to complete a window, no promotion's")
                    .isEqualTo(1);
            assertThat(StoreContents.keys(store, "telemetry/promoted/")).hasSize(4);

            store.delete(ObjectKeys.promotionKey("telemetry", 3));
            assertThat(CurrentVersion.promote(store, "telemetry", 1).reason())
                    .contains("already current");
            assertThat(promotion(store, 3).path("job_version").asInt())
                    .as("written again")
                    .isEqualTo(1);
        }
    }

    private static JsonNode promotion(ObjectStore store, long sequence) throws Exception {
        return new ObjectMapper()
                .readTree(
                        store.get(ObjectKeys.promotionKey("telemetry", sequence))
                                .orElseThrow()
                                .content());
    }

    @Test
    void withNoCurrentVersionTheTargetMustCoverEveryOtherVersion() throws Exception {
        try (ObjectStore store = new LocalObjectStore(dir)) {
            history(store)
                    .complete(1, T0, T0 + 60 * MINUTE)
                    .complete(2, T0 + 15 * MINUTE, T0 + 60 * MINUTE)
                    .complete(3, T0, T0 + 45 * MINUTE);

            CurrentVersion.Promotion later = CurrentVersion.promote(store, "telemetry", 2);
            assertThat(later.promoted()).isFalse();
            assertThat(later.reason())
                    .contains(
                            "readers would lose 2026-11-30T10:00:00Z to 2026-11-30T10:15:00Z of v=1: 3 windows",
                            "of v=3: 3 windows");
            CurrentVersion.Promotion earlier = CurrentVersion.promote(store, "telemetry", 3);
            assertThat(earlier.promoted()).isFalse();
            assertThat(earlier.reason())
                    .contains(
                            "behind v=1",
                            "readers would lose 2026-11-30T10:45:00Z to 2026-11-30T11:00:00Z of v=1: 3 windows");
            assertThat(CurrentVersion.read(store, "telemetry")).isEmpty();

            assertThat(CurrentVersion.promote(store, "telemetry", 1).promoted())
                    .as("v1 covers both others")
                    .isTrue();
        }
    }

    private static PipelineHistory history(ObjectStore store) {
        return PipelineHistory.of(store, "telemetry", Duration.ofMinutes(5));
    }
}
