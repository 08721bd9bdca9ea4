package dev.snapshots.progress;

import dev.snapshots.key.ObjectKeys;
import dev.snapshots.key.PartKind;
import dev.snapshots.progress.CompletionPointer.Scope;
import dev.snapshots.progress.Progress.ManifestSpan;
import dev.snapshots.progress.Progress.PartEntry;
import dev.snapshots.store.ObjectStore;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.io.UncheckedIOException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.core.type.TypeReference;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.SerializationFeature;

/**
 * {@code .../window=HHmm/_manifest.json}: the parts of one complete window, with their fingerprints
 * and row counts, written once (create-if-absent) when the completion pointer passes the window. A
 * bucket it does not list had no rows; a complete window with no manifest had no rows at all (no
 * events is not a missing window). It is what makes completeness checkable: a part missing,
 * replaced or added after the window closed is a difference between the manifest and the store,
 * found by {@code snapshots audit}. Query engines do not read it ('_'): each manifest of the
 * snapshots is followed by its {@link CompleteWindow} record, which they do.
 *
 * <p>Why a manifest and not an empty part per empty bucket: a writer subtask cannot know that a
 * window exists when none of its own buckets had rows in it, but the committer that moves the
 * pointer knows every part of each window the pointer passes. And one small object per window costs
 * less than B empty Parquet files.
 */
@PublicEvolving
public final class WindowManifest {
    private static final long DAY_MILLIS = 86_400_000L;

    /** Up to how many days a span's date directories are computed rather than listed. */
    private static final int KNOWN_DAYS = 3;

    private static final ObjectMapper JSON =
            new ObjectMapper()
                    .enable(SerializationFeature.ORDER_MAP_ENTRIES_BY_KEYS)
                    .enable(SerializationFeature.INDENT_OUTPUT);

    /** One listed part. */
    public record Listed(int bucket, String key, String fingerprint, long rows) {}

    /**
     * A manifest as read back: the window, its bucket count, its parts by bucket, and the window
     * with parts before it (empty for the first manifest of its job version).
     */
    public record Manifest(
            long windowStartMillis,
            long windowLengthMillis,
            int buckets,
            Map<Integer, Listed> parts,
            OptionalLong previousWindowStartMillis) {}

    private WindowManifest() {}

    /**
     * Manifests of the windows with parts that {@code after} completes and {@code before} did not,
     * each naming the window with parts before it; returns the span of manifests afterwards. The
     * windows are the recorded ones and, for parts published but never recorded (a committer that
     * died in between), the ones the store's date and window directories show: never a walk over
     * every window of the span, which for a sparse output (dead letters) can be years. The
     * manifests are written on {@code writers}, all at once (a catch-up passes many windows in one
     * update), and all have landed when this returns.
     */
    static ManifestSpan writeNewlyComplete(
            ObjectStore store, Scope scope, Progress before, Progress after, Executor writers)
            throws IOException {
        long from = before.completeThroughMillis;
        long to = after.completeThroughMillis;
        if (to <= from || to <= 0) {
            return before.manifests;
        }
        TreeSet<Long> windows =
                new TreeSet<>(
                        storedWindows(
                                store,
                                ObjectKeys.schemaPrefix(
                                        scope.kind(),
                                        scope.pipeline(),
                                        scope.jobVersion(),
                                        scope.schemaVersion()),
                                from,
                                to));
        after.open.keySet().stream().filter(w -> w >= from && w < to).forEach(windows::add);
        long previous = before.manifests.lastMillis();
        List<CompletableFuture<Void>> writes = new ArrayList<>();
        for (long window : windows) {
            long named = previous;
            writes.add(
                    CompletableFuture.runAsync(
                            () -> {
                                try {
                                    write(store, scope, window, named, after);
                                } catch (IOException e) {
                                    throw new UncheckedIOException(e);
                                }
                            },
                            writers));
            previous = window;
        }
        // allOf completes once every write has ended, failed or not: none is still under way
        // when the pointer moves or the update fails.
        try {
            // get, not join: a cancelled pointer task interrupts its update here.
            CompletableFuture.allOf(writes.toArray(CompletableFuture[]::new)).get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InterruptedIOException("interrupted while writing window manifests");
        } catch (ExecutionException e) {
            Throwable cause =
                    e.getCause() instanceof UncheckedIOException u ? u.getCause() : e.getCause();
            throw cause instanceof IOException io
                    ? io
                    : new IOException("writing a manifest failed", cause);
        }
        return windows.isEmpty()
                ? before.manifests
                : before.manifests.extendedTo(windows.first(), windows.last());
    }

    /**
     * Windows in [from, to) with a directory: one listing of the windows of each day in range, and
     * before them one of the days, unless the range is a few days long (the pointer's usual step,
     * one window, is), when the days are known without it.
     */
    static List<Long> storedWindows(ObjectStore store, String schemaPrefix, long from, long to)
            throws IOException {
        List<String> dates = new ArrayList<>();
        if (from >= 0 && to - from <= KNOWN_DAYS * DAY_MILLIS) {
            for (long day = from - Math.floorMod(from, DAY_MILLIS); day < to; day += DAY_MILLIS) {
                dates.add(schemaPrefix + ObjectKeys.dateDirectory(day));
            }
        } else {
            store.listDirectories(schemaPrefix, dates::add);
        }
        List<Long> windows = new ArrayList<>();
        for (String date : dates) {
            OptionalLong day = ObjectKeys.dayStart(date);
            if (day.isPresent() && day.getAsLong() < to && day.getAsLong() + DAY_MILLIS > from) {
                store.listDirectories(
                        date,
                        w ->
                                ObjectKeys.parseWindowDirectory(w)
                                        .map(ObjectKeys.WindowKey::windowStartMillis)
                                        .filter(start -> start >= from && start < to)
                                        .ifPresent(windows::add));
            }
        }
        return windows;
    }

    /** The manifest of {@code window}, naming {@code previous}, the window with parts before it. */
    private static void write(
            ObjectStore store, Scope scope, long window, long previous, Progress after)
            throws IOException {
        Map<Integer, PartEntry> parts =
                CompletionPointer.partsOf(
                        store, scope, window, after.open.getOrDefault(window, Map.of()));
        store.putIfAbsent(
                ObjectKeys.manifestKey(
                        scope.kind(),
                        scope.pipeline(),
                        scope.jobVersion(),
                        scope.schemaVersion(),
                        window),
                render(scope, window, previous, parts),
                Map.of());
        // Dead letters are under '_deadletter/', which no reader of the data queries.
        if (scope.kind() == PartKind.SNAPSHOT) {
            CompleteWindow.write(store, scope, window, previous, parts);
        }
    }

    private static byte[] render(
            Scope scope, long window, long previous, Map<Integer, PartEntry> parts)
            throws IOException {
        Map<String, Object> doc = new TreeMap<>();
        doc.put("pipeline", scope.pipeline());
        doc.put("kind", scope.kind().name().toLowerCase(Locale.ROOT));
        doc.put("jobVersion", scope.jobVersion());
        doc.put("schemaVersion", scope.schemaVersion());
        doc.put("windowStartMillis", window);
        doc.put("windowStart", Instant.ofEpochMilli(window).toString());
        doc.put("windowEndMillis", window + scope.windowLengthMillis());
        if (previous != Long.MIN_VALUE) {
            doc.put("previousWindowStartMillis", previous);
        }
        doc.put("buckets", scope.buckets());
        List<Listed> listed = new ArrayList<>();
        parts.forEach(
                (bucket, p) -> listed.add(new Listed(bucket, p.key(), p.fingerprint(), p.rows())));
        doc.put("parts", listed);
        doc.put("rows", listed.stream().mapToLong(Listed::rows).sum());
        return JSON.writeValueAsBytes(doc);
    }

    /** The manifest at {@code key}, if there is one. */
    public static Optional<Manifest> read(ObjectStore store, String key) throws IOException {
        Optional<ObjectStore.VersionedContent> content = store.get(key);
        if (content.isEmpty()) {
            return Optional.empty();
        }
        Map<String, Object> doc =
                JSON.readValue(
                        content.get().content(), new TypeReference<Map<String, Object>>() {});
        List<Listed> listed =
                JSON.convertValue(doc.get("parts"), new TypeReference<List<Listed>>() {});
        Map<Integer, Listed> parts = new TreeMap<>();
        listed.forEach(l -> parts.put(l.bucket(), l));
        long start = ((Number) doc.get("windowStartMillis")).longValue();
        Object previous = doc.get("previousWindowStartMillis");
        return Optional.of(
                new Manifest(
                        start,
                        ((Number) doc.get("windowEndMillis")).longValue() - start,
                        ((Number) doc.get("buckets")).intValue(),
                        parts,
                        previous == null
                                ? OptionalLong.empty()
                                : OptionalLong.of(((Number) previous).longValue())));
    }
}
