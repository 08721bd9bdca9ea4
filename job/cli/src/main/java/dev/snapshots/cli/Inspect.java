package dev.snapshots.cli;

import dev.snapshots.key.ObjectKeys.PartKey;
import dev.snapshots.key.PartKind;
import dev.snapshots.store.ObjectStore;
import dev.snapshots.store.StoreConformance;
import dev.snapshots.store.StoreSpec;
import java.io.IOException;
import java.io.PrintStream;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import org.apache.flink.annotation.Internal;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.SerializationFeature;

/** {@code snapshots inspect STORE_URI}: what is published, as a table or JSON. */
@Internal
public final class Inspect {
    public static final String USAGE =
            String.join(
                    "\n",
                    "usage: snapshots inspect STORE_URI [--endpoint URL] [--json]",
                    "",
                    "  STORE_URI        file:///dir or s3://bucket/prefix",
                    "  --endpoint URL   S3-compatible endpoint, e.g. http://127.0.0.1:9000",
                    "  --json           one JSON document instead of tables");
    public static final DateTimeFormatter WINDOW =
            DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm").withZone(ZoneOffset.UTC);

    private Inspect() {}

    public static int run(String[] args, PrintStream out) throws Exception {
        StoreArgs parsed = StoreArgs.parse(args, USAGE);
        StoreSpec spec = parsed.store();
        try (ObjectStore store = spec.open()) {
            Map<String, Object> doc = describe(spec, store, StoreScan.all(store, Optional.empty()));
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

    /**
     * The store as inspect reports it: versions with their windows and parts (with what each part's
     * metadata says).
     */
    private static Map<String, Object> describe(StoreSpec spec, ObjectStore store, StoreScan scan)
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
