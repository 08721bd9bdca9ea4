package dev.snapshots.progress;

import dev.snapshots.key.ObjectKeys;
import dev.snapshots.key.PartKind;
import dev.snapshots.store.ObjectStore;
import dev.snapshots.store.ObjectStore.VersionedContent;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.ObjectMapper;

/**
 * The job version readers of a pipeline follow: {@code {pipeline}/_current.json}. A replay writes
 * version N+1 beside N; readers switch when it is promoted. Promotion moves this pointer by
 * compare-and-swap only when the target's history covers the current version's (or, before any
 * version is current, every other version's in the store): it starts no later (its first window
 * with a manifest) and is complete no less far (its completion pointer). Otherwise readers would
 * lose windows, which only a forced promotion accepts. No lock: the swap is conditional on the
 * version read, and a promotion that loses it says so. Each promotion also leaves a record that
 * query engines read ({@link ObjectKeys#promotionKey}): the newest is the version views select.
 */
@PublicEvolving
public final class CurrentVersion {
    private static final ObjectMapper JSON = new ObjectMapper();

    /** What a promotion did: {@code promoted} false means refused, and {@code reason} says why. */
    public record Promotion(boolean promoted, Optional<Integer> before, String reason) {}

    /** The windows a version holds complete: from its first manifest up to its pointer. */
    private record History(int jobVersion, int schemaVersion, long fromMillis, long throughMillis) {
        static Optional<History> of(ObjectStore store, String pipeline, int jobVersion)
                throws IOException {
            Optional<Long> through =
                    CompletionPointer.read(store, PartKind.SNAPSHOT, pipeline, jobVersion);
            if (through.isEmpty()) {
                return Optional.empty();
            }
            return CompletionPointer.state(store, PartKind.SNAPSHOT, pipeline, jobVersion)
                    .map(
                            s ->
                                    new History(
                                            jobVersion,
                                            s.schemaVersion(),
                                            s.manifestsFromMillis(),
                                            through.get()));
        }
    }

    private CurrentVersion() {}

    public static Optional<Integer> read(ObjectStore store, String pipeline) throws IOException {
        Optional<VersionedContent> current = store.get(ObjectKeys.currentVersionKey(pipeline));
        return current.isPresent() ? Optional.of(version(current.get())) : Optional.empty();
    }

    /** Promotes {@code jobVersion} only if readers would lose no window: see the class doc. */
    public static Promotion promote(ObjectStore store, String pipeline, int jobVersion)
            throws IOException {
        return promote(store, pipeline, jobVersion, false);
    }

    /**
     * @param force promote even if readers lose windows (the reason names them); a version with no
     *     complete window is refused regardless
     */
    public static Promotion promote(
            ObjectStore store, String pipeline, int jobVersion, boolean force) throws IOException {
        String key = ObjectKeys.currentVersionKey(pipeline);
        Optional<VersionedContent> current = store.get(key);
        Optional<Integer> before = current.map(CurrentVersion::version);
        if (before.equals(Optional.of(jobVersion))) {
            // A promotion that stopped between the swap and its record finishes here.
            record(store, doc(current.get()));
            return new Promotion(true, before, "v=" + jobVersion + " is already current");
        }
        Optional<History> target = History.of(store, pipeline, jobVersion);
        if (target.isEmpty()) {
            return new Promotion(false, before, "v=" + jobVersion + " has no complete window yet");
        }
        List<String> losses = new ArrayList<>();
        for (int other :
                before.isPresent()
                        ? List.of(before.get())
                        : otherVersions(store, pipeline, jobVersion)) {
            Optional<History> covered = History.of(store, pipeline, other);
            if (covered.isPresent()) {
                losses.addAll(losses(store, pipeline, target.get(), covered.get()));
            }
        }
        if (!losses.isEmpty() && !force) {
            return new Promotion(
                    false, before, String.join("; ", losses) + "; --force promotes anyway");
        }
        long through = target.get().throughMillis();
        Map<String, Object> doc = new TreeMap<>();
        doc.put("pipeline", pipeline);
        doc.put("jobVersion", jobVersion);
        doc.put("promotedAt", Instant.now().toString());
        doc.put("completeThrough", Instant.ofEpochMilli(through).toString());
        // One more than the promotion it replaces (none, or one before 0.3: 0); the swap makes it
        // unique, and the readers' record of the newest promotion has the highest.
        doc.put("sequence", current.map(c -> doc(c).path("sequence").asLong()).orElse(0L) + 1);
        if (store.compareAndSwap(
                        key,
                        JSON.writerWithDefaultPrettyPrinter().writeValueAsBytes(doc),
                        current.map(VersionedContent::version))
                .isEmpty()) {
            return new Promotion(
                    false,
                    before,
                    "another promotion won the swap; read the current version again");
        }
        record(store, JSON.valueToTree(doc));
        return new Promotion(
                true,
                before,
                "v="
                        + jobVersion
                        + " is current (complete through "
                        + Instant.ofEpochMilli(through)
                        + ")"
                        + (losses.isEmpty()
                                ? ""
                                : ", forced although " + String.join("; ", losses)));
    }

    /** The pipeline's other job versions with a directory in the store. */
    private static List<Integer> otherVersions(ObjectStore store, String pipeline, int jobVersion)
            throws IOException {
        List<Integer> versions = new ArrayList<>();
        store.listDirectories(
                ObjectKeys.pipelinePrefix(pipeline),
                d ->
                        ObjectKeys.jobVersion(pipeline, d).stream()
                                .filter(v -> v != jobVersion)
                                .forEach(versions::add));
        return versions;
    }

    /**
     * What readers of {@code covered} would no longer see after moving to {@code target}: the
     * windows before the target's first one, and those after its pointer.
     */
    private static List<String> losses(
            ObjectStore store, String pipeline, History target, History covered)
            throws IOException {
        List<String> losses = new ArrayList<>();
        if (target.fromMillis() > covered.fromMillis()) {
            losses.add(
                    "v="
                            + target.jobVersion()
                            + " starts at "
                            + Instant.ofEpochMilli(target.fromMillis())
                            + ", after v="
                            + covered.jobVersion()
                            + ": "
                            + lost(
                                    store,
                                    pipeline,
                                    covered,
                                    covered.fromMillis(),
                                    Math.min(target.fromMillis(), covered.throughMillis())));
        }
        if (target.throughMillis() < covered.throughMillis()) {
            losses.add(
                    "v="
                            + target.jobVersion()
                            + " is complete through "
                            + Instant.ofEpochMilli(target.throughMillis())
                            + ", behind v="
                            + covered.jobVersion()
                            + " at "
                            + Instant.ofEpochMilli(covered.throughMillis())
                            + ": "
                            + lost(
                                    store,
                                    pipeline,
                                    covered,
                                    Math.max(target.throughMillis(), covered.fromMillis()),
                                    covered.throughMillis())
                            + "; let it catch up");
        }
        return losses;
    }

    /** The windows with parts of {@code version} in [from, to), as an operator reads them. */
    private static String lost(
            ObjectStore store, String pipeline, History version, long from, long to)
            throws IOException {
        int windows =
                WindowManifest.storedWindows(
                                store,
                                ObjectKeys.schemaPrefix(
                                        PartKind.SNAPSHOT,
                                        pipeline,
                                        version.jobVersion(),
                                        version.schemaVersion()),
                                from,
                                to)
                        .size();
        return "readers would lose "
                + Instant.ofEpochMilli(from)
                + " to "
                + Instant.ofEpochMilli(to)
                + " of v="
                + version.jobVersion()
                + ": "
                + windows
                + (windows == 1 ? " window" : " windows");
    }

    /**
     * {@code {pipeline}/promoted/{sequence}.json}, one line of JSON, for query engines: they skip
     * {@code _current.json}. Written after the swap, so readers move only once {@code
     * _current.json} has; a promotion that stops in between is finished by promoting the same
     * version again.
     */
    private static void record(ObjectStore store, JsonNode current) throws IOException {
        record(
                store,
                current.path("pipeline").asText(),
                current.path("jobVersion").asInt(),
                current.path("sequence").asLong(),
                current.path("promotedAt").asText(),
                current.path("completeThrough").asText());
    }

    /**
     * The record of sequence 0, which no promotion writes (they count from 1): the first job
     * version to complete a window is what readers see until a version is promoted, as a new
     * pipeline's readers expect. Written with that version's first window; a version that comes
     * later finds it there and changes nothing.
     */
    static void recordFirst(ObjectStore store, String pipeline, int jobVersion, Instant through)
            throws IOException {
        record(store, pipeline, jobVersion, 0, through.toString(), through.toString());
    }

    private static void record(
            ObjectStore store,
            String pipeline,
            int jobVersion,
            long sequence,
            String promotedAt,
            String completeThrough)
            throws IOException {
        Map<String, Object> line = new TreeMap<>();
        line.put("pipeline", pipeline);
        line.put("job_version", jobVersion);
        line.put("sequence", sequence);
        line.put("promoted_at", promotedAt);
        line.put("complete_through", completeThrough);
        store.putIfAbsent(
                ObjectKeys.promotionKey(pipeline, sequence),
                (JSON.writeValueAsString(line) + "\n").getBytes(StandardCharsets.UTF_8),
                Map.of());
    }

    private static int version(VersionedContent content) {
        return doc(content).path("jobVersion").asInt();
    }

    private static JsonNode doc(VersionedContent content) {
        try {
            return JSON.readTree(content.content());
        } catch (IOException e) {
            throw new UncheckedIOException("unreadable " + ObjectKeys.CURRENT_FILE, e);
        }
    }
}
