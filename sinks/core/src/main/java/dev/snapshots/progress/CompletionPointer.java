package dev.snapshots.progress;

import dev.snapshots.key.ObjectKeys;
import dev.snapshots.key.PartKind;
import dev.snapshots.key.PartMetadata;
import dev.snapshots.progress.Progress.ManifestSpan;
import dev.snapshots.progress.Progress.PartEntry;
import dev.snapshots.progress.Progress.RunMarks;
import dev.snapshots.store.ObjectStore;
import dev.snapshots.store.ObjectStore.VersionedContent;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.Executor;
import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.core.type.TypeReference;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.SerializationFeature;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The completion pointer of a job version: every window ending at or before {@code
 * completeThroughMillis} has all its parts published, and a manifest listing them.
 *
 * <p>The sink's pointer task records the parts the committers published and the marks their writers
 * sent with them (see {@link Progress} for what a mark proves, and why marks are kept per run). For
 * every window the pointer passes, the update that moves it writes the window's manifest first
 * ({@link WindowManifest}), so a manifest exists for every window before the pointer.
 *
 * <p>No lock. Each state of the pointer is an immutable object at the next position of a log,
 * {@code .../v=N/_progress/00000000000000000042.json}, created with create-if-absent: of two
 * updaters that read position 41, one creates 42 and the other finds it taken, reads it and merges
 * into it. Merging only raises marks and adds parts, so the pointer never moves back. Why not a
 * compare-and-swap of one object: S3Proxy 4.1.0's {@code If-Match} is not atomic (see
 * docs/ARCHITECTURE.md), while create-if-absent is atomic on every store the sink supports, and is
 * what the whole sink already rests on. {@code _progress.json} beside the log repeats the newest
 * state for readers, with its position; a reader takes any newer entry of the log over it, so a
 * late copy never shows the pointer behind. The log keeps its newest {@value #KEPT_ENTRIES} or so
 * entries.
 */
@PublicEvolving
public final class CompletionPointer {
    /**
     * The format this release writes; it reads format 1 (before runs and manifests) and refuses
     * newer ones.
     */
    static final int FORMAT = 2;

    private static final Logger LOG = LoggerFactory.getLogger(CompletionPointer.class);
    private static final ObjectMapper JSON =
            new ObjectMapper().enable(SerializationFeature.ORDER_MAP_ENTRIES_BY_KEYS);
    private static final int MAX_ROUNDS = 100;
    private static final int KEPT_ENTRIES = 16;

    /**
     * Runs kept in the pointer; a run not heard from since the newest this many is forgotten, and
     * starts again if it comes back.
     */
    private static final int KEPT_RUNS = 16;

    /** The sink a pointer belongs to. */
    public record Scope(
            PartKind kind,
            String pipeline,
            int jobVersion,
            int schemaVersion,
            int buckets,
            long windowLengthMillis) {}

    /** A writer subtask's mark as its committer records it: see {@link Progress#withMark}. */
    public record Mark(
            String run, int parallelism, int subtask, long watermark, long lastWindowEndMillis) {}

    /** A part that is published, as its window's manifest will list it. */
    public record PublishedPart(
            long windowStartMillis, int bucket, String key, String fingerprint, long rows) {}

    /**
     * What a reader or the audit needs of a pointer: how far windows are complete, the first and
     * the newest window with a manifest (MIN before any; see {@link WindowManifest}), the schema.
     */
    public record State(
            long completeThroughMillis,
            long manifestsFromMillis,
            long lastManifestMillis,
            int schemaVersion) {}

    /** The pointer cannot be read or updated as it is; parts are published regardless. */
    public static final class ProgressException extends IOException {
        private static final long serialVersionUID = 1L;

        ProgressException(String message, Throwable cause) {
            super(message, cause);
        }
    }

    /**
     * The newest state and its position in the log; -1 for a pointer written before the log
     * existed.
     */
    private record Latest(long sequence, Progress progress, byte[] content) {}

    /** The newest state, if any, and the version of the readers' copy as it was read. */
    private record Read(Optional<Latest> latest, Optional<String> copyVersion) {}

    private CompletionPointer() {}

    /** The pointer's value, or empty when nothing is complete yet. */
    public static Optional<Long> read(
            ObjectStore store, PartKind kind, String pipeline, int jobVersion) throws IOException {
        return latest(store, kind, pipeline, jobVersion).flatMap(l -> readable(l.progress));
    }

    /** The pointer as it stands, if anything was recorded. */
    public static Optional<State> state(
            ObjectStore store, PartKind kind, String pipeline, int jobVersion) throws IOException {
        return latest(store, kind, pipeline, jobVersion)
                .map(
                        l ->
                                new State(
                                        l.progress.completeThroughMillis,
                                        l.progress.manifests.firstMillis(),
                                        l.progress.manifests.lastMillis(),
                                        l.progress.schemaVersion));
    }

    /** The schema version a job version is written with, once anything of it was recorded. */
    public static Optional<Integer> schemaVersion(
            ObjectStore store, PartKind kind, String pipeline, int jobVersion) throws IOException {
        return state(store, kind, pipeline, jobVersion)
                .map(State::schemaVersion)
                .filter(v -> v >= 0);
    }

    private static String schemaMismatch(
            String pipeline, int jobVersion, int recorded, int writing) {
        return pipeline
                + " v="
                + jobVersion
                + " is written with schema version "
                + recorded
                + ", and this job writes schema "
                + writing
                + ": a new schema needs a new job version ("
                + (jobVersion + 1)
                + "), which replays into its own namespace";
    }

    /**
     * See {@link Progress#committedThrough}: a mark that does not change this changes nothing in
     * the pointer.
     */
    public static long committedThrough(long watermark, long windowLengthMillis) {
        return Progress.committedThrough(watermark, windowLengthMillis);
    }

    /** As {@link #record(ObjectStore, Scope, List, List, Executor)}, one manifest at a time. */
    public static Optional<Long> record(
            ObjectStore store, Scope scope, List<Mark> marks, List<PublishedPart> parts)
            throws IOException {
        return record(store, scope, marks, parts, Runnable::run);
    }

    /**
     * Records published parts and marks, writes the manifests of the windows that are complete now,
     * and moves the pointer: once, by an updater that remembers nothing (see {@link Updater}).
     *
     * @param manifestWriters where the manifests of the windows this update completes are written,
     *     all at once; they have all landed before the pointer moves
     * @return the pointer afterwards, if any window is complete
     * @throws ProgressException if the pointer is unreadable, written by a newer release, or of
     *     another schema version
     */
    public static Optional<Long> record(
            ObjectStore store,
            Scope scope,
            List<Mark> marks,
            List<PublishedPart> parts,
            Executor manifestWriters)
            throws IOException {
        return new Updater(store, scope, manifestWriters).record(marks, parts);
    }

    /**
     * Updates the pointer again and again, remembering its own last update: the state it created
     * and the version its swap gave {@code _progress.json}. The next update starts from there and
     * reads neither, two requests a window fewer. Should another updater have written meanwhile,
     * the create finds its position taken, and this one reads the log and merges, as any updater
     * does. A lost or failed swap, or a failed update, leaves nothing remembered: the next update
     * reads. The sink's pointer task holds one; for one thread at a time.
     */
    public static final class Updater {
        private final ObjectStore store;
        private final Scope scope;
        private final Executor manifestWriters;

        /** What the last update left, as a read would find it; null: read the store. */
        private Read remembered;

        /**
         * @param manifestWriters where the manifests of the windows an update completes are
         *     written, all at once; they have all landed before the pointer moves
         */
        public Updater(ObjectStore store, Scope scope, Executor manifestWriters) {
            this.store = store;
            this.scope = scope;
            this.manifestWriters = manifestWriters;
        }

        /**
         * Records published parts and marks, writes the manifests of the windows that are complete
         * now, and moves the pointer.
         *
         * @return the pointer afterwards, if any window is complete
         * @throws ProgressException if the pointer is unreadable, written by a newer release, or of
         *     another schema version
         */
        public Optional<Long> record(List<Mark> marks, List<PublishedPart> parts)
                throws IOException {
            Map<Long, Map<Integer, PartEntry>> published = new TreeMap<>();
            for (PublishedPart p : parts) {
                published
                        .computeIfAbsent(p.windowStartMillis(), w -> new TreeMap<>())
                        .put(p.bucket(), new PartEntry(p.key(), p.fingerprint(), p.rows()));
            }
            for (int round = 0; round < MAX_ROUNDS; round++) {
                Read read =
                        remembered != null
                                ? remembered
                                : readLog(
                                        store, scope.kind(), scope.pipeline(), scope.jobVersion());
                remembered = null;
                Optional<Latest> latest = read.latest();
                Progress before =
                        latest.map(Latest::progress)
                                .orElse(
                                        Progress.empty(
                                                scope.pipeline(),
                                                scope.jobVersion(),
                                                scope.schemaVersion()));
                long sequence = latest.map(l -> l.sequence() + 1).orElse(0L);
                if (before.schemaVersion >= 0 && before.schemaVersion != scope.schemaVersion()) {
                    throw new ProgressException(
                            schemaMismatch(
                                    scope.pipeline(),
                                    scope.jobVersion(),
                                    before.schemaVersion,
                                    scope.schemaVersion()),
                            null);
                }
                Progress after = before.withSchema(scope.schemaVersion()).withParts(published);
                long now = System.currentTimeMillis();
                for (Mark m : marks) {
                    after =
                            after.withMark(
                                    m.run(),
                                    m.parallelism(),
                                    m.subtask(),
                                    m.watermark(),
                                    m.lastWindowEndMillis(),
                                    scope.windowLengthMillis(),
                                    now);
                }
                after =
                        after.withManifests(
                                        WindowManifest.writeNewlyComplete(
                                                store, scope, before, after, manifestWriters))
                                .settled(KEPT_RUNS);
                if (after.sameAs(before)) {
                    remembered = read;
                    return readable(before);
                }
                byte[] content = render(after, sequence);
                String entry =
                        ObjectKeys.progressEntryKey(
                                scope.kind(), scope.pipeline(), scope.jobVersion(), sequence);
                if (store.putIfAbsent(entry, content, Map.of())) {
                    if (!inLog(store, scope, sequence, latest)) {
                        // The position was taken and trimmed while this update stalled, so the
                        // entry sits below the log's newest where no reader looks: merge onto the
                        // newest rather than report marks as recorded that nobody sees. The entry
                        // stays for the next trim: deleting it could open a gap that another
                        // stalled updater fills unseen, if this was a false alarm.
                        LOG.warn(
                                "Position {} of the pointer log of {} v{} may have been trimmed while"
                                        + " this update stalled; merging again onto the newest",
                                sequence,
                                scope.pipeline(),
                                scope.jobVersion());
                        continue;
                    }
                    Optional<String> copy = publishCopy(store, scope, content, read.copyVersion());
                    if (copy.isPresent()) {
                        remembered = new Read(Optional.of(parse(content)), copy);
                    }
                    forgetBefore(store, scope, sequence);
                    return readable(after);
                }
                // Another updater took this position: read what it wrote and merge into it.
            }
            throw new ProgressException(
                    "could not record the progress of "
                            + scope.pipeline()
                            + " v="
                            + scope.jobVersion()
                            + " in "
                            + MAX_ROUNDS
                            + " contended rounds",
                    null);
        }
    }

    /**
     * Whether an entry just created at {@code sequence} is in the log readers follow, and not at a
     * position trimmed while its updater stalled. Trimming deletes in ascending order and keeps the
     * newest {@value #KEPT_ENTRIES}, so a position is trimmed only after its predecessor: if the
     * predecessor still holds exactly the state this update read, the position was never taken
     * before. The first position has no predecessor; it was trimmed only if later ones exist. A
     * false alarm (the log moved on within this call) costs one merge that finds nothing to add.
     */
    private static boolean inLog(
            ObjectStore store, Scope scope, long sequence, Optional<Latest> read)
            throws IOException {
        if (sequence == 0) {
            return logEntries(store, scope.kind(), scope.pipeline(), scope.jobVersion())
                    .keySet()
                    .stream()
                    .allMatch(n -> n <= sequence);
        }
        Optional<VersionedContent> predecessor =
                store.get(
                        ObjectKeys.progressEntryKey(
                                scope.kind(), scope.pipeline(), scope.jobVersion(), sequence - 1));
        return predecessor.isPresent()
                && Arrays.equals(predecessor.get().content(), read.orElseThrow().content());
    }

    /**
     * The pointer as readers see it: nothing until a window with parts is complete. A run restored
     * from another version's savepoint (a replay) owes no window before its savepoint, so its marks
     * alone would call those windows complete while this version holds none of them; readers, and
     * promotion, wait for the version's own first complete window.
     */
    private static Optional<Long> readable(Progress p) {
        return p.manifests.firstMillis() != Long.MIN_VALUE && p.completeThroughMillis > 0
                ? Optional.of(p.completeThroughMillis)
                : Optional.empty();
    }

    private static Optional<Latest> latest(
            ObjectStore store, PartKind kind, String pipeline, int jobVersion) throws IOException {
        return readLog(store, kind, pipeline, jobVersion).latest();
    }

    private static Read readLog(ObjectStore store, PartKind kind, String pipeline, int jobVersion)
            throws IOException {
        Optional<VersionedContent> copy =
                store.get(ObjectKeys.progressKey(kind, pipeline, jobVersion));
        Optional<String> copyVersion = copy.map(VersionedContent::version);
        Optional<Latest> copied =
                copy.isPresent() ? Optional.of(parse(copy.get().content())) : Optional.empty();
        TreeMap<Long, String> entries = logEntries(store, kind, pipeline, jobVersion);
        for (Map.Entry<Long, String> newest : entries.descendingMap().entrySet()) {
            if (copied.isPresent() && newest.getKey() <= copied.get().sequence()) {
                break;
            }
            Optional<VersionedContent> entry = store.get(newest.getValue());
            if (entry.isPresent()) { // else forgotten since the listing
                return new Read(Optional.of(parse(entry.get().content())), copyVersion);
            }
        }
        return new Read(copied, copyVersion);
    }

    /**
     * The copy readers look at first, swapped from the version this update read, so no extra read.
     * A late or failed one is harmless, since readers take a newer log entry over it, so a failure
     * here does not fail the update that already landed in the log. A swap from that version also
     * never puts back an older state over a newer updater's copy, which a fresh read just before
     * the swap could.
     *
     * @return the copy's version now, if this swap won
     */
    private static Optional<String> publishCopy(
            ObjectStore store, Scope scope, byte[] content, Optional<String> readVersion) {
        String key = ObjectKeys.progressKey(scope.kind(), scope.pipeline(), scope.jobVersion());
        try {
            return store.compareAndSwap(key, content, readVersion);
        } catch (IOException e) {
            LOG.info("The copy {} lags the log until the next update: {}", key, e.toString());
            return Optional.empty();
        }
    }

    /**
     * Now and then, not on every update: drops log entries older than the newest {@link
     * #KEPT_ENTRIES}.
     */
    private static void forgetBefore(ObjectStore store, Scope scope, long sequence)
            throws IOException {
        if (sequence < 2 * KEPT_ENTRIES || sequence % KEPT_ENTRIES != 0) {
            return;
        }
        for (String key :
                logEntries(store, scope.kind(), scope.pipeline(), scope.jobVersion())
                        .headMap(sequence - KEPT_ENTRIES)
                        .values()) {
            store.delete(key);
        }
    }

    /** The log's entries by position. */
    private static TreeMap<Long, String> logEntries(
            ObjectStore store, PartKind kind, String pipeline, int jobVersion) throws IOException {
        TreeMap<Long, String> entries = new TreeMap<>();
        store.list(
                ObjectKeys.progressLogPrefix(kind, pipeline, jobVersion),
                o -> ObjectKeys.progressEntry(o.key()).ifPresent(n -> entries.put(n, o.key())));
        return entries;
    }

    static byte[] render(Progress p, long sequence) {
        Map<String, Object> doc = new TreeMap<>();
        doc.put("format", FORMAT);
        doc.put("sequence", sequence);
        doc.put("pipeline", p.pipeline);
        doc.put("jobVersion", p.jobVersion);
        doc.put("schemaVersion", p.schemaVersion);
        if (p.completeThroughMillis > 0) {
            doc.put("completeThroughMillis", p.completeThroughMillis);
            doc.put("completeThrough", Instant.ofEpochMilli(p.completeThroughMillis).toString());
        }
        if (p.manifests.firstMillis() != Long.MIN_VALUE) {
            doc.put("manifestsFromMillis", p.manifests.firstMillis());
            doc.put("lastManifestMillis", p.manifests.lastMillis());
        }
        Map<String, Object> runs = new TreeMap<>();
        p.runs.forEach(
                (id, r) ->
                        runs.put(
                                id,
                                Map.of(
                                        "parallelism",
                                        r.parallelism(),
                                        "committedThrough",
                                        r.watermarks(),
                                        "lastWindowEndMillis",
                                        r.lastWindowEndMillis(),
                                        "updatedMillis",
                                        r.updatedMillis())));
        doc.put("runs", runs);
        doc.put("open", p.open);
        try {
            return JSON.writerWithDefaultPrettyPrinter().writeValueAsBytes(doc);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** A pointer of this format or format 1; its position in the log, -1 for format 1. */
    private static Latest parse(byte[] content) throws ProgressException {
        try {
            Map<String, Object> doc =
                    JSON.readValue(content, new TypeReference<Map<String, Object>>() {});
            int format = ((Number) doc.getOrDefault("format", 1)).intValue();
            if (format > FORMAT) {
                throw new ProgressException(
                        "the completion pointer is format "
                                + format
                                + ", written by a newer release;"
                                + " this one reads up to format "
                                + FORMAT
                                + " and leaves it alone",
                        null);
            }
            Object through = doc.get("completeThroughMillis");
            long completeThrough =
                    through == null ? Long.MIN_VALUE : ((Number) through).longValue();
            String pipeline = (String) doc.get("pipeline");
            int jobVersion = ((Number) doc.get("jobVersion")).intValue();
            if (format == 1) {
                // Its marks mixed runs and kinds (the defect format 2 fixes): keep the pointer,
                // drop the marks. Windows before it have no manifests; every window with parts from
                // it on gets one.
                ManifestSpan fromHere =
                        completeThrough > 0
                                ? new ManifestSpan(completeThrough, Long.MIN_VALUE)
                                : ManifestSpan.NONE;
                return new Latest(
                        -1,
                        new Progress(
                                pipeline,
                                jobVersion,
                                -1,
                                completeThrough,
                                fromHere,
                                new TreeMap<>(),
                                new TreeMap<>()),
                        content);
            }
            Map<String, RunMarks> runs = new TreeMap<>();
            Map<String, Map<String, Object>> rawRuns =
                    JSON.convertValue(doc.get("runs"), new TypeReference<>() {});
            rawRuns.forEach(
                    (id, r) ->
                            runs.put(
                                    id,
                                    new RunMarks(
                                            ((Number) r.get("parallelism")).intValue(),
                                            JSON.convertValue(
                                                    r.get("committedThrough"),
                                                    new TypeReference<TreeMap<Integer, Long>>() {}),
                                            ((Number) r.get("lastWindowEndMillis")).longValue(),
                                            ((Number) r.get("updatedMillis")).longValue())));
            TreeMap<Long, TreeMap<Integer, PartEntry>> open =
                    JSON.convertValue(doc.get("open"), new TypeReference<>() {});
            ManifestSpan manifests =
                    new ManifestSpan(
                            ((Number) doc.getOrDefault("manifestsFromMillis", Long.MIN_VALUE))
                                    .longValue(),
                            ((Number) doc.getOrDefault("lastManifestMillis", Long.MIN_VALUE))
                                    .longValue());
            return new Latest(
                    ((Number) doc.get("sequence")).longValue(),
                    new Progress(
                            pipeline,
                            jobVersion,
                            ((Number) doc.get("schemaVersion")).intValue(),
                            completeThrough,
                            manifests,
                            runs,
                            new TreeMap<>(open)),
                    content);
        } catch (IOException | RuntimeException e) {
            if (e instanceof ProgressException p) {
                throw p;
            }
            throw new ProgressException(
                    "the completion pointer cannot be read: "
                            + new String(
                                    content,
                                    0,
                                    Math.min(content.length, 200),
                                    StandardCharsets.UTF_8),
                    e);
        }
    }

    /**
     * The parts of one window as its manifest lists them, from what was recorded and, for anything
     * not, the store itself. A window with every bucket recorded has nothing else to find, so it
     * costs no listing: that is the common case, a request per window saved.
     */
    static Map<Integer, PartEntry> partsOf(
            ObjectStore store, Scope scope, long window, Map<Integer, PartEntry> recorded)
            throws IOException {
        Map<Integer, PartEntry> parts = new TreeMap<>(recorded);
        if (parts.size() == scope.buckets()) {
            return parts;
        }
        List<String> listed = new ArrayList<>();
        store.list(
                ObjectKeys.windowPrefix(
                        scope.kind(),
                        scope.pipeline(),
                        scope.jobVersion(),
                        scope.schemaVersion(),
                        window),
                o -> listed.add(o.key()));
        for (String key : listed) {
            Optional<ObjectKeys.PartKey> p = ObjectKeys.parse(key);
            if (p.isPresent() && !parts.containsKey(p.get().bucket())) {
                Optional<ObjectStore.ObjectInfo> head = store.head(key);
                if (head.isPresent()) {
                    Map<String, String> md = head.get().metadata();
                    parts.put(
                            p.get().bucket(),
                            new PartEntry(
                                    key,
                                    md.getOrDefault(PartMetadata.FINGERPRINT, ""),
                                    Long.parseLong(md.getOrDefault(PartMetadata.ROWS, "0"))));
                }
            }
        }
        return parts;
    }
}
