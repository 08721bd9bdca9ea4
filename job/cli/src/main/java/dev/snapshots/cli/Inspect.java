package dev.snapshots.cli;

import dev.snapshots.cli.page.CellState;
import dev.snapshots.cli.page.StorePage;
import dev.snapshots.cli.page.StorePageHtml;
import dev.snapshots.key.ObjectKeys.PartKey;
import dev.snapshots.key.PartKind;
import dev.snapshots.store.ObjectStore;
import dev.snapshots.store.StoreConformance;
import dev.snapshots.store.StoreSpec;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.apache.flink.annotation.Internal;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.SerializationFeature;

/**
 * {@code snapshots inspect STORE_URI}: what is published, as a table, JSON, or a page ({@code
 * --html}) that draws every window and bucket with its state, the pointers and the audit's
 * findings.
 */
@Internal
public final class Inspect {
    public static final String USAGE =
            String.join(
                    "\n",
                    "usage: snapshots inspect STORE_URI [--endpoint URL] [--json | --html OUT.html] [--since DURATION|DATE]",
                    "                                   [--job-version N] [--stale-staging DURATION]",
                    "",
                    "  STORE_URI                 file:///dir or s3://bucket/prefix",
                    "  --endpoint URL            S3-compatible endpoint, e.g. http://127.0.0.1:9000",
                    "  --json                    one JSON document instead of tables",
                    "  --html OUT.html           one self-contained page instead (no script, nothing fetched): a grid of windows by",
                    "                            buckets per job version, each cell's state and label, the completion pointer and",
                    "                            its lag, the audit's findings (it runs the audit) with the commands that",
                    "                            acknowledge them, dead letters per reason; opens from a download or a CI artifact",
                    "  --since DURATION|DATE     only windows from this long ago (7d) or this day (2026-11-30) on, as in the audit [all]",
                    "  --job-version N           only this job version",
                    "  --stale-staging DURATION  with --html: parts staged longer than this and not published are findings [24h]",
                    "  --metadata-only           with --html: trust each part's metadata instead of re-reading its content: every",
                    "                            check but those only content shows (a fingerprint that lies, an unreadable part,",
                    "                            content rewritten under its old metadata); one HEAD per part instead of a GET too");
    public static final DateTimeFormatter WINDOW =
            DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm").withZone(ZoneOffset.UTC);

    private Inspect() {}

    public static int run(String[] args, PrintStream out) throws Exception {
        StoreArgs parsed =
                StoreArgs.parse(
                        args,
                        USAGE,
                        Set.of("metadata-only"),
                        "html",
                        "since",
                        "job-version",
                        "stale-staging");
        StoreSpec spec = parsed.store();
        Map<String, String> flags = parsed.flags();
        Optional<Integer> version = Audit.jobVersion(flags);
        Optional<Instant> since = Optional.ofNullable(flags.get("since")).map(Audit::since);
        Duration stale = Audit.staleStaging(flags);
        if (parsed.json() && flags.containsKey("html")) {
            throw new IllegalArgumentException(
                    "--json and --html are two ways to print: choose one");
        }
        try (ObjectStore store = spec.open()) {
            if (flags.containsKey("html")) {
                return page(
                        StorePage.read(
                                spec,
                                store,
                                version,
                                since,
                                stale,
                                !parsed.switches().contains("metadata-only")),
                        Path.of(flags.get("html")),
                        out);
            }
            long sinceMillis = since.map(Instant::toEpochMilli).orElse(Long.MIN_VALUE);
            Map<String, Object> doc =
                    describe(spec, store, Audit.listing(store, version, since), sinceMillis);
            if (parsed.json()) {
                out.println(
                        new ObjectMapper()
                                .enable(SerializationFeature.INDENT_OUTPUT)
                                .writeValueAsString(doc));
            } else {
                printTables(doc, out);
            }
        }
        return 0;
    }

    /** Reads the store, audit included, and draws its page into {@code file}. */
    private static int page(StorePage page, Path file, PrintStream out) throws IOException {
        long drawing = System.nanoTime();
        Map<CellState, Long> cells = StorePageHtml.write(page, file);
        Duration drawn = Duration.ofNanos(System.nanoTime() - drawing);
        out.printf(
                Locale.ROOT,
                "wrote %s (%,d bytes): %d grids, %,d cells (%s); %d findings, %d acknowledged; store read in %.1f s"
                        + " (audit included), page drawn in %.1f s%n",
                file,
                Files.size(file),
                page.grids.size(),
                cells.values().stream().mapToLong(Long::longValue).sum(),
                String.join(
                        ", ",
                        cells.entrySet().stream()
                                .map(e -> e.getValue() + " " + e.getKey().label)
                                .toList()),
                page.findings.size(),
                page.acknowledged.size(),
                page.readTime.toMillis() / 1000.0,
                drawn.toMillis() / 1000.0);
        return 0;
    }

    /**
     * The store as inspect reports it: versions with their windows from {@code sinceMillis} on and
     * their parts (with what each part's metadata says).
     */
    private static Map<String, Object> describe(
            StoreSpec spec, ObjectStore store, StoreScan scan, long sinceMillis)
            throws IOException {
        Map<String, Integer> current = StoreScan.currentVersions(store);
        List<Map<String, Object>> versions = new ArrayList<>();
        for (Map.Entry<StoreScan.Version, Map<Integer, Map<Long, StoreScan.Window>>> e :
                scan.versions.entrySet()) {
            StoreScan.Version v = e.getKey();
            List<Map<String, Object>> windows = new ArrayList<>();
            long partCount = 0;
            long rowCount = 0;
            for (Map<Long, StoreScan.Window> bySchema : e.getValue().values()) {
                for (StoreScan.Window w : bySchema.values()) {
                    if (w.start < sinceMillis) {
                        continue;
                    }
                    List<Map<String, Object>> parts = new ArrayList<>();
                    for (PartKey p : w.allParts()) {
                        StoreScan.PartInfo info = StoreScan.PartInfo.of(store, p);
                        parts.add(
                                ordered(
                                        "key",
                                        p.key(),
                                        "bucket",
                                        p.bucket(),
                                        "rows",
                                        info.rows(),
                                        "bytes",
                                        info.size(),
                                        "fingerprint",
                                        info.fingerprint()));
                        rowCount += info.rows();
                    }
                    partCount += parts.size();
                    if (!parts.isEmpty()) {
                        windows.add(
                                ordered(
                                        "windowStart",
                                        Instant.ofEpochMilli(w.start).toString(),
                                        "parts",
                                        parts));
                    }
                }
            }
            versions.add(
                    ordered(
                            "pipeline",
                            v.pipeline(),
                            "jobVersion",
                            v.jobVersion(),
                            "kind",
                            kind(v.kind()),
                            "current",
                            Integer.valueOf(v.jobVersion()).equals(current.get(v.pipeline())),
                            "completeThroughMillis",
                            StoreScan.completeThrough(store, v).orElse(null),
                            "parts",
                            partCount,
                            "rows",
                            rowCount,
                            "windows",
                            windows));
        }
        return ordered(
                "store",
                spec.toString(),
                "conformance",
                StoreConformance.probeIfWritable(store).toString(),
                "versions",
                versions,
                "currentVersions",
                current,
                "divergenceEvidence",
                scan.divergences,
                "otherObjects",
                scan.outside);
    }

    @SuppressWarnings("unchecked")
    private static void printTables(Map<String, Object> doc, PrintStream out) {
        out.println("store " + doc.get("store") + ", " + doc.get("conformance"));
        out.printf(
                "%-20s %-10s %-11s %8s %8s %10s  %s%n",
                "pipeline", "version", "kind", "windows", "parts", "rows", "complete through");
        List<Map<String, Object>> versions = (List<Map<String, Object>>) doc.get("versions");
        for (Map<String, Object> v : versions) {
            Object through = v.get("completeThroughMillis");
            out.printf(
                    "%-20s %-10s %-11s %8d %8d %10d  %s%n",
                    v.get("pipeline"),
                    "v"
                            + v.get("jobVersion")
                            + (Boolean.TRUE.equals(v.get("current")) ? " current" : ""),
                    v.get("kind"),
                    ((List<?>) v.get("windows")).size(),
                    (Long) v.get("parts"),
                    (Long) v.get("rows"),
                    through == null ? "-" : Instant.ofEpochMilli((Long) through).toString());
        }
        for (Map<String, Object> v : versions) {
            out.printf("%n%s v%s %s%n", v.get("pipeline"), v.get("jobVersion"), v.get("kind"));
            out.printf("  %-17s %6s %8s  %s%n", "window (UTC)", "parts", "rows", "fingerprints");
            for (Map<String, Object> w : (List<Map<String, Object>>) v.get("windows")) {
                List<Map<String, Object>> parts = (List<Map<String, Object>>) w.get("parts");
                List<String> fps =
                        parts.stream()
                                .map(p -> (String) p.get("fingerprint"))
                                .map(f -> f.substring(0, Math.min(12, f.length())))
                                .toList();
                out.printf(
                        "  %-17s %6d %8d  %s%n",
                        WINDOW.format(Instant.parse((String) w.get("windowStart"))),
                        parts.size(),
                        parts.stream().mapToLong(p -> (Long) p.get("rows")).sum(),
                        String.join(" ", fps));
            }
        }
        List<?> divergences = (List<?>) doc.get("divergenceEvidence");
        List<?> other = (List<?>) doc.get("otherObjects");
        out.printf(
                "%ndivergence evidence: %d%s%n",
                divergences.size(), divergences.isEmpty() ? "" : " " + divergences);
        out.printf(
                "objects outside the key scheme: %d%s%n",
                other.size(), other.isEmpty() ? "" : " " + other);
    }

    private static String kind(PartKind kind) {
        return kind.name().toLowerCase(Locale.ROOT).replace('_', '-');
    }

    private static Map<String, Object> ordered(Object... keysAndValues) {
        Map<String, Object> m = new LinkedHashMap<>();
        for (int i = 0; i < keysAndValues.length; i += 2) {
            m.put((String) keysAndValues[i], keysAndValues[i + 1]);
        }
        return m;
    }
}
