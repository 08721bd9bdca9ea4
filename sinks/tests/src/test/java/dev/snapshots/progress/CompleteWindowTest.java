package dev.snapshots.progress;

import static org.assertj.core.api.Assertions.assertThat;

import dev.snapshots.key.ObjectKeys;
import dev.snapshots.key.PartKind;
import dev.snapshots.store.LocalObjectStore;
import dev.snapshots.store.ObjectStore;
import dev.snapshots.testkit.PipelineHistory;
import dev.snapshots.testutils.StoreContents;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A window the pointer passes gets, after its manifest, a record that query engines read: one line
 * of JSON with the text its partitions use, written once.
 */
class CompleteWindowTest {
    private static final long MINUTE = 60_000;
    private static final long T0 = Instant.parse("2026-11-30T00:00:00Z").toEpochMilli();

    @TempDir Path dir;

    @Test
    void aWindowThePointerPassesHasARecordWithItsPartitionsTextAndRows() throws Exception {
        try (ObjectStore store = new LocalObjectStore(dir)) {
            history(store).complete(1, T0, T0 + 10 * MINUTE);

            String key = ObjectKeys.completeWindowKey("telemetry", 1, T0 + 5 * MINUTE);
            byte[] content = store.get(key).orElseThrow().content();
            assertThat(new String(content, StandardCharsets.UTF_8))
                    .as("one line of JSON")
                    .endsWith("}\n")
                    .hasLineCount(1);
            JsonNode record = new ObjectMapper().readTree(content);
            assertThat(record.path("pipeline").asText()).isEqualTo("telemetry");
            assertThat(record.path("job_version").asInt()).isEqualTo(1);
            assertThat(record.path("schema_version").asInt()).isEqualTo(1);
            assertThat(record.path("date").asText()).isEqualTo("2026-11-30");
            assertThat(record.path("window").asText())
                    .as("as the directory spells it, not the number 5")
                    .isEqualTo("0005");
            assertThat(record.path("window_start").asText()).isEqualTo("2026-11-30T00:05:00Z");
            assertThat(record.path("window_end").asText()).isEqualTo("2026-11-30T00:10:00Z");
            assertThat(record.path("previous_window_start").asText())
                    .isEqualTo("2026-11-30T00:00:00Z");
            assertThat(record.path("buckets").asInt()).isEqualTo(1);
            assertThat(record.path("part_count").asInt()).isEqualTo(1);
            assertThat(record.path("row_count").asLong()).isEqualTo(1);
            assertThat(
                            store.get(
                                    ObjectKeys.manifestKey(
                                            PartKind.SNAPSHOT, "telemetry", 1, 1, T0 + 5 * MINUTE)))
                    .as("the manifest it follows")
                    .isPresent();
            JsonNode first =
                    new ObjectMapper()
                            .readTree(
                                    store.get(ObjectKeys.completeWindowKey("telemetry", 1, T0))
                                            .orElseThrow()
                                            .content());
            assertThat(first.has("previous_window_start"))
                    .as("the first window names no window before it")
                    .isFalse();
            assertThat(store.get(ObjectKeys.completeWindowKey("telemetry", 1, T0 + 10 * MINUTE)))
                    .as("a window the pointer has not passed")
                    .isEmpty();
        }
    }

    /**
     * An update that wrote a manifest and failed before its record (or before the pointer moved) is
     * done again: the manifest is there already, the record is written then, and a record written
     * once is never replaced.
     */
    @Test
    void anUpdateDoneAgainWritesTheMissingRecordAndKeepsAnExistingOne() throws Exception {
        try (ObjectStore store = new LocalObjectStore(dir)) {
            store.putIfAbsent(
                    ObjectKeys.manifestKey(PartKind.SNAPSHOT, "telemetry", 1, 1, T0),
                    "{}".getBytes(StandardCharsets.UTF_8),
                    Map.of());
            String second = ObjectKeys.completeWindowKey("telemetry", 1, T0 + 5 * MINUTE);
            byte[] earlier = "{\"row_count\":1}\n".getBytes(StandardCharsets.UTF_8);
            store.putIfAbsent(second, earlier, Map.of());

            history(store).complete(1, T0, T0 + 10 * MINUTE);

            assertThat(store.get(ObjectKeys.completeWindowKey("telemetry", 1, T0)))
                    .as("written although the manifest was there")
                    .isPresent();
            assertThat(store.get(second).orElseThrow().content()).isEqualTo(earlier);
        }
    }

    @Test
    void deadLettersAndWindowsWithNoRowsHaveNoRecord() throws Exception {
        try (ObjectStore store = new LocalObjectStore(dir)) {
            CompletionPointer.record(
                    store,
                    new CompletionPointer.Scope(
                            PartKind.DEAD_LETTER, "telemetry", 1, 1, 1, 5 * MINUTE),
                    List.of(
                            new CompletionPointer.Mark(
                                    "run", 1, 0, T0 + 10 * MINUTE - 1, T0 + 10 * MINUTE)),
                    List.of(
                            new CompletionPointer.PublishedPart(
                                    T0,
                                    0,
                                    ObjectKeys.windowPrefix(
                                                    PartKind.DEAD_LETTER, "telemetry", 1, 1, T0)
                                            + "part",
                                    "fingerprint",
                                    1)));

            assertThat(
                            store.get(
                                    ObjectKeys.manifestKey(
                                            PartKind.DEAD_LETTER, "telemetry", 1, 1, T0)))
                    .isPresent();
            assertThat(StoreContents.keys(store, "telemetry/" + ObjectKeys.COMPLETE_DIRECTORY))
                    .as("dead letters are no reader's data; the empty window after has no rows")
                    .isEmpty();
        }
    }

    private static PipelineHistory history(ObjectStore store) {
        return PipelineHistory.of(store, "telemetry", Duration.ofMinutes(5));
    }
}
