package dev.snapshots.progress;

import dev.snapshots.key.ObjectKeys;
import dev.snapshots.key.PartKind;
import dev.snapshots.progress.CompletionPointer.Scope;
import dev.snapshots.progress.Progress.PartEntry;
import dev.snapshots.store.ObjectStore;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Map;
import java.util.TreeMap;
import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.SerializationFeature;

/**
 * {@code {pipeline}/complete/v{N}-{yyyy-MM-dd}-{HHmm}.json}: one line of JSON saying that a window
 * of a job version is complete, where query engines see it (they skip the {@code _manifest.json}
 * beside the parts). A view joins the data with these records on version, {@code date} and {@code
 * window}, so it returns a window whole or not at all.
 *
 * <p>Written once (create-if-absent) right after the window's manifest, by the update that moves
 * the pointer past the window: never before the manifest, and an update that fails between the two
 * writes both again (the manifest finds itself there) before the pointer moves. A window with no
 * rows has no manifest and no record: the next record names the window with rows before it ({@code
 * previous_window_start}), so the windows in between are known complete and empty. The first job
 * version to complete a window also leaves the promotion record of sequence 0 (see {@link
 * CurrentVersion}): readers of a new pipeline see its windows without a promotion.
 *
 * <p>Snake-case names: Athena and Hive lower-case column names, and every engine's SQL reads them
 * unquoted.
 */
@PublicEvolving
public final class CompleteWindow {
    private static final ObjectMapper JSON =
            new ObjectMapper().enable(SerializationFeature.ORDER_MAP_ENTRIES_BY_KEYS);

    private CompleteWindow() {}

    static void write(
            ObjectStore store,
            Scope scope,
            long window,
            long previous,
            Map<Integer, PartEntry> parts)
            throws IOException {
        store.putIfAbsent(
                ObjectKeys.completeWindowKey(scope.pipeline(), scope.jobVersion(), window),
                render(scope, window, previous, parts),
                Map.of());
        if (previous == Long.MIN_VALUE && scope.kind() == PartKind.SNAPSHOT) {
            CurrentVersion.recordFirst(
                    store,
                    scope.pipeline(),
                    scope.jobVersion(),
                    Instant.ofEpochMilli(window + scope.windowLengthMillis()));
        }
    }

    static byte[] render(Scope scope, long window, long previous, Map<Integer, PartEntry> parts)
            throws IOException {
        long end = window + scope.windowLengthMillis();
        Map<String, Object> doc = new TreeMap<>();
        doc.put("pipeline", scope.pipeline());
        doc.put("job_version", scope.jobVersion());
        doc.put("schema_version", scope.schemaVersion());
        doc.put("date", ObjectKeys.date(window));
        doc.put("window", ObjectKeys.time(window));
        doc.put("window_start", Instant.ofEpochMilli(window).toString());
        doc.put("window_end", Instant.ofEpochMilli(end).toString());
        doc.put("window_start_millis", window);
        doc.put("window_end_millis", end);
        if (previous != Long.MIN_VALUE) {
            doc.put("previous_window_start", Instant.ofEpochMilli(previous).toString());
        }
        doc.put("buckets", scope.buckets());
        doc.put("part_count", parts.size());
        doc.put("row_count", parts.values().stream().mapToLong(PartEntry::rows).sum());
        // One line, newline-terminated: JSON lines, as Spark, Athena's SerDe and Trino read it.
        return (JSON.writeValueAsString(doc) + "\n").getBytes(StandardCharsets.UTF_8);
    }
}
