package dev.snapshots.job;

import dev.snapshots.format.PartEncoding;
import dev.snapshots.key.ObjectKeys;
import dev.snapshots.key.ObjectKeys.PartKey;
import dev.snapshots.key.PartKind;
import dev.snapshots.progress.CompletionPointer;
import dev.snapshots.progress.CurrentVersion;
import dev.snapshots.sink.PartMetadata;
import dev.snapshots.store.ObjectStore;
import dev.snapshots.store.StoreSpec;
import java.io.IOException;
import java.io.PrintStream;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.TreeMap;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericRecord;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.SerializationFeature;

/**
 * {@code snapshots audit STORE_URI}: the deploy gate. Scans a store and names everything that
 * breaks the promise: a logical part held by more than one object, a window the completion
 * pointer calls complete that has no parts, an object whose content does not match its
 * fingerprint, divergence evidence, objects outside the key scheme, staged uploads left behind.
 * Exit 0 clean, 1 findings, 2 could not scan.
 *
 * <p>Memory holds one entry per logical part (not per byte of content): content is read and
 * checked one object at a time, so a store of 100k objects audits in bounded memory.
 */
final class Audit {
    static final String USAGE = String.join("\n",
            "usage: snapshots audit STORE_URI [--endpoint URL] [--json] [--job-version N] [--stale-uploads DURATION]",
            "",
            "  STORE_URI                 file:///dir or s3://bucket/prefix",
            "  --endpoint URL            S3-compatible endpoint, e.g. http://127.0.0.1:9000",
            "  --json                    one JSON document instead of a table",
            "  --job-version N           audit only this job version",
            "  --stale-uploads DURATION  staged uploads older than this are findings [24h]",
            "",
            "exit status: 0 clean, 1 findings, 2 could not scan");

    /** One problem, named so an operator knows what to look at. */
    record Finding(String kind, String where, String detail) {}

    private Audit() {}

    static int run(String[] args, PrintStream out) {
        StoreArgs parsed = StoreArgs.parse(args, USAGE, "job-version", "stale-uploads");
        StoreSpec spec = parsed.store();
        Map<String, String> flags = parsed.flags();
        Optional<Integer> version;
        try {
            version = Optional.ofNullable(flags.get("job-version")).map(Integer::parseInt);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("--job-version must be a whole number, got '" + flags.get("job-version") + "'");
        }
        Duration stale = JobConfig.parseDuration("stale-uploads", flags.getOrDefault("stale-uploads", "24h"));
        Map<String, Object> report;
        try (ObjectStore store = spec.open()) {
            report = scan(store, version, stale);
        } catch (IOException | RuntimeException e) {
            out.println("audit could not scan " + spec + ": " + e);
            return 2;
        }
        report.put("store", spec.toString());
        print(report, parsed.json(), out);
        return ((List<?>) report.get("findings")).isEmpty() ? 0 : 1;
    }

    /** What a gate decides on: every finding over all versions, uploads staged over a day counting as stale. */
    @SuppressWarnings("unchecked")
    static List<Finding> findings(ObjectStore store) throws IOException {
        return (List<Finding>) scan(store, Optional.empty(), Duration.ofDays(1)).get("findings");
    }

    static Map<String, Object> scan(ObjectStore store, Optional<Integer> onlyVersion, Duration stale) throws IOException {
        List<Finding> findings = new ArrayList<>();
        // kind|pipeline|version -> window -> bucket -> keys
        Map<String, Map<Long, Map<Integer, List<String>>>> parts = new TreeMap<>();
        Map<String, Long> deadLetters = new TreeMap<>();
        List<String> current = new ArrayList<>(); // pipelines with a current-version pointer
        List<String> outside = new ArrayList<>(); // keys outside the scheme, confirmed after the listing
        long[] objects = {0};
        List<IOException> failures = new ArrayList<>();
        store.list("", o -> {
            objects[0]++;
            String key = o.key();
            Optional<PartKey> parsed = ObjectKeys.parse(key);
            if (parsed.isEmpty()) {
                if (key.startsWith(ObjectKeys.DIVERGENCE_PREFIX)) {
                    findings.add(new Finding("divergence", key, "two executions of the same work computed different content"));
                } else if (ObjectKeys.currentVersionPipeline(key).isPresent()) {
                    current.add(ObjectKeys.currentVersionPipeline(key).get());
                } else if (!ObjectKeys.isPointer(key)) {
                    outside.add(key);
                }
                return;
            }
            PartKey p = parsed.get();
            if (onlyVersion.isPresent() && onlyVersion.get() != p.jobVersion()) {
                return;
            }
            parts.computeIfAbsent(p.kind() + "|" + p.pipeline() + "|" + p.jobVersion(), v -> new TreeMap<>())
                    .computeIfAbsent(p.windowStartMillis(), w -> new TreeMap<>())
                    .computeIfAbsent(p.bucket(), b -> new ArrayList<>())
                    .add(key);
            try {
                checkContent(store, p, findings, deadLetters);
            } catch (IOException e) {
                failures.add(e);
            }
        });
        if (!failures.isEmpty()) {
            throw failures.get(0);
        }
        // A listing is not a snapshot of a live store: S3Proxy's file backend lists an in-flight
        // PUT's temporary file (KEY-UUID) until the write lands, and any store lists objects
        // deleted since. Only what is still stored is a finding.
        for (String key : outside) {
            if (store.head(key).isPresent()) {
                findings.add(new Finding("outside-key-scheme", key, "not a part, pointer or evidence object"));
            }
        }
        for (Map.Entry<String, Map<Long, Map<Integer, List<String>>>> v : parts.entrySet()) {
            String[] id = v.getKey().split("\\|");
            PartKind kind = PartKind.valueOf(id[0]);
            Optional<Long> pointer = CompletionPointer.read(store, kind, id[1], Integer.parseInt(id[2]));
            v.getValue().forEach((window, byBucket) -> byBucket.forEach((bucket, keys) -> {
                if (keys.size() > 1) {
                    findings.add(new Finding("duplicate-part", keys.get(0), keys.size() + " objects for one (window, bucket): " + keys));
                }
            }));
            if (kind == PartKind.SNAPSHOT && pointer.isPresent()) {
                List<Long> missing = missingWindows(v.getValue().keySet(), pointer.get());
                if (!missing.isEmpty()) {
                    // On a live store the listing can predate the pointer just read: parts of a window
                    // committed in between are there now. List this version again before calling it missing.
                    Set<Long> relisted = new TreeSet<>(v.getValue().keySet());
                    store.list(ObjectKeys.versionPrefix(id[1], Integer.parseInt(id[2])),
                            o -> ObjectKeys.parse(o.key()).ifPresent(p -> relisted.add(p.windowStartMillis())));
                    missing = missingWindows(relisted, pointer.get());
                }
                for (long w : missing) {
                    findings.add(new Finding("missing-window", v.getKey().replace('|', ' ') + " " + Instant.ofEpochMilli(w),
                            "the completion pointer (" + Instant.ofEpochMilli(pointer.get()) + ") says complete, but no part exists"));
                }
            }
        }
        Instant cutoff = Instant.now().minus(stale);
        store.listStaged("", s -> {
            if (s.started().isBefore(cutoff)) {
                findings.add(new Finding("stale-upload", s.key(), "staged since " + s.started() + " (" + s.handle()
                        + "); a bucket lifecycle rule should abort it"));
            }
        });
        Map<String, Object> report = new LinkedHashMap<>();
        report.put("objects", objects[0]);
        report.put("parts", parts.values().stream().flatMap(w -> w.values().stream()).mapToLong(Map::size).sum());
        report.put("deadLetters", deadLetters);
        Map<String, Integer> currentVersions = new TreeMap<>();
        for (String pipeline : current) {
            CurrentVersion.read(store, pipeline).ifPresent(v -> currentVersions.put(pipeline, v));
        }
        report.put("currentVersions", currentVersions);
        report.put("findings", findings);
        return report;
    }

    /** Recomputes the fingerprint from the content and compares it with the metadata's. */
    private static void checkContent(ObjectStore store, PartKey p, List<Finding> findings, Map<String, Long> deadLetters)
            throws IOException {
        Map<String, String> metadata = store.head(p.key()).map(ObjectStore.ObjectInfo::metadata).orElse(Map.of());
        byte[] content = store.get(p.key()).orElseThrow().content();
        List<GenericRecord> rows;
        try {
            rows = PartEncoding.decode(p.kind(), content, DeadLetter.SCHEMA);
        } catch (IOException | RuntimeException e) {
            findings.add(new Finding("unreadable-part", p.key(), e.toString()));
            return;
        }
        Schema schema = rows.isEmpty() ? DeadLetter.SCHEMA : rows.get(0).getSchema();
        String actual = PartEncoding.fingerprint(rows, schema, p.schemaVersion());
        String stored = metadata.getOrDefault(PartMetadata.FINGERPRINT, "<none>");
        if (!actual.equals(stored)) {
            findings.add(new Finding("fingerprint-mismatch", p.key(), "metadata says " + stored + ", content hashes to " + actual));
        }
        if (p.kind() == PartKind.DEAD_LETTER) {
            deadLetters.merge(p.pipeline() + " v" + p.jobVersion(), (long) rows.size(), Long::sum);
        }
    }

    /**
     * Windows the pointer calls complete that hold no part. The window length is taken as the
     * smallest gap between published windows; a window in which nothing at all happened has no
     * parts either, so a finding here means: check the input for that window, then the job.
     */
    private static List<Long> missingWindows(Set<Long> windows, long pointer) {
        List<Long> starts = new ArrayList<>(windows);
        List<Long> missing = new ArrayList<>();
        if (starts.size() < 2) {
            return missing;
        }
        long length = Long.MAX_VALUE;
        for (int i = 1; i < starts.size(); i++) {
            length = Math.min(length, starts.get(i) - starts.get(i - 1));
        }
        for (long w = starts.get(0); w + length <= pointer; w += length) {
            if (!windows.contains(w)) {
                missing.add(w);
            }
        }
        return missing;
    }

    private static void print(Map<String, Object> report, boolean json, PrintStream out) {
        if (json) {
            try {
                out.println(new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT).writeValueAsString(report));
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
            return;
        }
        @SuppressWarnings("unchecked")
        List<Finding> findings = (List<Finding>) report.get("findings");
        out.printf("audited %s: %s objects, %s parts, dead letters %s, current versions %s%n", report.get("store"),
                report.get("objects"), report.get("parts"), report.get("deadLetters"), report.get("currentVersions"));
        if (findings.isEmpty()) {
            out.println("clean: every part is one object, matches its fingerprint, and no complete window is missing");
            return;
        }
        out.printf("%-20s %-70s %s%n", "finding", "where", "detail");
        for (Finding f : findings) {
            out.printf("%-20s %-70s %s%n", f.kind(), f.where(), f.detail());
        }
        out.printf("%d findings%n", findings.size());
    }
}
