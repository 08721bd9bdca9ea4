package dev.snapshots.cli;

import dev.snapshots.format.DeadLetterRows;
import dev.snapshots.format.PartEncoding;
import dev.snapshots.key.ObjectKeys;
import dev.snapshots.key.ObjectKeys.PartKey;
import dev.snapshots.key.PartKind;
import dev.snapshots.key.PartMetadata;
import dev.snapshots.progress.CompletionPointer;
import dev.snapshots.progress.VersionIdentity;
import dev.snapshots.progress.WindowManifest;
import dev.snapshots.store.ObjectStore;
import dev.snapshots.store.StoreConformance;
import dev.snapshots.store.StoreSpec;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericRecord;
import org.apache.flink.annotation.Internal;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.SerializationFeature;
import org.apache.flink.util.TimeUtils;

/**
 * {@code snapshots audit STORE_URI}: the deploy gate. Walks a store and names everything that
 * breaks the promise: a logical part held by more than one object; against each complete window's
 * manifest, a part missing, replaced or added; a complete window without a manifest; an object
 * whose content does not match its fingerprint; divergence evidence; objects outside the key
 * scheme; staged parts left behind; a pointer it cannot read, or none for a version with parts.
 * Exit 0 clean, 1 findings, 2 could not scan.
 *
 * <p>{@code --since} checks only windows from then on: the walk goes down the Hive-style
 * directories to the dates it needs, so a gate's cost follows the period checked, not the store's
 * history. A finding an operator has examined can be acknowledged ({@code --acknowledge ID --by WHO
 * --reason WHY}, kept under {@code _audit/acknowledged/}); it is then reported as such and no
 * longer fails the audit.
 *
 * <p>Memory holds one entry per logical part of the period checked: content is read and checked 16
 * objects at a time, a batch of about a thousand, judged in order.
 */
@Internal
public final class Audit {
    public static final String USAGE =
            String.join(
                    "\n",
                    "usage: snapshots audit STORE_URI [--endpoint URL] [--json] [--job-version N] [--since DURATION|DATE] [--stale-staging DURATION]",
                    "       snapshots audit STORE_URI [--endpoint URL] --acknowledge FINDING_ID --by WHO --reason WHY",
                    "",
                    "  STORE_URI                 file:///dir or s3://bucket/prefix",
                    "  --endpoint URL            S3-compatible endpoint, e.g. http://127.0.0.1:9000",
                    "  --json                    one JSON document instead of a table",
                    "  --job-version N           audit only this job version",
                    "  --since DURATION|DATE     only windows from this long ago (7d) or this day (2026-11-30) on [all]",
                    "  --stale-staging DURATION  parts staged longer than this and not published are findings [24h]",
                    "  --acknowledge FINDING_ID  record that a finding was examined (with --by and --reason); it no longer fails the audit",
                    "",
                    "exit status: 0 clean, 1 findings, 2 could not scan");

    /**
     * What the deploy gate checks: the last week of windows, every divergence and every staged
     * part.
     */
    public static final Duration GATE_PERIOD = Duration.ofDays(7);

    static final Duration STALE_STAGING = Duration.ofDays(1);
    private static final String ACKNOWLEDGED = ObjectKeys.AUDIT_PREFIX + "acknowledged/";
    private static final ObjectMapper JSON =
            new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

    /**
     * One problem, named so an operator knows what to look at; {@code id} is stable across audits.
     */
    public record Finding(String id, String kind, String where, String detail) {
        static Finding of(String kind, String where, String detail) {
            return new Finding(idOf(kind, where), kind, where, detail);
        }
    }

    private Audit() {}

    public static int run(String[] args, PrintStream out) {
        StoreArgs parsed =
                StoreArgs.parse(
                        args,
                        USAGE,
                        "job-version",
                        "since",
                        "stale-staging",
                        "acknowledge",
                        "by",
                        "reason");
        StoreSpec spec = parsed.store();
        Map<String, String> flags = parsed.flags();
        if (flags.containsKey("acknowledge")) {
            return acknowledge(spec, flags, out);
        }
        Optional<Integer> version = jobVersion(flags);
        Optional<Instant> since = Optional.ofNullable(flags.get("since")).map(Audit::since);
        Duration stale = staleStaging(flags);
        Map<String, Object> report;
        try (ObjectStore store = spec.open()) {
            report = scan(store, version, since, stale);
        } catch (IOException | RuntimeException e) {
            out.println("audit could not scan " + spec + ": " + e);
            return 2;
        }
        report.put("store", spec.toString());
        print(report, parsed.json(), out);
        return ((List<?>) report.get("findings")).isEmpty() ? 0 : 1;
    }

    /**
     * A gate before {@code action}: the unacknowledged findings of the windows the arguments
     * select, as the line that blocks it, or empty when there are none.
     *
     * @param auditArguments what follows {@code snapshots audit STORE_URI} to select the same
     *     windows, for the operator who lists them
     */
    public static Optional<String> gate(
            ObjectStore store,
            StoreSpec spec,
            String action,
            Optional<Integer> version,
            Optional<Instant> since,
            String auditArguments)
            throws IOException {
        List<Finding> found = findings(store, version, since);
        if (found.isEmpty()) {
            return Optional.empty();
        }
        return Optional.of(
                String.format(
                        Locale.ROOT,
                        "%s blocked by the audit of %s: %d findings, e.g. %s (snapshots audit %s%s"
                                + " lists them all; acknowledge one you have examined with"
                                + " --acknowledge); nothing was changed",
                        action,
                        spec,
                        found.size(),
                        found.get(0),
                        spec,
                        auditArguments));
    }

    /** The unacknowledged findings over the store's whole history, or from {@code since} on. */
    public static List<Finding> findings(ObjectStore store, Optional<Instant> since)
            throws IOException {
        return findings(store, Optional.empty(), since);
    }

    /** The unacknowledged findings of one job version, or of all, over the same period. */
    @SuppressWarnings("unchecked")
    public static List<Finding> findings(
            ObjectStore store, Optional<Integer> version, Optional<Instant> since)
            throws IOException {
        return (List<Finding>) scan(store, version, since, STALE_STAGING).get("findings");
    }

    /**
     * {@code --job-version N}, if given.
     *
     * @throws IllegalArgumentException with a message fit for the command line
     */
    static Optional<Integer> jobVersion(Map<String, String> flags) {
        try {
            return Optional.ofNullable(flags.get("job-version")).map(Integer::parseInt);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(
                    "--job-version must be a whole number, got '" + flags.get("job-version") + "'");
        }
    }

    /** {@code --stale-staging DURATION}, 24 hours when not given. */
    static Duration staleStaging(Map<String, String> flags) {
        return duration("stale-staging", flags.getOrDefault("stale-staging", "24h"));
    }

    /**
     * @throws IllegalArgumentException with a message fit for the command line
     */
    static Instant since(String value) {
        try {
            return LocalDate.parse(value).atStartOfDay(ZoneOffset.UTC).toInstant();
        } catch (DateTimeParseException e) {
            return Instant.now().minus(duration("since", value));
        }
    }

    private static Duration duration(String flag, String value) {
        try {
            return TimeUtils.parseDuration(value);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(
                    "--"
                            + flag
                            + " must be a duration like 12h or 7d, or a date like 2026-11-30, got '"
                            + value
                            + "'");
        }
    }

    public static Map<String, Object> scan(
            ObjectStore store,
            Optional<Integer> onlyVersion,
            Optional<Instant> since,
            Duration stale)
            throws IOException {
        return scan(store, listing(store, onlyVersion, since), since, stale, true);
    }

    /** The listing an audit of these arguments reads: all of it, or the days from {@code since}. */
    public static StoreScan listing(
            ObjectStore store, Optional<Integer> onlyVersion, Optional<Instant> since)
            throws IOException {
        return since.isPresent()
                ? StoreScan.since(store, onlyVersion, since.get().toEpochMilli())
                : StoreScan.all(store, onlyVersion);
    }

    /**
     * The audit of a listing already made ({@link #listing}), which the store page shares: each
     * part the audit reads leaves what its metadata said, and each dead-letter part its reasons, in
     * the listing's window.
     *
     * @param readContent re-hash every part's content (the audit's way); false trusts each snapshot
     *     part's metadata, so what only content shows (a fingerprint that lies, an unreadable part,
     *     content rewritten under its old metadata) goes unseen; dead letters are read either way
     */
    public static Map<String, Object> scan(
            ObjectStore store,
            StoreScan listing,
            Optional<Instant> since,
            Duration stale,
            boolean readContent)
            throws IOException {
        try (PartReader reader = new PartReader(store, readContent)) {
            return scanWith(store, listing, since, stale, reader);
        }
    }

    private static Map<String, Object> scanWith(
            ObjectStore store,
            StoreScan listing,
            Optional<Instant> since,
            Duration stale,
            PartReader reader)
            throws IOException {
        List<Finding> findings = new ArrayList<>();
        // The one property no listing shows: a store that ignores If-None-Match looks clean.
        StoreConformance.Verdict conformance = StoreConformance.probeIfWritable(store);
        conformance
                .violation()
                .ifPresent(
                        v ->
                                findings.add(
                                        Finding.of(
                                                "non-conforming-store",
                                                store.describe(),
                                                StoreConformance.refusal(conformance))));
        long sinceMillis = since.map(Instant::toEpochMilli).orElse(Long.MIN_VALUE);
        Map<String, Long> deadLetters = new TreeMap<>();
        for (Map.Entry<StoreScan.Version, Map<Integer, Map<Long, StoreScan.Window>>> v :
                listing.versions.entrySet()) {
            check(store, reader, v.getKey(), v.getValue(), sinceMillis, findings, deadLetters);
        }
        for (String key : listing.outside) {
            // A listing is not a snapshot of a live store (S3Proxy lists an in-flight PUT's
            // temporary file until it lands): only what is still stored is a finding.
            if (store.head(key).isPresent()) {
                findings.add(
                        Finding.of(
                                "outside-key-scheme",
                                key,
                                "not a part, manifest, pointer or evidence object"));
            }
        }
        store.list(
                ObjectKeys.DIVERGENCE_PREFIX,
                o ->
                        findings.add(
                                Finding.of(
                                        "divergence",
                                        o.key(),
                                        "two executions of the same work computed different content")));
        Instant cutoff = Instant.now().minus(stale);
        Map<String, List<ObjectStore.StagedInfo>> staleByPart = new TreeMap<>();
        store.listStaged(
                "",
                s -> {
                    if (s.started().isBefore(cutoff)) {
                        staleByPart.computeIfAbsent(s.key(), k -> new ArrayList<>()).add(s);
                    }
                });
        for (Map.Entry<String, List<ObjectStore.StagedInfo>> part : staleByPart.entrySet()) {
            // Published meanwhile (a failover staged the part again, and the second staging was
            // published), what is left is garbage the staging retention removes, not a part at
            // risk.
            if (store.head(part.getKey()).isEmpty()) {
                findings.add(
                        Finding.of(
                                "stale-staging",
                                part.getKey(),
                                "staged since "
                                        + part.getValue().stream()
                                                .map(ObjectStore.StagedInfo::started)
                                                .min(Comparator.naturalOrder())
                                                .orElseThrow()
                                        + " ("
                                        + part.getValue().stream()
                                                .map(ObjectStore.StagedInfo::handle)
                                                .toList()
                                        + ") and not published: a job"
                                        + " has been down or failing commits; the part is lost when the bucket's staging retention removes it"));
            }
        }
        Map<String, Map<String, Object>> acknowledged = acknowledged(store);
        Map<String, Object> report = new LinkedHashMap<>();
        report.put("conformance", conformance.toString());
        report.put("objects", listing.objects);
        report.put("parts", listing.parts);
        report.put("since", since.map(Instant::toString).orElse("all"));
        report.put("deadLetters", deadLetters);
        report.put("currentVersions", StoreScan.currentVersions(store));
        report.put(
                "findings",
                findings.stream().filter(f -> !acknowledged.containsKey(f.id())).toList());
        report.put(
                "acknowledged",
                findings.stream()
                        .filter(f -> acknowledged.containsKey(f.id()))
                        .map(f -> Map.of("finding", f, "acknowledgement", acknowledged.get(f.id())))
                        .toList());
        return report;
    }

    /**
     * Every window of one version, then the windows its pointer says complete that have no
     * manifest.
     */
    private static void check(
            ObjectStore store,
            PartReader reader,
            StoreScan.Version version,
            Map<Integer, Map<Long, StoreScan.Window>> bySchema,
            long sinceMillis,
            List<Finding> findings,
            Map<String, Long> deadLetters)
            throws IOException {
        String pointerKey =
                ObjectKeys.progressKey(version.kind(), version.pipeline(), version.jobVersion());
        Optional<CompletionPointer.State> pointer;
        try {
            pointer =
                    CompletionPointer.state(
                            store, version.kind(), version.pipeline(), version.jobVersion());
            if (pointer.isEmpty()) {
                missingPointer(pointerKey, bySchema, sinceMillis, findings);
            }
        } catch (CompletionPointer.ProgressException e) {
            findings.add(Finding.of("unreadable-pointer", pointerKey, e.getMessage()));
            pointer = Optional.empty();
        }
        if (bySchema.size() > 1) {
            findings.add(
                    Finding.of(
                            "schema-mix",
                            version.name(),
                            "schema versions "
                                    + bySchema.keySet()
                                    + " in one job version:"
                                    + " its readers read both; a new schema needs a new job version"));
        }
        for (Map.Entry<Integer, Map<Long, StoreScan.Window>> schema : bySchema.entrySet()) {
            List<StoreScan.Window> checked =
                    schema.getValue().values().stream()
                            .filter(w -> w.start >= sinceMillis)
                            .toList();
            // Windows a batch at a time: their parts read at once, then judged in order, so the
            // findings come out as from one reader and memory holds one batch's results.
            for (int from = 0; from < checked.size(); ) {
                int to = from;
                int parts = 0;
                while (to < checked.size() && (to == from || parts < PartReader.BATCH)) {
                    parts += checked.get(to++).allParts().size();
                }
                List<StoreScan.Window> batch = checked.subList(from, to);
                Map<String, PartRead> reads =
                        reader.readAll(batch.stream().flatMap(w -> w.allParts().stream()).toList());
                for (StoreScan.Window w : batch) {
                    checkWindow(w, reads, pointer, findings, deadLetters);
                }
                from = to;
            }
            if (pointer.isPresent() && pointer.get().schemaVersion() == schema.getKey()) {
                missingManifests(
                        store,
                        version,
                        schema.getKey(),
                        pointer.get(),
                        schema.getValue(),
                        sinceMillis,
                        findings);
            }
        }
    }

    /**
     * A version with parts and no pointer: deleted, or its committers never recorded progress.
     * Readers and promote then see none of it complete, and the audit cannot tell which windows
     * without a manifest are complete (each window is still compared with its manifest, see {@link
     * #checkWindow}), so it names them here, once, rather than as missing manifests.
     */
    private static void missingPointer(
            String pointerKey,
            Map<Integer, Map<Long, StoreScan.Window>> bySchema,
            long sinceMillis,
            List<Finding> findings) {
        List<StoreScan.Window> withParts =
                bySchema.values().stream()
                        .flatMap(windows -> windows.values().stream())
                        .filter(w -> w.start >= sinceMillis && !w.parts.isEmpty())
                        .toList();
        if (withParts.isEmpty()) {
            return;
        }
        List<Long> unjudged =
                withParts.stream()
                        .filter(w -> w.manifest.isEmpty())
                        .map(w -> w.start)
                        .sorted()
                        .toList();
        findings.add(
                Finding.of(
                        "missing-pointer",
                        pointerKey,
                        "no completion pointer (neither it nor its _progress/ log) for a job version with parts:"
                                + " readers and promote see none of it complete. Each manifest was still compared with the"
                                + " store; windows with parts: "
                                + withParts.size()
                                + ", with no manifest: "
                                + unjudged.size()
                                + (unjudged.isEmpty()
                                        ? ""
                                        : " ("
                                                + Instant.ofEpochMilli(unjudged.get(0))
                                                + " to "
                                                + Instant.ofEpochMilli(
                                                        unjudged.get(unjudged.size() - 1))
                                                + "), which cannot be judged complete without the pointer")
                                + ". Check whether the pointer was deleted (restore it from the bucket's object versions)"
                                + " or the job's Completion pointer task fails to record progress (its progressFailures, and its log);"
                                + " a job version whose first commit is under way records it in a moment"));
    }

    /**
     * Complete windows that should have a manifest and have none: each listed window with parts,
     * and each window the chain of manifests names. Walking back from the newest manifest the
     * pointer records, every manifest names the window with parts before it, so a window removed
     * whole (parts and manifest) is found too. A window with no parts and not named had no rows.
     */
    private static void missingManifests(
            ObjectStore store,
            StoreScan.Version version,
            int schema,
            CompletionPointer.State pointer,
            Map<Long, StoreScan.Window> windows,
            long sinceMillis,
            List<Finding> findings)
            throws IOException {
        long from = Math.max(pointer.manifestsFromMillis(), sinceMillis);
        if (pointer.manifestsFromMillis() == Long.MIN_VALUE
                || from >= pointer.completeThroughMillis()) {
            return;
        }
        NavigableMap<Long, StoreScan.Window> complete =
                new TreeMap<>(windows).subMap(from, true, pointer.completeThroughMillis(), false);
        Set<Long> named = new TreeSet<>();
        for (long w = pointer.lastManifestMillis(); w != Long.MIN_VALUE && w >= from; ) {
            named.add(w);
            Optional<WindowManifest.Manifest> manifest =
                    manifest(store, version, schema, w, complete.get(w));
            long current = w;
            w =
                    manifest.isPresent()
                            ? manifest.get().previousWindowStartMillis().orElse(Long.MIN_VALUE)
                            // Gone: go on from the next manifest down the listing.
                            : complete.headMap(current, false).descendingMap().values().stream()
                                    .filter(x -> x.manifest.isPresent())
                                    .mapToLong(x -> x.start)
                                    .findFirst()
                                    .orElse(Long.MIN_VALUE);
        }
        Set<Long> expected = new TreeSet<>(named);
        complete.values().stream()
                .filter(x -> !x.parts.isEmpty())
                .forEach(x -> expected.add(x.start));
        for (long w : expected) {
            if (manifest(store, version, schema, w, complete.get(w)).isEmpty()) {
                boolean hasParts = complete.containsKey(w) && !complete.get(w).parts.isEmpty();
                findings.add(
                        Finding.of(
                                "missing-manifest",
                                ObjectKeys.manifestKey(
                                        version.kind(),
                                        version.pipeline(),
                                        version.jobVersion(),
                                        schema,
                                        w),
                                hasParts
                                        ? "the completion pointer ("
                                                + Instant.ofEpochMilli(
                                                        pointer.completeThroughMillis())
                                                + ") says this window is complete"
                                        : "the manifests name this window as one with parts, but neither its manifest nor any part is stored:"
                                                + " the whole window was removed"));
            }
        }
    }

    /** A window's manifest from the listing, or, listed before it was written, from the store. */
    private static Optional<WindowManifest.Manifest> manifest(
            ObjectStore store,
            StoreScan.Version version,
            int schema,
            long window,
            StoreScan.Window listed)
            throws IOException {
        return listed != null && listed.manifest.isPresent()
                ? listed.manifest
                : WindowManifest.read(
                        store,
                        ObjectKeys.manifestKey(
                                version.kind(),
                                version.pipeline(),
                                version.jobVersion(),
                                schema,
                                window));
    }

    /**
     * One window against itself (duplicates, fingerprints) and, once complete, against its
     * manifest. Without a pointer to read, a manifest is the proof: one is written only once its
     * window is complete.
     */
    private static void checkWindow(
            StoreScan.Window window,
            Map<String, PartRead> reads,
            Optional<CompletionPointer.State> pointer,
            List<Finding> findings,
            Map<String, Long> deadLetters) {
        Map<String, String> fingerprints = new TreeMap<>();
        for (List<PartKey> keys : window.parts.values()) {
            if (keys.size() > 1) {
                findings.add(
                        Finding.of(
                                "duplicate-part",
                                keys.get(0).key(),
                                keys.size()
                                        + " objects for one (window, bucket): "
                                        + keys.stream().map(PartKey::key).toList()));
            }
            for (PartKey p : keys) {
                judge(p, reads.get(p.key()), window, findings, deadLetters)
                        .ifPresent(fp -> fingerprints.put(p.key(), fp));
            }
        }
        boolean complete =
                pointer.isEmpty() || window.start < pointer.get().completeThroughMillis();
        if (window.manifest.isEmpty() || !complete) {
            return;
        }
        WindowManifest.Manifest m = window.manifest.get();
        Set<String> listed = new TreeSet<>();
        m.parts()
                .forEach(
                        (bucket, part) -> {
                            listed.add(part.key());
                            String actual = fingerprints.get(part.key());
                            if (window.parts.getOrDefault(bucket, List.of()).stream()
                                    .noneMatch(p -> p.key().equals(part.key()))) {
                                findings.add(
                                        Finding.of(
                                                "missing-part",
                                                part.key(),
                                                "the window's manifest lists it ("
                                                        + part.rows()
                                                        + " rows, fingerprint "
                                                        + part.fingerprint()
                                                        + "), the store does not hold it"));
                            } else if (actual != null && !actual.equals(part.fingerprint())) {
                                findings.add(
                                        Finding.of(
                                                "replaced-part",
                                                part.key(),
                                                "the manifest says fingerprint "
                                                        + part.fingerprint()
                                                        + ", the object now holds "
                                                        + actual));
                            }
                        });
        window.allParts().stream()
                .filter(p -> !listed.contains(p.key()))
                .forEach(
                        p ->
                                findings.add(
                                        Finding.of(
                                                "extra-part",
                                                p.key(),
                                                p.bucketCount() != m.buckets()
                                                        ? "bucket "
                                                                + p.bucket()
                                                                + " of "
                                                                + p.bucketCount()
                                                                + " in a window of "
                                                                + m.buckets()
                                                                + " buckets"
                                                        : "not in the window's manifest: published after the window was complete")));
    }

    /**
     * What reading one part found: its metadata (empty: deleted since the listing), and when its
     * content was read, the content's fingerprint, its dead letters' reasons, or why it could not
     * be read.
     */
    private record PartRead(
            Optional<ObjectStore.ObjectInfo> head,
            Optional<String> contentFingerprint,
            Optional<String> unreadable,
            List<String> deadLetterReasons) {
        static final PartRead DELETED =
                new PartRead(Optional.empty(), Optional.empty(), Optional.empty(), List.of());
    }

    /**
     * Reads parts a batch at a time, many at once: a part is a HEAD and a GET, latency on S3, and a
     * week at B = 128 is a quarter of a million of them. Memory holds the parts being read, and a
     * batch's results.
     */
    private static final class PartReader implements AutoCloseable {
        static final int BATCH = 1024;
        private static final int CONCURRENCY = 16;

        private final ObjectStore store;
        private final boolean readContent;
        private final ExecutorService pool;

        /** Each job version's fingerprint scheme, by "kind/pipeline/version", read once. */
        private final Map<String, Integer> schemes = new ConcurrentHashMap<>();

        PartReader(ObjectStore store, boolean readContent) {
            this.store = store;
            this.readContent = readContent;
            this.pool =
                    Executors.newFixedThreadPool(
                            CONCURRENCY,
                            r -> {
                                Thread t = new Thread(r, "audit-reader");
                                t.setDaemon(true);
                                return t;
                            });
        }

        Map<String, PartRead> readAll(List<PartKey> parts) throws IOException {
            Map<String, Future<PartRead>> pending = new LinkedHashMap<>();
            for (PartKey p : parts) {
                pending.put(p.key(), pool.submit(() -> read(p)));
            }
            Map<String, PartRead> reads = new HashMap<>();
            for (Map.Entry<String, Future<PartRead>> e : pending.entrySet()) {
                try {
                    reads.put(e.getKey(), e.getValue().get());
                } catch (InterruptedException interrupted) {
                    Thread.currentThread().interrupt();
                    throw new IOException("interrupted reading " + e.getKey(), interrupted);
                } catch (ExecutionException failed) {
                    throw failed.getCause() instanceof IOException io
                            ? io
                            : new IOException(
                                    "reading " + e.getKey() + " failed", failed.getCause());
                }
            }
            return reads;
        }

        private PartRead read(PartKey p) throws IOException {
            Optional<ObjectStore.ObjectInfo> head = store.head(p.key());
            if (head.isEmpty()) {
                return PartRead.DELETED;
            }
            if (!readContent && p.kind() == PartKind.SNAPSHOT) {
                return new PartRead(head, Optional.empty(), Optional.empty(), List.of());
            }
            Optional<ObjectStore.VersionedContent> content = store.get(p.key());
            if (content.isEmpty()) {
                return PartRead.DELETED;
            }
            List<GenericRecord> rows;
            try {
                rows =
                        PartEncoding.decode(
                                p.kind(), content.get().content(), DeadLetterRows.SCHEMA);
            } catch (IOException | RuntimeException e) {
                return new PartRead(head, Optional.empty(), Optional.of(e.toString()), List.of());
            }
            Schema schema = rows.isEmpty() ? DeadLetterRows.SCHEMA : rows.get(0).getSchema();
            return new PartRead(
                    head,
                    Optional.of(
                            PartEncoding.fingerprint(
                                    rows, schema, p.schemaVersion(), fingerprintScheme(p))),
                    Optional.empty(),
                    p.kind() == PartKind.DEAD_LETTER
                            ? rows.stream().map(r -> String.valueOf(r.get("reason"))).toList()
                            : List.of());
        }

        /** The scheme the part's job version fingerprints its parts with. */
        private int fingerprintScheme(PartKey p) throws IOException {
            String version = p.kind() + "/" + p.pipeline() + "/" + p.jobVersion();
            Integer known = schemes.get(version);
            if (known == null) {
                known =
                        VersionIdentity.fingerprintScheme(
                                store, p.kind(), p.pipeline(), p.jobVersion());
                schemes.put(version, known);
            }
            return known;
        }

        @Override
        public void close() {
            pool.shutdownNow();
        }
    }

    /**
     * Compares a part's content, when read, with its metadata's fingerprint; returns the
     * fingerprint the window's manifest is compared with: the content's, else the metadata's.
     */
    private static Optional<String> judge(
            PartKey p,
            PartRead read,
            StoreScan.Window window,
            List<Finding> findings,
            Map<String, Long> deadLetters) {
        if (read.head().isEmpty()) {
            return Optional.empty(); // deleted since the listing
        }
        ObjectStore.ObjectInfo head = read.head().get();
        window.read.put(p.key(), StoreScan.PartInfo.of(head));
        if (read.unreadable().isPresent()) {
            findings.add(Finding.of("unreadable-part", p.key(), read.unreadable().get()));
            return Optional.empty();
        }
        String stored = head.metadata().getOrDefault(PartMetadata.FINGERPRINT, "<none>");
        if (read.contentFingerprint().isEmpty()) {
            return Optional.of(stored);
        }
        String actual = read.contentFingerprint().get();
        if (!actual.equals(stored)) {
            findings.add(
                    Finding.of(
                            "fingerprint-mismatch",
                            p.key(),
                            "metadata says " + stored + ", content hashes to " + actual));
        }
        if (p.kind() == PartKind.DEAD_LETTER) {
            deadLetters.merge(
                    p.pipeline() + " v" + p.jobVersion(),
                    (long) read.deadLetterReasons().size(),
                    Long::sum);
            read.deadLetterReasons()
                    .forEach(reason -> window.deadLetterReasons.merge(reason, 1L, Long::sum));
        }
        return Optional.of(actual);
    }

    private static Map<String, Map<String, Object>> acknowledged(ObjectStore store)
            throws IOException {
        Map<String, Map<String, Object>> out = new TreeMap<>();
        List<String> keys = new ArrayList<>();
        store.list(ACKNOWLEDGED, o -> keys.add(o.key()));
        for (String key : keys) {
            Optional<ObjectStore.VersionedContent> content = store.get(key);
            if (content.isPresent()) {
                @SuppressWarnings("unchecked")
                Map<String, Object> doc = JSON.readValue(content.get().content(), Map.class);
                out.put(String.valueOf(doc.get("id")), doc);
            }
        }
        return out;
    }

    /** Records who examined a finding and why; written once, never overwritten. */
    private static int acknowledge(StoreSpec spec, Map<String, String> flags, PrintStream out) {
        String id = flags.get("acknowledge");
        if (!id.matches("[0-9a-f]{12}")
                || !flags.containsKey("by")
                || !flags.containsKey("reason")) {
            throw new IllegalArgumentException(
                    "--acknowledge takes a finding's 12-hex-digit id (from the audit), with --by WHO and --reason WHY");
        }
        try (ObjectStore store = spec.open()) {
            Map<String, Object> doc = new TreeMap<>();
            doc.put("id", id);
            doc.put("by", flags.get("by"));
            doc.put("reason", flags.get("reason"));
            doc.put("at", Instant.now().toString());
            boolean recorded =
                    store.putIfAbsent(
                            ACKNOWLEDGED + id + ".json", JSON.writeValueAsBytes(doc), Map.of());
            out.println(
                    recorded
                            ? "acknowledged finding "
                                    + id
                                    + " (by "
                                    + flags.get("by")
                                    + "): it no longer fails the audit"
                            : "finding "
                                    + id
                                    + " was acknowledged before; that acknowledgement stands");
            return 0;
        } catch (IOException | RuntimeException e) {
            out.println("could not record the acknowledgement in " + spec + ": " + e);
            return 2;
        }
    }

    private static String idOf(String kind, String where) {
        try {
            byte[] sha =
                    MessageDigest.getInstance("SHA-256")
                            .digest((kind + "|" + where).getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(sha).substring(0, 12);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JVM ships SHA-256", e);
        }
    }

    private static void print(Map<String, Object> report, boolean json, PrintStream out) {
        if (json) {
            try {
                out.println(JSON.writeValueAsString(report));
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
            return;
        }
        @SuppressWarnings("unchecked")
        List<Finding> findings = (List<Finding>) report.get("findings");
        List<?> acknowledged = (List<?>) report.get("acknowledged");
        out.printf(
                "audited %s (windows since %s), %s: %s objects, %s parts, dead letters %s, current versions %s%n",
                report.get("store"),
                report.get("since"),
                report.get("conformance"),
                report.get("objects"),
                report.get("parts"),
                report.get("deadLetters"),
                report.get("currentVersions"));
        if (!acknowledged.isEmpty()) {
            out.printf("%d acknowledged findings (not counted)%n", acknowledged.size());
        }
        if (findings.isEmpty()) {
            out.println(
                    "clean: every part is one object that matches its fingerprint and its window's manifest, and every complete"
                            + " window has its manifest");
            return;
        }
        String row =
                "%-12s %-20s %-"
                        + findings.stream().mapToInt(f -> f.where().length()).max().orElse(5)
                        + "s %s%n";
        out.printf(row, "id", "finding", "where", "detail");
        for (Finding f : findings) {
            out.printf(row, f.id(), f.kind(), f.where(), f.detail());
        }
        out.printf(
                "%d findings (acknowledge one with: snapshots audit STORE_URI --acknowledge ID --by WHO --reason WHY)%n",
                findings.size());
    }
}
