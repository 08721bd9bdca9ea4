package dev.snapshots.progress;

import dev.snapshots.key.ObjectKeys;
import dev.snapshots.key.PartKind;
import dev.snapshots.store.ObjectStore;
import dev.snapshots.store.ObjectStore.VersionedContent;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.ObjectMapper;

/**
 * The job version readers of a pipeline follow: {@code {pipeline}/_current.json}. A replay writes
 * version N+1 beside N; readers switch when it is promoted, and promotion moves this pointer by
 * compare-and-swap only when N+1's completion pointer has caught up with the current version's, so
 * readers never step back in time. No lock: the swap is conditional on the version read, and a
 * promotion that loses it says so.
 */
@PublicEvolving
public final class CurrentVersion {
    private static final ObjectMapper JSON = new ObjectMapper();

    /** What a promotion did: {@code promoted} false means refused, and {@code reason} says why. */
    public record Promotion(boolean promoted, Optional<Integer> before, String reason) {}

    private CurrentVersion() {}

    public static Optional<Integer> read(ObjectStore store, String pipeline) throws IOException {
        Optional<VersionedContent> current = store.get(ObjectKeys.currentVersionKey(pipeline));
        return current.isPresent() ? Optional.of(version(current.get())) : Optional.empty();
    }

    public static Promotion promote(ObjectStore store, String pipeline, int jobVersion)
            throws IOException {
        String key = ObjectKeys.currentVersionKey(pipeline);
        Optional<VersionedContent> current = store.get(key);
        Optional<Integer> before = current.map(CurrentVersion::version);
        if (before.equals(Optional.of(jobVersion))) {
            return new Promotion(true, before, "v=" + jobVersion + " is already current");
        }
        Optional<Long> target =
                CompletionPointer.read(store, PartKind.SNAPSHOT, pipeline, jobVersion);
        if (target.isEmpty()) {
            return new Promotion(false, before, "v=" + jobVersion + " has no complete window yet");
        }
        Optional<Long> now =
                before.isPresent()
                        ? CompletionPointer.read(store, PartKind.SNAPSHOT, pipeline, before.get())
                        : Optional.empty();
        if (now.isPresent() && target.get() < now.get()) {
            return new Promotion(
                    false,
                    before,
                    "v="
                            + jobVersion
                            + " is complete through "
                            + Instant.ofEpochMilli(target.get())
                            + ", behind v="
                            + before.get()
                            + " at "
                            + Instant.ofEpochMilli(now.get())
                            + ": let it catch up");
        }
        Map<String, Object> doc = new TreeMap<>();
        doc.put("pipeline", pipeline);
        doc.put("jobVersion", jobVersion);
        doc.put("promotedAt", Instant.now().toString());
        doc.put("completeThrough", Instant.ofEpochMilli(target.get()).toString());
        if (!store.compareAndSwap(
                key,
                JSON.writerWithDefaultPrettyPrinter().writeValueAsBytes(doc),
                current.map(VersionedContent::version))) {
            return new Promotion(
                    false,
                    before,
                    "another promotion won the swap; read the current version again");
        }
        return new Promotion(
                true,
                before,
                "v="
                        + jobVersion
                        + " is current (complete through "
                        + Instant.ofEpochMilli(target.get())
                        + ")");
    }

    private static int version(VersionedContent content) {
        try {
            return JSON.readTree(content.content()).path("jobVersion").asInt();
        } catch (IOException e) {
            throw new UncheckedIOException("unreadable " + ObjectKeys.CURRENT_FILE, e);
        }
    }
}
