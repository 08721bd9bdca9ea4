package dev.snapshots.cli.page;

import dev.snapshots.cli.Audit;
import dev.snapshots.cli.StoreScan;
import dev.snapshots.key.ObjectKeys;
import dev.snapshots.key.ObjectKeys.PartKey;
import dev.snapshots.key.PartKind;
import dev.snapshots.progress.CompletionPointer;
import dev.snapshots.progress.VersionIdentity;
import dev.snapshots.progress.WindowManifest;
import dev.snapshots.store.ObjectStore;
import dev.snapshots.store.StoreSpec;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Optional;
import java.util.TreeMap;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.apache.flink.annotation.Internal;

/**
 * What the store page shows, read once: the audit's listing of the store (or of the days from
 * {@code --since}) and its findings, each job version's pointer, promotion and identity, staged
 * uploads, divergence evidence and collapse records. The state of each (window, bucket) is worked
 * out as the page is drawn ({@link #cell}), so a large store is never held twice.
 */
@Internal
public final class StorePage {
    /**
     * One (window, bucket), or one window with {@code bucket} -1, of one job version and schema.
     */
    record CellKey(
            PartKind kind, String pipeline, int jobVersion, int schema, long window, int bucket) {
        static CellKey of(PartKey p) {
            return new CellKey(
                    p.kind(),
                    p.pipeline(),
                    p.jobVersion(),
                    p.schemaVersion(),
                    p.windowStartMillis(),
                    p.bucket());
        }

        static CellKey of(ObjectKeys.WindowKey w) {
            return new CellKey(
                    w.kind(),
                    w.pipeline(),
                    w.jobVersion(),
                    w.schemaVersion(),
                    w.windowStartMillis(),
                    -1);
        }
    }

    /** A finding an operator acknowledged, and who did, when and why. */
    public record Acknowledged(Audit.Finding finding, Map<String, Object> acknowledgement) {}

    /** One (window, bucket) as drawn: its state, and what its label tells. */
    public record Cell(
            int bucket,
            CellState state,
            List<PartKey> objects,
            Optional<StoreScan.PartInfo> read,
            Optional<WindowManifest.Listed> listed,
            List<Audit.Finding> findings,
            List<Acknowledged> acknowledged,
            List<ObjectStore.StagedInfo> staged,
            List<String> collapsedBy) {}

    /** A job version's windows of one schema: one grid on the page. */
    public static final class Grid {
        public final StoreScan.Version version;
        public final int schema;

        /** Listed windows from {@code since} on, and the windows only a finding names. */
        public final NavigableMap<Long, StoreScan.Window> windows;

        public final Optional<CompletionPointer.State> pointer;

        /** Why the pointer could not be read, if it could not. */
        public final Optional<String> pointerProblem;

        public final Optional<VersionIdentity> identity;

        /** The version {@code promote} set for the pipeline, if any. */
        public final Optional<Integer> current;

        /** B: the identity's, else what the manifests and keys say. */
        public final int buckets;

        /** B, or more where a stray object names a bucket beyond it. */
        public final int columns;

        public final long windowMillis;

        Grid(
                StoreScan.Version version,
                int schema,
                NavigableMap<Long, StoreScan.Window> windows,
                Optional<CompletionPointer.State> pointer,
                Optional<String> pointerProblem,
                Optional<VersionIdentity> identity,
                Optional<Integer> current) {
            this.version = version;
            this.schema = schema;
            this.windows = windows;
            this.pointer = pointer;
            this.pointerProblem = pointerProblem;
            this.identity = identity;
            this.current = current;
            this.buckets =
                    identity.map(VersionIdentity::buckets)
                            .orElseGet(() -> observedBuckets(windows));
            this.columns =
                    Math.max(
                            buckets,
                            windows.values().stream()
                                    .flatMap(w -> w.parts.keySet().stream())
                                    .mapToInt(b -> b + 1)
                                    .max()
                                    .orElse(0));
            this.windowMillis =
                    identity.map(VersionIdentity::windowLengthMillis)
                            .orElseGet(() -> observedWindowMillis(windows));
        }

        /**
         * Whether readers see the window complete: the pointer passed it (or, with none, its
         * manifest exists).
         */
        public boolean complete(StoreScan.Window w) {
            return pointer.isPresent()
                    ? w.start < pointer.get().completeThroughMillis()
                    : w.manifest.isPresent();
        }

        public boolean isCurrent() {
            return current.isPresent() && current.get() == version.jobVersion();
        }

        /** Unique in the page: "telemetry-v1-s1", "dl-telemetry-v1-s1". */
        public String anchor() {
            return (version.kind() == PartKind.DEAD_LETTER ? "dl-" : "")
                    + version.pipeline()
                    + "-v"
                    + version.jobVersion()
                    + "-s"
                    + schema;
        }

        public String windowAnchor(long window) {
            return "w-" + anchor() + "-" + window / 60_000;
        }

        public String cellAnchor(long window, int bucket) {
            return "c-" + anchor() + "-" + window / 60_000 + "-" + bucket;
        }

        private static int observedBuckets(Map<Long, StoreScan.Window> windows) {
            Map<Integer, Long> counts =
                    windows.values().stream()
                            .flatMap(
                                    w ->
                                            w.manifest.isPresent()
                                                    ? java.util.stream.Stream.of(
                                                            w.manifest.get().buckets())
                                                    : w.allParts().stream()
                                                            .map(PartKey::bucketCount))
                            .collect(
                                    Collectors.groupingBy(
                                            Function.identity(), Collectors.counting()));
            return counts.entrySet().stream()
                    .max(Map.Entry.comparingByValue())
                    .map(Map.Entry::getKey)
                    .orElse(1);
        }

        private static long observedWindowMillis(NavigableMap<Long, StoreScan.Window> windows) {
            return windows.values().stream()
                    .flatMap(w -> w.manifest.stream())
                    .mapToLong(WindowManifest.Manifest::windowLengthMillis)
                    .findFirst()
                    .orElse(300_000L);
        }
    }

    public final String store;

    /** The command an acknowledgement starts with: {@code snapshots audit URI [--endpoint E]}. */
    public final String auditCommand;

    public final Instant generated;
    public final Optional<Instant> since;
    public final Duration staleStaging;

    /** Whether the audit re-hashed every part's content, or trusted its metadata. */
    public final boolean readContent;

    public final String conformance;
    public final long objects;
    public final long parts;
    public final List<Grid> grids;
    public final List<Audit.Finding> findings;
    public final List<Acknowledged> acknowledged;
    public final List<ObjectStore.StagedInfo> staged;

    /** How long reading the store took, audit included. */
    public final Duration readTime;

    private final Map<CellKey, List<Audit.Finding>> findingsAt = new HashMap<>();
    private final Map<CellKey, List<Acknowledged>> acknowledgedAt = new HashMap<>();
    private final Map<CellKey, List<ObjectStore.StagedInfo>> stagedAt = new HashMap<>();
    private final Map<CellKey, List<String>> collapsesAt = new HashMap<>();
    private final Map<String, String> anchors = new HashMap<>();

    private StorePage(
            StoreSpec spec,
            Instant generated,
            Optional<Instant> since,
            Duration staleStaging,
            boolean readContent,
            Map<String, Object> audit,
            StoreScan listing,
            List<Grid> grids,
            List<ObjectStore.StagedInfo> staged) {
        this.store = spec.toString();
        this.auditCommand =
                "snapshots audit '"
                        + spec.uri()
                        + "'"
                        + spec.endpoint().map(e -> " --endpoint " + e).orElse("");
        this.generated = generated;
        this.since = since;
        this.staleStaging = staleStaging;
        this.readContent = readContent;
        this.conformance = String.valueOf(audit.get("conformance"));
        this.objects = listing.objects;
        this.parts = listing.parts;
        this.grids = grids;
        @SuppressWarnings("unchecked")
        List<Audit.Finding> open = (List<Audit.Finding>) audit.get("findings");
        this.findings = open;
        @SuppressWarnings("unchecked")
        List<Map<String, Object>> acked = (List<Map<String, Object>>) audit.get("acknowledged");
        List<Acknowledged> acknowledged = new ArrayList<>();
        for (Map<String, Object> a : acked) {
            @SuppressWarnings("unchecked")
            Map<String, Object> by = (Map<String, Object>) a.get("acknowledgement");
            acknowledged.add(new Acknowledged((Audit.Finding) a.get("finding"), by));
        }
        this.acknowledged = acknowledged;
        this.staged = staged;
        this.readTime = Duration.between(generated, Instant.now());
        for (Grid g : grids) {
            anchors.put(
                    ObjectKeys.progressKey(
                            g.version.kind(), g.version.pipeline(), g.version.jobVersion()),
                    g.anchor());
            anchors.put(g.version.name(), g.anchor());
        }
        for (Audit.Finding f : findings) {
            cellOf(f.where())
                    .ifPresent(c -> findingsAt.computeIfAbsent(c, k -> new ArrayList<>()).add(f));
        }
        for (Acknowledged a : acknowledged) {
            cellOf(a.finding().where())
                    .ifPresent(
                            c -> acknowledgedAt.computeIfAbsent(c, k -> new ArrayList<>()).add(a));
        }
        for (ObjectStore.StagedInfo s : staged) {
            ObjectKeys.parse(s.key())
                    .ifPresent(
                            p ->
                                    stagedAt.computeIfAbsent(CellKey.of(p), k -> new ArrayList<>())
                                            .add(s));
        }
        for (String record : listing.collapses) {
            ObjectKeys.parseCollapsed(record)
                    .ifPresent(
                            p ->
                                    collapsesAt
                                            .computeIfAbsent(CellKey.of(p), k -> new ArrayList<>())
                                            .add(
                                                    record.substring(
                                                            record.lastIndexOf('/') + 1,
                                                            record.length() - ".json".length())));
        }
    }

    /**
     * Reads the store: the audit (over the same listing the grids are drawn from), then pointers,
     * promotions, identities and staged uploads.
     */
    public static StorePage read(
            StoreSpec spec,
            ObjectStore store,
            Optional<Integer> onlyVersion,
            Optional<Instant> since,
            Duration staleStaging,
            boolean readContent)
            throws IOException {
        Instant started = Instant.now();
        StoreScan listing = Audit.listing(store, onlyVersion, since);
        Map<String, Object> audit = Audit.scan(store, listing, since, staleStaging, readContent);
        long sinceMillis = since.map(Instant::toEpochMilli).orElse(Long.MIN_VALUE);
        Map<String, Integer> current = StoreScan.currentVersions(store);
        List<ObjectStore.StagedInfo> staged = new ArrayList<>();
        store.listStaged("", staged::add);
        staged.sort(Comparator.comparing(ObjectStore.StagedInfo::key));
        // A window removed whole, parts and manifest, is still a row: its missing manifest names
        // it; so is a window whose only object is a part staged and not published.
        List<ObjectKeys.WindowKey> rows = new ArrayList<>();
        for (Audit.Finding f : findingsAndAcknowledged(audit)) {
            ObjectKeys.parseManifest(f.where()).ifPresent(rows::add);
        }
        for (ObjectStore.StagedInfo s : staged) {
            ObjectKeys.parse(s.key()).map(PartKey::window).ifPresent(rows::add);
        }
        Map<StoreScan.Version, Map<Integer, List<Long>>> named = new HashMap<>();
        for (ObjectKeys.WindowKey w : rows) {
            if (w.windowStartMillis() >= sinceMillis) {
                named.computeIfAbsent(
                                new StoreScan.Version(w.kind(), w.pipeline(), w.jobVersion()),
                                v -> new HashMap<>())
                        .computeIfAbsent(w.schemaVersion(), s -> new ArrayList<>())
                        .add(w.windowStartMillis());
            }
        }
        List<Grid> grids = new ArrayList<>();
        for (Map.Entry<StoreScan.Version, Map<Integer, Map<Long, StoreScan.Window>>> v :
                listing.versions.entrySet()) {
            StoreScan.Version version = v.getKey();
            Optional<CompletionPointer.State> pointer = Optional.empty();
            Optional<String> problem = Optional.empty();
            try {
                pointer =
                        CompletionPointer.state(
                                store, version.kind(), version.pipeline(), version.jobVersion());
            } catch (CompletionPointer.ProgressException e) {
                problem = Optional.of(e.getMessage());
            }
            Optional<VersionIdentity> identity;
            try {
                identity =
                        VersionIdentity.read(
                                store, version.kind(), version.pipeline(), version.jobVersion());
            } catch (IOException | RuntimeException e) {
                identity = Optional.empty(); // the page says "none recorded"; the job refuses such
            }
            for (Map.Entry<Integer, Map<Long, StoreScan.Window>> schema : v.getValue().entrySet()) {
                NavigableMap<Long, StoreScan.Window> windows =
                        new TreeMap<>(schema.getValue()).tailMap(sinceMillis, true);
                for (long w :
                        named.getOrDefault(version, Map.of())
                                .getOrDefault(schema.getKey(), List.of())) {
                    windows.putIfAbsent(w, new StoreScan.Window(w));
                }
                grids.add(
                        new Grid(
                                version,
                                schema.getKey(),
                                windows,
                                pointer,
                                problem,
                                identity,
                                Optional.ofNullable(current.get(version.pipeline()))));
            }
        }
        // Snapshots first, then dead letters; within each, by pipeline and version.
        grids.sort(
                Comparator.comparing((Grid g) -> g.version.kind())
                        .thenComparing(g -> g.version.pipeline())
                        .thenComparingInt(g -> g.version.jobVersion())
                        .thenComparingInt(g -> g.schema));
        return new StorePage(
                spec, started, since, staleStaging, readContent, audit, listing, grids, staged);
    }

    @SuppressWarnings("unchecked")
    private static List<Audit.Finding> findingsAndAcknowledged(Map<String, Object> audit) {
        List<Audit.Finding> all = new ArrayList<>((List<Audit.Finding>) audit.get("findings"));
        for (Map<String, Object> a : (List<Map<String, Object>>) audit.get("acknowledged")) {
            all.add((Audit.Finding) a.get("finding"));
        }
        return all;
    }

    /** The cell (a part's) or row (a manifest's) a finding's place is, if it is one. */
    private static Optional<CellKey> cellOf(String where) {
        Optional<PartKey> part =
                ObjectKeys.parse(where).or(() -> ObjectKeys.parseDivergence(where));
        if (part.isPresent()) {
            return part.map(CellKey::of);
        }
        return ObjectKeys.parseManifest(where).map(CellKey::of);
    }

    /** The grid that draws the cell's window, if the page draws it. */
    private Optional<Grid> drawnIn(CellKey c) {
        return grids.stream()
                .filter(
                        g ->
                                g.version.kind() == c.kind()
                                        && g.version.pipeline().equals(c.pipeline())
                                        && g.version.jobVersion() == c.jobVersion()
                                        && g.schema == c.schema()
                                        && g.windows.containsKey(c.window()))
                .findFirst();
    }

    /** Where on the page a finding points: its cell, its window's row, its grid, or nowhere. */
    public Optional<String> anchorOf(Audit.Finding f) {
        Optional<CellKey> cell = cellOf(f.where());
        if (cell.isPresent()) {
            CellKey c = cell.get();
            return drawnIn(c)
                    .map(
                            g ->
                                    c.bucket() < 0
                                            ? g.windowAnchor(c.window())
                                            : g.cellAnchor(c.window(), c.bucket()));
        }
        return Optional.ofNullable(anchors.get(f.where()));
    }

    /**
     * What a staged upload is for: a part published since (what is left is for the staging
     * retention), a part not published (at risk), or neither (a conformance probe, or a part of a
     * window the page does not draw).
     */
    public String stagedFor(ObjectStore.StagedInfo staged) {
        Optional<PartKey> part = ObjectKeys.parse(staged.key());
        if (part.isEmpty()) {
            return staged.key().startsWith(ObjectKeys.CONFORMANCE_PREFIX)
                    ? "a conformance probe's"
                    : "not a part's";
        }
        CellKey c = CellKey.of(part.get());
        return drawnIn(c)
                .map(
                        g ->
                                g
                                                .windows
                                                .get(c.window())
                                                .parts
                                                .getOrDefault(c.bucket(), List.of())
                                                .stream()
                                                .anyMatch(p -> p.key().equals(staged.key()))
                                        ? "published since: left for the staging retention"
                                        : "NOT PUBLISHED")
                .orElse("a part of a window not drawn here");
    }

    /** The findings on a window's row itself (its manifest), open and acknowledged. */
    public List<Audit.Finding> windowFindings(Grid g, long window) {
        CellKey row = key(g, window, -1);
        List<Audit.Finding> all = new ArrayList<>(findingsAt.getOrDefault(row, List.of()));
        acknowledgedAt.getOrDefault(row, List.of()).forEach(a -> all.add(a.finding()));
        return all;
    }

    /** One (window, bucket), its state decided: see {@link CellState} for the order. */
    public Cell cell(Grid g, StoreScan.Window w, int bucket) {
        CellKey key = key(g, w.start, bucket);
        List<PartKey> objects = w.parts.getOrDefault(bucket, List.of());
        List<Audit.Finding> open = findingsAt.getOrDefault(key, List.of());
        List<Acknowledged> acked = acknowledgedAt.getOrDefault(key, List.of());
        List<ObjectStore.StagedInfo> staged =
                objects.isEmpty() ? stagedAt.getOrDefault(key, List.of()) : List.of();
        List<String> collapsedBy = collapsesAt.getOrDefault(key, List.of());
        Optional<WindowManifest.Listed> listed =
                w.manifest.flatMap(m -> Optional.ofNullable(m.parts().get(bucket)));
        boolean complete = g.complete(w);
        // A complete window's manifest says which buckets had rows; without one (deleted), a
        // bucket with no object may have lost it.
        boolean lost =
                objects.isEmpty()
                        && complete
                        && bucket < g.buckets
                        && (listed.isPresent() || w.manifest.isEmpty());
        CellState state;
        if (has(open, "divergence")) {
            state = CellState.DIVERGENT;
        } else if (has(open, "missing-part") || (lost && acked.isEmpty())) {
            state = CellState.MISSING;
        } else if (open.stream().anyMatch(f -> !f.kind().equals("stale-staging"))) {
            state = CellState.FINDING;
        } else if (!staged.isEmpty() && acked.isEmpty()) {
            state = CellState.STAGED;
        } else if (!acked.isEmpty()) {
            state = CellState.ACKNOWLEDGED;
        } else if (!objects.isEmpty()) {
            state = collapsedBy.isEmpty() ? CellState.PUBLISHED : CellState.COLLAPSED;
        } else {
            state = complete ? CellState.EMPTY : CellState.PENDING;
        }
        return new Cell(
                bucket,
                state,
                objects,
                objects.isEmpty()
                        ? Optional.empty()
                        : Optional.ofNullable(w.read.get(objects.get(0).key())),
                listed,
                open,
                acked,
                staged,
                collapsedBy);
    }

    private static CellKey key(Grid g, long window, int bucket) {
        return new CellKey(
                g.version.kind(),
                g.version.pipeline(),
                g.version.jobVersion(),
                g.schema,
                window,
                bucket);
    }

    private static boolean has(List<Audit.Finding> findings, String kind) {
        return findings.stream().anyMatch(f -> f.kind().equals(kind));
    }
}
