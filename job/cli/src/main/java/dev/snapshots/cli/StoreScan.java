package dev.snapshots.cli;

import dev.snapshots.key.ObjectKeys;
import dev.snapshots.key.ObjectKeys.PartKey;
import dev.snapshots.key.PartKind;
import dev.snapshots.progress.CompletionPointer;
import dev.snapshots.progress.CurrentVersion;
import dev.snapshots.key.PartMetadata;
import dev.snapshots.store.ObjectStore;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/** What a store holds, grouped the way a reader thinks of it: version, window, part. */
public final class StoreScan {
    /** One published part with what its metadata says. */
    public record Part(PartKey key, long size, long rows, String fingerprint, String writerJob) {}

    /** All parts of one (kind, pipeline, job version), by window, and its completion pointer. */
    public record Version(PartKind kind, String pipeline, int jobVersion, Optional<Long> completeThrough,
            Map<Long, List<Part>> windows) {
        long rows() {
            return windows.values().stream().flatMap(List::stream).mapToLong(Part::rows).sum();
        }

        long parts() {
            return windows.values().stream().mapToLong(List::size).sum();
        }
    }

    public final List<Version> versions = new ArrayList<>();
    public final List<String> divergences = new ArrayList<>();
    final List<String> other = new ArrayList<>();
    /** The job version readers follow, per pipeline that has promoted one. */
    final Map<String, Integer> current = new TreeMap<>();

    /** Lists everything; reads each part's metadata (one HEAD per part on S3). */
    public static StoreScan of(ObjectStore store) throws IOException {
        StoreScan scan = new StoreScan();
        List<String> keys = new ArrayList<>();
        store.list("", o -> keys.add(o.key()));
        Map<String, Map<Long, List<Part>>> byVersion = new TreeMap<>();
        Map<String, PartKey> sample = new TreeMap<>();
        for (String key : keys) {
            Optional<PartKey> parsed = ObjectKeys.parse(key);
            if (parsed.isPresent()) {
                PartKey p = parsed.get();
                Optional<ObjectStore.ObjectInfo> head = store.head(key);
                Map<String, String> md = head.map(ObjectStore.ObjectInfo::metadata).orElse(Map.of());
                long size = head.map(ObjectStore.ObjectInfo::size).orElse(0L);
                String id = p.kind() + "|" + p.pipeline() + "|" + p.jobVersion();
                sample.putIfAbsent(id, p);
                byVersion.computeIfAbsent(id, v -> new TreeMap<>())
                        .computeIfAbsent(p.windowStartMillis(), w -> new ArrayList<>())
                        .add(new Part(p, size, Long.parseLong(md.getOrDefault(PartMetadata.ROWS, "0")),
                                md.getOrDefault(PartMetadata.FINGERPRINT, ""), md.getOrDefault(PartMetadata.WRITER_JOB, "")));
            } else if (key.startsWith(ObjectKeys.DIVERGENCE_PREFIX)) {
                scan.divergences.add(key);
            } else if (ObjectKeys.currentVersionPipeline(key).isPresent()) {
                String pipeline = ObjectKeys.currentVersionPipeline(key).get();
                CurrentVersion.read(store, pipeline).ifPresent(v -> scan.current.put(pipeline, v));
            } else if (!ObjectKeys.isPointer(key)) {
                scan.other.add(key);
            }
        }
        for (Map.Entry<String, Map<Long, List<Part>>> v : byVersion.entrySet()) {
            PartKey p = sample.get(v.getKey());
            scan.versions.add(new Version(p.kind(), p.pipeline(), p.jobVersion(),
                    CompletionPointer.read(store, p.kind(), p.pipeline(), p.jobVersion()), v.getValue()));
        }
        return scan;
    }
}
