package dev.snapshots.progress;

import static org.assertj.core.api.Assertions.assertThat;

import dev.snapshots.key.ObjectKeys;
import dev.snapshots.key.PartKind;
import dev.snapshots.progress.CompletionPointer.Mark;
import dev.snapshots.progress.CompletionPointer.PublishedPart;
import dev.snapshots.progress.CompletionPointer.Scope;
import dev.snapshots.store.ObjectStore;
import dev.snapshots.store.StoreSpec;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The pointers as earlier releases wrote them (files in {@code src/test/resources/golden}, each
 * written by the release that introduced its format, never rewritten): this release reads them, and
 * moves on from where they stood. {@code -Dgolden.write=true} adds the file of a new format.
 */
class StoredPointersTest {
    private static final Path GOLDEN = Path.of("src/test/resources/golden");
    private static final long W = 300_000;
    private static final long START = 1_796_032_800_000L; // 2026-11-30T10:00Z
    private static final Scope SCOPE = new Scope(PartKind.SNAPSHOT, "orders", 3, 1, 4, W);

    @TempDir Path dir;

    /**
     * Format 1 (before runs, manifests and the log): its value stands, its marks (which mixed runs)
     * are dropped.
     */
    @Test
    void aFormatOnePointerIsReadAndMovedOnFrom() throws Exception {
        try (ObjectStore store = store()) {
            put(
                    store,
                    ObjectKeys.progressKey(PartKind.SNAPSHOT, "orders", 3),
                    "progress-format-1.json");

            assertThat(CompletionPointer.read(store, PartKind.SNAPSHOT, "orders", 3))
                    .contains(START + 2 * W);
            assertThat(CompletionPointer.schemaVersion(store, PartKind.SNAPSHOT, "orders", 3))
                    .isEmpty();

            // Its subtask 0 mark (through 10:15) does not count again: a new run must prove its own
            // windows.
            CompletionPointer.record(
                    store,
                    SCOPE,
                    List.of(new Mark("new-run", 1, 0, START + 4 * W - 1, START + 4 * W)),
                    List.of(new PublishedPart(START + 3 * W, 0, "orders/v=3/x", "fp", 1)));
            assertThat(CompletionPointer.state(store, PartKind.SNAPSHOT, "orders", 3))
                    .hasValueSatisfying(
                            s -> {
                                assertThat(s.completeThroughMillis()).isEqualTo(START + 4 * W);
                                assertThat(s.manifestsFromMillis())
                                        .as("manifests from the old pointer on")
                                        .isEqualTo(START + 2 * W);
                                assertThat(s.schemaVersion()).isEqualTo(1);
                            });
        }
    }

    /**
     * Format 2, as this release writes it: the copy readers look at, with its position in the log.
     */
    @Test
    void aFormatTwoPointerReadsBack() throws Exception {
        Path golden = GOLDEN.resolve("progress-format-2.json");
        if (!Files.exists(golden) && Boolean.getBoolean("golden.write")) {
            try (ObjectStore store = store()) {
                CompletionPointer.record(
                        store,
                        SCOPE,
                        List.of(
                                new Mark("run-1", 2, 0, START + 2 * W - 1, START + 2 * W),
                                new Mark("run-1", 2, 1, START + W - 1, START + W)),
                        List.of(
                                new PublishedPart(START, 1, "orders/v=3/a", "fp-a", 7),
                                new PublishedPart(START + W, 2, "orders/v=3/b", "fp-b", 9)));
                Files.write(
                        golden,
                        store.get(ObjectKeys.progressKey(PartKind.SNAPSHOT, "orders", 3))
                                .orElseThrow()
                                .content());
            }
        }
        try (ObjectStore store = store()) {
            put(
                    store,
                    ObjectKeys.progressKey(PartKind.SNAPSHOT, "orders", 3),
                    "progress-format-2.json");

            assertThat(CompletionPointer.state(store, PartKind.SNAPSHOT, "orders", 3))
                    .hasValueSatisfying(
                            s -> {
                                assertThat(s.completeThroughMillis()).isEqualTo(START + W);
                                assertThat(s.manifestsFromMillis()).isEqualTo(START);
                                assertThat(s.lastManifestMillis()).isEqualTo(START);
                                assertThat(s.schemaVersion()).isEqualTo(1);
                            });
            // Run 1's subtask 1 catches up: its recorded subtask 0 mark counts, so window 10:05 is
            // complete now.
            CompletionPointer.record(
                    store,
                    SCOPE,
                    List.of(new Mark("run-1", 2, 1, START + 2 * W - 1, START + 2 * W)),
                    List.of());
            assertThat(CompletionPointer.read(store, PartKind.SNAPSHOT, "orders", 3))
                    .contains(START + 2 * W);
        }
    }

    @Test
    void theCurrentVersionOfTheFirstFormatReadsBack() throws Exception {
        try (ObjectStore store = store()) {
            put(store, ObjectKeys.currentVersionKey("orders"), "current-version-1.json");

            assertThat(CurrentVersion.read(store, "orders")).contains(3);
        }
    }

    private ObjectStore store() {
        return StoreSpec.parse(dir.toUri().toString()).open();
    }

    private static void put(ObjectStore store, String key, String golden) throws IOException {
        store.delete(key);
        assertThat(store.putIfAbsent(key, Files.readAllBytes(GOLDEN.resolve(golden)), Map.of()))
                .isTrue();
    }
}
