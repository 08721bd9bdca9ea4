package dev.snapshots.cli;

import dev.snapshots.store.ObjectStore;
import dev.snapshots.store.StoreSpec;
import java.io.PrintStream;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.SerializationFeature;

/** {@code snapshots inspect STORE_URI}: what is published, as a table or JSON. */
public final class Inspect {
    public static final String USAGE = String.join("\n",
            "usage: snapshots inspect STORE_URI [--endpoint URL] [--json]",
            "",
            "  STORE_URI        file:///dir or s3://bucket/prefix",
            "  --endpoint URL   S3-compatible endpoint, e.g. http://127.0.0.1:9000",
            "  --json           one JSON document instead of tables");
    public static final DateTimeFormatter WINDOW = DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm").withZone(ZoneOffset.UTC);

    private Inspect() {}

    public static int run(String[] args, PrintStream out) throws Exception {
        StoreArgs parsed = StoreArgs.parse(args, USAGE);
        StoreSpec spec = parsed.store();
        boolean json = parsed.json();
        try (ObjectStore store = spec.open()) {
            StoreScan scan = StoreScan.of(store);
            if (json) {
                out.println(new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT).writeValueAsString(toJson(spec, scan)));
            } else {
                printTables(spec, scan, out);
            }
        }
        return 0;
    }

    private static void printTables(StoreSpec spec, StoreScan scan, PrintStream out) {
        out.println("store " + spec);
        out.printf("%-20s %-10s %-11s %8s %8s %10s  %s%n", "pipeline", "version", "kind", "windows", "parts", "rows", "complete through");
        for (StoreScan.Version v : scan.versions) {
            boolean current = Integer.valueOf(v.jobVersion()).equals(scan.current.get(v.pipeline()));
            out.printf("%-20s %-10s %-11s %8d %8d %10d  %s%n", v.pipeline(), "v" + v.jobVersion() + (current ? " current" : ""), kind(v), v.windows().size(),
                    v.parts(), v.rows(), v.completeThrough().map(t -> Instant.ofEpochMilli(t).toString()).orElse("-"));
        }
        for (StoreScan.Version v : scan.versions) {
            out.printf("%n%s v%d %s%n", v.pipeline(), v.jobVersion(), kind(v));
            out.printf("  %-17s %6s %8s  %s%n", "window (UTC)", "parts", "rows", "fingerprints");
            v.windows().forEach((start, parts) -> {
                List<String> fps = new ArrayList<>();
                parts.forEach(p -> fps.add(p.fingerprint().substring(0, Math.min(12, p.fingerprint().length()))));
                out.printf("  %-17s %6d %8d  %s%n", WINDOW.format(Instant.ofEpochMilli(start)), parts.size(),
                        parts.stream().mapToLong(StoreScan.Part::rows).sum(), String.join(" ", fps));
            });
        }
        out.printf("%ndivergence evidence: %d%s%n", scan.divergences.size(), scan.divergences.isEmpty() ? "" : " " + scan.divergences);
        out.printf("objects outside the key scheme: %d%s%n", scan.other.size(), scan.other.isEmpty() ? "" : " " + scan.other);
    }

    private static String kind(StoreScan.Version v) {
        return v.kind().name().toLowerCase(Locale.ROOT).replace('_', '-');
    }

    private static Map<String, Object> toJson(StoreSpec spec, StoreScan scan) {
        Map<String, Object> doc = new LinkedHashMap<>();
        doc.put("store", spec.toString());
        List<Object> versions = new ArrayList<>();
        for (StoreScan.Version v : scan.versions) {
            Map<String, Object> ver = new LinkedHashMap<>();
            ver.put("pipeline", v.pipeline());
            ver.put("jobVersion", v.jobVersion());
            ver.put("kind", kind(v));
            ver.put("completeThroughMillis", v.completeThrough().orElse(null));
            ver.put("parts", v.parts());
            ver.put("rows", v.rows());
            List<Object> windows = new ArrayList<>();
            v.windows().forEach((start, parts) -> {
                Map<String, Object> w = new LinkedHashMap<>();
                w.put("windowStart", Instant.ofEpochMilli(start).toString());
                List<Object> ps = new ArrayList<>();
                for (StoreScan.Part p : parts) {
                    ps.add(Map.of("key", p.key().key(), "bucket", p.key().bucket(), "rows", p.rows(),
                            "bytes", p.size(), "fingerprint", p.fingerprint()));
                }
                w.put("parts", ps);
                windows.add(w);
            });
            ver.put("windows", windows);
            versions.add(ver);
        }
        doc.put("versions", versions);
        doc.put("currentVersions", scan.current);
        doc.put("divergenceEvidence", scan.divergences);
        doc.put("otherObjects", scan.other);
        return doc;
    }
}
