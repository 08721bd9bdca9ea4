package dev.snapshots.cli;

import dev.snapshots.key.ObjectKeys;
import dev.snapshots.key.ObjectKeys.PartKey;
import dev.snapshots.key.PartKind;
import dev.snapshots.key.PartMetadata;
import dev.snapshots.progress.CompletionPointer;
import dev.snapshots.progress.CurrentVersion;
import dev.snapshots.progress.WindowManifest;
import dev.snapshots.store.ObjectStore;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.TreeMap;
import org.apache.flink.annotation.Internal;

/**
 * What a store holds, grouped the way a reader thinks of it: job version, schema, window, bucket.
 * The one listing model the audit, inspect, the demo and the reference read; keys are taken apart
 * by {@link ObjectKeys} only.
 *
 * <p>A full scan lists the whole store. One from a moment on ({@link #since}) walks down the
 * directories to the dates it needs, so its cost does not grow with history; it does not see
 * objects outside the windows' directories.
 */
@Internal
public final class StoreScan {
    /** One (kind, pipeline, job version) of the store. */
    public record Version(PartKind kind, String pipeline, int jobVersion)
            implements Comparable<Version> {
        public String name() {
            return kind.prefix() + pipeline + " v=" + jobVersion;
        }

        @Override
        public int compareTo(Version o) {
            return name().compareTo(o.name());
        }
    }

    /**
     * One window's objects as listed: parts by bucket (more than one is a duplicate), and its
     * manifest.
     */
    public static final class Window {
        public final long start;
        public final Map<Integer, List<PartKey>> parts = new TreeMap<>();
        public Optional<WindowManifest.Manifest> manifest = Optional.empty();

        /**
         * What each part's metadata said when the audit read it, by key: the audit reads every part
         * it checks, and the store page shows what it read rather than read it again.
         */
        public final Map<String, PartInfo> read = new TreeMap<>();

        /** Dead letters by reason, counted by the audit as it decodes the window's parts. */
        public final Map<String, Long> deadLetterReasons = new TreeMap<>();

        public Window(long start) {
            this.start = start;
        }

        public List<PartKey> allParts() {
            return parts.values().stream().flatMap(List::stream).toList();
        }
    }

    /** What a part's metadata says: one HEAD. */
    public record PartInfo(
            long size,
            long rows,
            String fingerprint,
            String writerJob,
            String writerHost,
            String writerTask) {
        public static PartInfo of(ObjectStore store, PartKey part) throws IOException {
            return of(
                    store.head(part.key())
                            .orElse(new ObjectStore.ObjectInfo(part.key(), 0, "", Map.of())));
        }

        public static PartInfo of(ObjectStore.ObjectInfo head) {
            Map<String, String> md = head.metadata();
            return new PartInfo(
                    head.size(),
                    Long.parseLong(md.getOrDefault(PartMetadata.ROWS, "0")),
                    md.getOrDefault(PartMetadata.FINGERPRINT, ""),
                    md.getOrDefault(PartMetadata.WRITER_JOB, ""),
                    md.getOrDefault(PartMetadata.WRITER_HOST, ""),
                    md.getOrDefault(PartMetadata.WRITER_TASK, ""));
        }
    }

    /** Each version's windows, by schema version, then window start. */
    public final Map<Version, Map<Integer, Map<Long, Window>>> versions = new TreeMap<>();

    /**
     * Divergence evidence keys: all of them, or those of the days a scan from a moment on walks.
     */
    public final List<String> divergences = new ArrayList<>();

    /** Collapse records ({@link ObjectKeys#collapsedKey}), of the same extent as the evidence. */
    public final List<String> collapses = new ArrayList<>();

    /** Keys that are not the sink's (full scans); the protocol's own objects are not among them. */
    public final List<String> outside = new ArrayList<>();

    public long objects;
    public long parts;

    private StoreScan() {}

    /** Everything, or one job version's windows. */
    public static StoreScan all(ObjectStore store, Optional<Integer> onlyVersion)
            throws IOException {
        StoreScan scan = new StoreScan();
        List<String> keys = new ArrayList<>();
        store.list("", o -> keys.add(o.key()));
        for (String key : keys) {
            if (key.startsWith(ObjectKeys.DIVERGENCE_PREFIX)) {
                scan.divergences.add(key);
            } else if (key.startsWith(ObjectKeys.COLLAPSED_PREFIX)) {
                scan.collapses.add(key);
            } else {
                scan.add(store, key, onlyVersion);
            }
        }
        return scan;
    }

    /** The windows of days ending after {@code sinceMillis}: walked down to, never listed whole. */
    public static StoreScan since(
            ObjectStore store, Optional<Integer> onlyVersion, long sinceMillis) throws IOException {
        StoreScan scan = new StoreScan();
        for (String date : dateDirectories(store, onlyVersion)) {
            OptionalLong day = ObjectKeys.dayStart(date);
            if (day.isEmpty() || day.getAsLong() + 86_400_000L > sinceMillis) {
                List<String> keys = new ArrayList<>();
                store.list(date, o -> keys.add(o.key()));
                for (String key : keys) {
                    scan.add(store, key, onlyVersion);
                }
                // Evidence and collapse records spell out their part's key after their prefix.
                store.list(ObjectKeys.DIVERGENCE_PREFIX + date, o -> scan.divergences.add(o.key()));
                store.list(ObjectKeys.COLLAPSED_PREFIX + date, o -> scan.collapses.add(o.key()));
            }
        }
        return scan;
    }

    /** One version's windows of one schema, if it has any. */
    public Map<Long, Window> windows(Version version, int schemaVersion) {
        return versions.getOrDefault(version, Map.of()).getOrDefault(schemaVersion, Map.of());
    }

    /** The pointer of a version, as readers see it. */
    public static Optional<Long> completeThrough(ObjectStore store, Version v) throws IOException {
        return CompletionPointer.read(store, v.kind(), v.pipeline(), v.jobVersion());
    }

    /** The job version readers follow, per pipeline that has promoted one. */
    public static Map<String, Integer> currentVersions(ObjectStore store) throws IOException {
        Map<String, Integer> current = new TreeMap<>();
        List<String> pipelines = new ArrayList<>();
        store.listDirectories("", pipelines::add);
        for (String dir : pipelines) {
            String pipeline = dir.substring(0, dir.length() - 1);
            if (!pipeline.startsWith("_")) {
                CurrentVersion.read(store, pipeline).ifPresent(v -> current.put(pipeline, v));
            }
        }
        return current;
    }

    private void add(ObjectStore store, String key, Optional<Integer> onlyVersion)
            throws IOException {
        Optional<PartKey> part = ObjectKeys.parse(key);
        Optional<ObjectKeys.WindowKey> manifest = ObjectKeys.parseManifest(key);
        ObjectKeys.WindowKey w = part.map(PartKey::window).orElse(manifest.orElse(null));
        if (w == null) {
            if (!ObjectKeys.isProtocolObject(key)) {
                outside.add(key);
            }
            return;
        }
        if (onlyVersion.isPresent() && onlyVersion.get() != w.jobVersion()) {
            return;
        }
        objects++;
        Window window =
                versions.computeIfAbsent(
                                new Version(w.kind(), w.pipeline(), w.jobVersion()),
                                v -> new TreeMap<>())
                        .computeIfAbsent(w.schemaVersion(), s -> new TreeMap<>())
                        .computeIfAbsent(w.windowStartMillis(), Window::new);
        if (part.isPresent()) {
            parts++;
            window.parts
                    .computeIfAbsent(part.get().bucket(), b -> new ArrayList<>())
                    .add(part.get());
        } else {
            window.manifest = WindowManifest.read(store, key);
        }
    }

    /** Every version's {@code date=} directories, walked down from the root. */
    private static List<String> dateDirectories(ObjectStore store, Optional<Integer> onlyVersion)
            throws IOException {
        List<String> dates = new ArrayList<>();
        for (PartKind kind : PartKind.values()) {
            for (String pipeline : children(store, kind.prefix())) {
                if (pipeline.substring(kind.prefix().length()).startsWith("_")) {
                    continue; // the store's own prefixes: _deadletter, _divergence, _staging,
                    // _audit
                }
                for (String version : children(store, pipeline)) {
                    if (onlyVersion.isEmpty()
                            || version.endsWith("/v=" + onlyVersion.get() + "/")) {
                        for (String schema : children(store, version)) {
                            dates.addAll(children(store, schema));
                        }
                    }
                }
            }
        }
        return dates;
    }

    private static List<String> children(ObjectStore store, String prefix) throws IOException {
        List<String> out = new ArrayList<>();
        store.listDirectories(prefix, out::add);
        return out;
    }
}
