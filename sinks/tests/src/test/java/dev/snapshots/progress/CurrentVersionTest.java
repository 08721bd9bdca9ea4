package dev.snapshots.progress;

import static org.assertj.core.api.Assertions.assertThat;

import dev.snapshots.key.PartKind;
import dev.snapshots.store.LocalObjectStore;
import dev.snapshots.store.ObjectStore;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Readers are switched to a new job version only once it has caught up, and never back in time. */
class CurrentVersionTest {
    private static final long MINUTE = 60_000;
    private static final long T0 = Instant.parse("2026-11-30T10:00:00Z").toEpochMilli();

    @TempDir Path dir;

    @Test
    void promotionFollowsTheCompletionPointers() throws Exception {
        try (ObjectStore store = new LocalObjectStore(dir)) {
            assertThat(CurrentVersion.read(store, "telemetry")).isEmpty();
            assertThat(CurrentVersion.promote(store, "telemetry", 1).promoted())
                    .as("nothing complete in v1")
                    .isFalse();

            complete(store, 1, T0 + 10 * MINUTE);
            assertThat(CurrentVersion.promote(store, "telemetry", 1))
                    .satisfies(p -> assertThat(p.promoted()).isTrue())
                    .satisfies(p -> assertThat(p.before()).isEmpty());
            assertThat(CurrentVersion.read(store, "telemetry")).contains(1);

            complete(store, 2, T0 + 5 * MINUTE);
            CurrentVersion.Promotion behind = CurrentVersion.promote(store, "telemetry", 2);
            assertThat(behind.promoted()).isFalse();
            assertThat(behind.reason()).contains("behind v=1");
            assertThat(CurrentVersion.read(store, "telemetry"))
                    .as("refused: unchanged")
                    .contains(1);

            complete(store, 2, T0 + 10 * MINUTE);
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

    /**
     * Marks every window before {@code through} complete for a version with one writer, and a part
     * in its first window.
     */
    private static void complete(ObjectStore store, int version, long through) throws Exception {
        CompletionPointer.record(
                store,
                new CompletionPointer.Scope(
                        PartKind.SNAPSHOT, "telemetry", version, 1, 1, 5 * MINUTE),
                List.of(new CompletionPointer.Mark("run", 1, 0, through - 1, through)),
                List.of(
                        new CompletionPointer.PublishedPart(
                                T0, 0, "telemetry/v=" + version + "/part", "fp", 1)));
    }
}
