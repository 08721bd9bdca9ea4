package dev.snapshots.harness.bench;

import dev.snapshots.job.config.JobConfig;
import dev.snapshots.cli.Flags;
import dev.snapshots.harness.cluster.LocalCluster;
import dev.snapshots.harness.cluster.Directories;
import dev.snapshots.sink.CanonicalSnapshotSinkBuilder;
import dev.snapshots.store.ObjectStore;
import dev.snapshots.store.StoreSpec;
import dev.snapshots.testkit.FaultProxy;
import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.Graphics2D;
import java.awt.RenderingHints;
import java.awt.image.BufferedImage;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import javax.imageio.ImageIO;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.SerializationFeature;

/**
 * {@code snapshots bench}: what the guarantee costs. The same pipeline on the same input, ending
 * in a discarding sink (the upper bound), Flink's FileSink writing Parquet (what users would
 * otherwise pick) and our sink, run in turn A B C A B C so machine drift hits all three alike,
 * each run in a JVM of its own. Then a scaling table of our sink against the discarding sink and FileSink
 * over keys per window and bucket counts.
 */
public final class Bench {
    public static final String USAGE = String.join("\n",
            "usage: snapshots bench [--events N] [--keys K] [--buckets B] [--store file|s3] [--runs R]",
            "                       [--scale-keys K1,K2,..] [--scale-buckets B1,B2,..] [--scale-events N] [--heap SIZE] [--gc g1|parallel] [--profile yes|no]",
            "                       [--checkpoint-interval D] [--publish-concurrency N] [--catch-up yes|no]",
            "",
            "  --events N          events per comparison run [20000000]",
            "  --keys K            keys (devices) per window [10000]",
            "  --buckets B         buckets per window for our sink [4]",
            "  --store file|s3     local files, or S3Proxy over HTTP with requests counted at a proxy [file]",
            "  --runs R            rounds of discarding, FileSink, ours [3]",
            "  --scale-keys LIST   keys per window for the scaling table (discarding, FileSink, then ours per bucket count); 'none' skips it [10000,100000,1000000]",
            "  --scale-buckets LIST  bucket counts for the scaling table [1,4,16]",
            "  --scale-events N    events per scaling run (at least 8 x keys) [8000000]",
            "  --heap SIZE         -Xmx of each run's JVM [3g]",
            "  --checkpoint-interval D  how often the runs checkpoint (and FileSink and ours commit) [10s, the job's default]",
            "  --publish-concurrency N  parts our sink publishes at a time per commit [8, the sink's default]",
            "  --gc g1|parallel    the runs' garbage collector [g1]",
            "  --profile yes|no    record each run with JFR and report where its CPU samples fall [no]",
            "  --catch-up yes|no   also replay a backlog of 10 splits whose densities differ tenfold, with and without",
            "                      watermark alignment (scale-events events, keys per window, checkpoints every 2 s):",
            "                      events/s, heap and state [no]",
            "",
            "Writes target/bench/results.json, target/bench/BENCHMARKS.md and target/bench/chart.png.");

    private static final String[][] FLAGS = {
        {"events", "20000000"}, {"keys", "10000"}, {"buckets", "4"}, {"store", "file"}, {"runs", "3"},
        {"scale-keys", "10000,100000,1000000"}, {"scale-buckets", "1,4,16"}, {"scale-events", "8000000"}, {"heap", "3g"}, {"gc", "g1"}, {"profile", "no"}, {"catch-up", "no"},
        {"checkpoint-interval", "10s"}, {"publish-concurrency", Integer.toString(CanonicalSnapshotSinkBuilder.DEFAULT_PUBLISH_CONCURRENCY)},
    };
    private static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

    private final Path root;
    private final Path out;
    private final Map<String, String> flags;
    private final PrintStream progress;
    private final long startNanos = System.nanoTime();
    private String s3Endpoint = "";
    private FaultProxy counter;
    private int runNumber;

    private Bench(Path root, Map<String, String> flags, PrintStream progress) {
        this.root = root;
        this.out = root.resolve("target/bench");
        this.flags = flags;
        this.progress = progress;
    }

    public static int run(String[] args, PrintStream stdout) throws Exception {
        Map<String, String> flags = Flags.parse(args, FLAGS, Set.of());
        for (String yesNo : List.of("profile", "catch-up")) {
            if (!List.of("yes", "no").contains(flags.get(yesNo))) {
                throw new IllegalArgumentException("--" + yesNo + " must be yes or no, got '" + flags.get(yesNo) + "'");
            }
        }
        if (!List.of("g1", "parallel").contains(flags.get("gc"))) {
            throw new IllegalArgumentException("--gc must be g1 or parallel, got '" + flags.get("gc") + "'");
        }
        if (!List.of("file", "s3").contains(flags.get("store"))) {
            throw new IllegalArgumentException("--store must be file or s3, got '" + flags.get("store") + "'");
        }
        // The runs' job reads it as its --checkpoint-interval: checked the same way, here.
        JobConfig.parse(new String[] {"--store", "file:///tmp", "--checkpoint-interval", flags.get("checkpoint-interval")});
        for (String n : List.of("events", "keys", "buckets", "runs", "scale-events", "publish-concurrency")) {
            if (!flags.get(n).matches("[1-9]\\d{0,10}")) {
                throw new IllegalArgumentException("--" + n + " must be a positive whole number, got '" + flags.get(n) + "'");
            }
        }
        Bench bench = new Bench(Path.of(System.getProperty("snapshots.root", ".")).toAbsolutePath().normalize(), flags, stdout);
        Map<String, Object> results = bench.execute();
        stdout.println(table(results));
        return 0;
    }

    private Map<String, Object> execute() throws Exception {
        Directories.deleteRecursively(out);
        Files.createDirectories(out);
        LocalCluster s3 = new LocalCluster(root, out.resolve("s3"));
        try {
            if (flags.get("store").equals("s3")) {
                s3Endpoint = s3.startS3Proxy(new PrintStream(new ByteArrayOutputStream()));
                counter = new FaultProxy(s3Endpoint, 0); // no faults: it counts the requests our sink and FileSink make
            }
            Map<String, Object> results = new LinkedHashMap<>();
            results.put("command", command());
            results.put("machine", machine());
            results.put("comparison", compare());
            results.put("scaling", scale());
            results.put("catchUp", catchUp());
            results.put("elapsedSeconds", Math.round((System.nanoTime() - startNanos) / 1e9));
            Files.writeString(out.resolve("results.json"), JSON.writeValueAsString(results) + "\n");
            chart(results);
            Files.writeString(out.resolve("BENCHMARKS.md"), markdown(results));
            say("wrote %s, BENCHMARKS.md and chart.png", out.resolve("results.json"));
            return results;
        } finally {
            if (counter != null) {
                counter.close();
            }
            s3.down(new PrintStream(new ByteArrayOutputStream()));
        }
    }

    /** Rounds of A B C; per sink the median and spread of events/s, and what else each sink costs. */
    private Map<String, Object> compare() throws Exception {
        long events = Long.parseLong(flags.get("events"));
        int keys = Integer.parseInt(flags.get("keys"));
        int buckets = Integer.parseInt(flags.get("buckets"));
        int runs = Integer.parseInt(flags.get("runs"));
        Map<BenchRun.Sink, List<JsonNode>> bySink = new EnumMap<>(BenchRun.Sink.class);
        for (int r = 1; r <= runs; r++) {
            for (BenchRun.Sink sink : BenchRun.Sink.values()) {
                bySink.computeIfAbsent(sink, s -> new ArrayList<>()).add(runOnce(sink, events, keys, buckets,
                        String.format("round %d/%d", r, runs)));
            }
        }
        Map<String, Object> comparison = new LinkedHashMap<>();
        comparison.put("events", events);
        comparison.put("keys", keys);
        comparison.put("buckets", buckets);
        comparison.put("runs", runs);
        Map<String, Object> sinks = new LinkedHashMap<>();
        bySink.forEach((sink, list) -> sinks.put(sink.name().toLowerCase(Locale.ROOT), summary(list)));
        comparison.put("sinks", sinks);
        double ours = median(bySink.get(BenchRun.Sink.OURS), "eventsPerSecond");
        comparison.put("oursOverDiscarding", round(ours / median(bySink.get(BenchRun.Sink.DISCARDING), "eventsPerSecond"), 3));
        comparison.put("oursOverFileSink", round(ours / median(bySink.get(BenchRun.Sink.FILESINK), "eventsPerSecond"), 3));
        return comparison;
    }

    /** Our sink against the discarding sink and FileSink, over keys per window and bucket counts. */
    private List<Map<String, Object>> scale() throws Exception {
        List<Map<String, Object>> rows = new ArrayList<>();
        if (flags.get("scale-keys").equals("none")) {
            return rows;
        }
        long configured = Long.parseLong(flags.get("scale-events"));
        for (String k : flags.get("scale-keys").split(",")) {
            int keys = Integer.parseInt(k.trim());
            long events = Math.max(configured, 8L * keys);
            JsonNode baseline = runOnce(BenchRun.Sink.DISCARDING, events, keys, 1, "scaling " + keys + " keys");
            // FileSink has no buckets: one run per key count says how much of our cost is writing Parquet at all.
            JsonNode fileSink = runOnce(BenchRun.Sink.FILESINK, events, keys, 1, "scaling " + keys + " keys");
            for (String b : flags.get("scale-buckets").split(",")) {
                JsonNode ours = runOnce(BenchRun.Sink.OURS, events, keys, Integer.parseInt(b.trim()), "scaling " + keys + " keys");
                double rate = ours.path("eventsPerSecond").asDouble();
                Map<String, Object> row = new LinkedHashMap<>();
                row.put("keys", keys);
                row.put("buckets", Integer.parseInt(b.trim()));
                row.put("events", ours.path("events").asLong());
                row.put("eventsPerKeyPerWindow", round((double) ours.path("events").asLong() / ours.path("windows").asLong() / keys, 1));
                row.put("discardingEventsPerSecond", Math.round(baseline.path("eventsPerSecond").asDouble()));
                row.put("fileSinkEventsPerSecond", Math.round(fileSink.path("eventsPerSecond").asDouble()));
                row.put("oursEventsPerSecond", Math.round(rate));
                row.put("ratio", round(rate / baseline.path("eventsPerSecond").asDouble(), 3));
                row.put("oursOverFileSink", round(rate / fileSink.path("eventsPerSecond").asDouble(), 3));
                row.put("peakRssMiB", ours.path("peakRssBytes").asLong() >> 20);
                row.put("assembledPerSubtask", ours.path("assembledPerSubtask"));
                rows.add(row);
            }
        }
        return rows;
    }

    /**
     * A backlog replayed with and without watermark alignment: without it the sparse splits run
     * ahead and every window between them and the densest split stays open in state.
     */
    private List<Map<String, Object>> catchUp() throws Exception {
        List<Map<String, Object>> rows = new ArrayList<>();
        if (flags.get("catch-up").equals("no")) {
            return rows;
        }
        long events = Long.parseLong(flags.get("scale-events"));
        int keys = Integer.parseInt(flags.get("keys"));
        for (String drift : List.of("0s", "5m")) {
            JsonNode run = runOnce(BenchRun.Sink.OURS, events, keys, Integer.parseInt(flags.get("buckets")),
                    "catch-up, max drift " + drift, drift);
            Map<String, Object> row = new LinkedHashMap<>();
            row.put("maxDrift", drift);
            row.put("events", run.path("events").asLong());
            row.put("eventsPerSecond", Math.round(run.path("eventsPerSecond").asDouble()));
            row.put("peakOldGenMiB", Arrays.stream(longs(run.path("oldGenBytes"))).max().orElse(0) >> 20);
            row.put("peakCheckpointKiB", Arrays.stream(longs(run.path("checkpointBytes"))).max().orElse(0) >> 10);
            row.put("peakRssMiB", run.path("peakRssBytes").asLong() >> 20);
            rows.add(row);
        }
        return rows;
    }

    /** One run in a fresh JVM; its measurements, plus bytes written and requests made. */
    private JsonNode runOnce(BenchRun.Sink sink, long events, int keys, int buckets, String label) throws Exception {
        return runOnce(sink, events, keys, buckets, label, null);
    }

    /** @param maxDrift null: the comparison's input; else a catch-up with this watermark alignment */
    private JsonNode runOnce(BenchRun.Sink sink, long events, int keys, int buckets, String label, String maxDrift) throws Exception {
        int n = ++runNumber;
        String name = String.format("%02d-%s", n, sink.name().toLowerCase(Locale.ROOT));
        String store;
        String endpoint = "";
        if (s3Endpoint.isEmpty()) {
            store = "file://" + out.resolve("runs/" + name);
        } else {
            endpoint = counter.endpoint();
            store = (sink == BenchRun.Sink.FILESINK ? "s3a://" : "s3://") + LocalCluster.BUCKET + "/" + name;
        }
        Path result = out.resolve("runs/" + name + ".json");
        Files.createDirectories(result.getParent());
        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xms" + flags.get("heap"), "-Xmx" + flags.get("heap"),
                flags.get("gc").equals("g1") ? "-XX:+UseG1GC" : "-XX:+UseParallelGC",
                "-Dlog4j.configurationFile=" + root.resolve("job/harness/src/launcher/log4j2.properties"),
                "-Dsnapshots.log=" + out.resolve("runs/" + name + ".log"),
                "-cp", System.getProperty("java.class.path"), BenchRun.class.getName(),
                sink.name(), Long.toString(events), Integer.toString(keys), Integer.toString(buckets), store, endpoint, result.toString(),
                flags.get("checkpoint-interval"), flags.get("publish-concurrency")));
        if (maxDrift != null) {
            command.add(maxDrift);
        }
        if (flags.get("profile").equals("yes")) {
            command.add(1, "-XX:StartFlightRecording=filename=" + out.resolve("runs/" + name + ".jfr") + ",settings=profile");
        }
        ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(out.resolve("runs/" + name + ".out").toFile());
        pb.environment().put("FLINK_PLUGINS_DIR", root.resolve("deploy/flink-local/target/bench-plugins").toString());
        int requestsBefore = counter == null ? 0 : counter.forwarded();
        say("%s: %s, %,d events, %,d keys, %d buckets ...", label, sink.name().toLowerCase(Locale.ROOT), events, keys, buckets);
        Process p = pb.start();
        if (!p.waitFor(30, TimeUnit.MINUTES) || p.exitValue() != 0 || !Files.exists(result)) {
            p.destroyForcibly();
            throw new IOException("run " + name + " failed; see " + out.resolve("runs/" + name + ".out"));
        }
        Map<String, Object> measured = JSON.readValue(result.toFile(), LinkedHashMap.class);
        long[] written = written(store, endpoint);
        measured.put("bytesWritten", written[0]);
        measured.put("objectsWritten", written[1]);
        if (counter != null) {
            int requests = counter.forwarded() - requestsBefore;
            measured.put("s3Requests", requests);
            measured.put("s3RequestsPerObject", written[1] == 0 ? 0 : round((double) requests / written[1], 2));
        }
        if (flags.get("profile").equals("yes")) {
            measured.put("profile", Profile.of(out.resolve("runs/" + name + ".jfr")));
        }
        JsonNode node = JSON.valueToTree(measured);
        Files.writeString(result, JSON.writeValueAsString(node));
        if (s3Endpoint.isEmpty()) {
            Directories.deleteRecursively(out.resolve("runs/" + name));
        }
        say("  %,.0f events/s steady (%,.0f over the whole %.1f s), %,d objects, %,d bytes, peak RSS %d MiB",
                node.path("eventsPerSecond").asDouble(), node.path("eventsPerSecondOverall").asDouble(), node.path("seconds").asDouble(),
                written[1], written[0], node.path("peakRssBytes").asLong() >> 20);
        return node;
    }

    /** Bytes and objects a run left in its store; a discarding run leaves none. */
    private static long[] written(String store, String endpoint) throws IOException {
        long[] total = {0, 0};
        if (store.startsWith("file://")) {
            Path dir = Path.of(store.substring("file://".length()));
            if (Files.isDirectory(dir)) {
                try (Stream<Path> files = Files.walk(dir)) {
                    files.filter(Files::isRegularFile).filter(f -> !f.getFileName().toString().startsWith("."))
                            .forEach(f -> {
                                total[0] += f.toFile().length();
                                total[1]++;
                            });
                }
            }
            return total;
        }
        StoreSpec spec = StoreSpec.parse(store.replaceFirst("^s3a://", "s3://")).withEndpoint(endpoint);
        try (ObjectStore s = spec.open()) {
            s.list("", o -> {
                total[0] += o.size();
                total[1]++;
            });
        }
        return total;
    }

    private static Map<String, Object> summary(List<JsonNode> runs) {
        double[] rates = runs.stream().mapToDouble(r -> r.path("eventsPerSecond").asDouble()).sorted().toArray();
        double median = median(rates);
        JsonNode last = runs.get(runs.size() - 1);
        Map<String, Object> s = new LinkedHashMap<>();
        s.put("eventsPerSecondMedian", Math.round(median));
        s.put("eventsPerSecondMin", Math.round(rates[0]));
        s.put("eventsPerSecondMax", Math.round(rates[rates.length - 1]));
        s.put("spreadPercent", round(100 * (rates[rates.length - 1] - rates[0]) / median, 1));
        s.put("eventsPerSecondOverallMedian", Math.round(median(runs, "eventsPerSecondOverall")));
        long[] commits = runs.stream().flatMapToLong(r -> Arrays.stream(longs(r.path("commitMillis")))).sorted().toArray();
        s.put("commitMillisP50", commits.length == 0 ? null : percentile(commits, 50));
        s.put("commitMillisP99", commits.length == 0 ? null : percentile(commits, 99));
        s.put("commits", commits.length);
        s.put("bytesWritten", last.path("bytesWritten").asLong());
        s.put("objectsWritten", last.path("objectsWritten").asLong());
        if (last.has("s3RequestsPerObject")) {
            s.put("s3RequestsPerObject", last.path("s3RequestsPerObject").asDouble());
        }
        s.put("peakRssMiB", runs.stream().mapToLong(r -> r.path("peakRssBytes").asLong()).max().orElse(0) >> 20);
        s.put("oldGenMiBByQuarter", byQuarter(last.path("oldGenBytes"), 20));
        s.put("checkpointKiBByQuarter", byQuarter(last.path("checkpointBytes"), 10));
        s.put("assembledPerSubtask", last.path("assembledPerSubtask"));
        if (last.has("profile")) {
            s.put("profile", last.path("profile"));
        }
        return s;
    }

    /** The samples at the end of each quarter of a run, shifted right by {@code unit} bits (20: MiB). */
    private static List<Long> byQuarter(JsonNode samples, int unit) {
        long[] all = longs(samples);
        List<Long> quarters = new ArrayList<>();
        for (int q = 1; q <= 4 && all.length > 0; q++) {
            quarters.add(all[Math.min(all.length - 1, all.length * q / 4)] >> unit);
        }
        return quarters;
    }

    private static long[] longs(JsonNode array) {
        long[] out = new long[array.size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = array.get(i).asLong();
        }
        return out;
    }

    private static double median(List<JsonNode> runs, String field) {
        return median(runs.stream().mapToDouble(r -> r.path(field).asDouble()).sorted().toArray());
    }

    private static double median(double[] sorted) {
        int n = sorted.length;
        return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
    }

    private static long percentile(long[] sorted, int p) {
        return sorted[Math.min(sorted.length - 1, (int) Math.ceil(p / 100.0 * sorted.length) - 1)];
    }

    private static double round(double v, int digits) {
        double f = Math.pow(10, digits);
        return Math.round(v * f) / f;
    }

    private String command() {
        StringBuilder c = new StringBuilder("./snapshots bench");
        flags.forEach((k, v) -> c.append(" --").append(k).append(' ').append(v));
        return c.toString();
    }

    private static String machine() {
        return Runtime.getRuntime().availableProcessors() + " cores, " + (osMemory() >> 30) + " GiB, Java "
                + System.getProperty("java.version") + ", " + System.getProperty("os.name") + " " + System.getProperty("os.arch")
                + ", " + Instant.now();
    }

    private static long osMemory() {
        java.lang.management.OperatingSystemMXBean os = java.lang.management.ManagementFactory.getOperatingSystemMXBean();
        return os instanceof com.sun.management.OperatingSystemMXBean sun ? sun.getTotalMemorySize() : 0;
    }

    /** One line per entry of a profile's {name: percent}. */
    private static void appendShares(StringBuilder t, JsonNode shares) {
        shares.fields().forEachRemaining(e -> t.append(String.format("  %5.1f%%  %s%n", e.getValue().asDouble(), e.getKey())));
    }

    /** The comparison and the scaling table as plain-text tables. */
    @SuppressWarnings("unchecked")
    static String table(Map<String, Object> results) {
        StringBuilder t = new StringBuilder();
        Map<String, Object> c = (Map<String, Object>) results.get("comparison");
        Map<String, Map<String, Object>> sinks = (Map<String, Map<String, Object>>) c.get("sinks");
        t.append(String.format("%n%,d events, %,d keys per window, %s buckets, %s rounds; %s%n%n", c.get("events"), c.get("keys"),
                c.get("buckets"), c.get("runs"), results.get("machine")));
        t.append(String.format("%-11s %12s %12s %9s %12s %10s %10s %12s %9s %9s%n", "sink", "events/s", "min..max", "spread",
                "whole run", "commit p50", "commit p99", "bytes", "objects", "peak RSS"));
        sinks.forEach((sink, s) -> t.append(String.format(
                "%-11s %,12d %12s %8s%% %,12d %10s %10s %,12d %9s %6s MiB%n", sink, s.get("eventsPerSecondMedian"),
                shortRange(s), s.get("spreadPercent"), s.get("eventsPerSecondOverallMedian"), ms(s.get("commitMillisP50")), ms(s.get("commitMillisP99")),
                s.get("bytesWritten"), s.get("objectsWritten"), s.get("peakRssMiB"))));
        t.append(String.format("%nevents/s: steady state, between 20%% and 90%% of the input; whole run: from RUNNING to FINISHED."
                + "%nours / discarding: %.3f    ours / FileSink: %.3f%n", c.get("oursOverDiscarding"), c.get("oursOverFileSink")));
        for (String[] series : new String[][] {{"oldGenMiBByQuarter", "old generation (MiB)"}, {"checkpointKiBByQuarter", "checkpoint size (KiB)"}}) {
            t.append(series[1]).append(" at each quarter of the last run:");
            sinks.forEach((sink, s) -> t.append("  ").append(sink).append(' ')
                    .append(s.get(series[0])));
            t.append('\n');
        }
        t.append(String.format("records assembled per subtask (ours): %s%n", sinks.get("ours").get("assembledPerSubtask")));
        sinks.forEach((sink, s) -> {
            if (s.get("profile") instanceof JsonNode p) {
                t.append(String.format("%n%s, CPU samples (%d) by thread (Flink task):%n", sink, p.path("samples").asInt()));
                appendShares(t, p.path("threadsPercent"));
                t.append("  on:\n");
                appendShares(t, p.path("topFramesPercent"));
                for (String[] part : new String[][] {{"ourInnermostFramesPercent", "our code (job and library)"},
                        {"libraryInnermostFramesPercent", "the sink library"}}) {
                    t.append("  with, innermost on the stack, ").append(part[1]).append(":\n");
                    appendShares(t, p.path(part[0]));
                }
            }
        });
        List<Map<String, Object>> catchUp = (List<Map<String, Object>>) results.get("catchUp");
        if (!catchUp.isEmpty()) {
            t.append(String.format("%ncatch-up of a backlog, 10 splits of tenfold densities over 2 subtasks:%n%-10s %12s %12s %16s %18s %9s%n",
                    "max drift", "events", "events/s", "peak old gen", "peak checkpoint", "peak RSS"));
            for (Map<String, Object> r : catchUp) {
                t.append(String.format("%-10s %,12d %,12d %12s MiB %14s KiB %5s MiB%n", r.get("maxDrift"), r.get("events"),
                        r.get("eventsPerSecond"), r.get("peakOldGenMiB"), r.get("peakCheckpointKiB"), r.get("peakRssMiB")));
            }
        }
        List<Map<String, Object>> scaling = (List<Map<String, Object>>) results.get("scaling");
        if (!scaling.isEmpty()) {
            t.append(String.format("%n%-10s %8s %10s %14s %14s %14s %11s %11s %9s%n", "keys", "buckets", "ev/key/win", "discarding/s",
                    "filesink/s", "ours/s", "ours/disc.", "ours/FileS.", "peak RSS"));
            for (Map<String, Object> r : scaling) {
                t.append(String.format("%,-10d %8s %10s %,14d %,14d %,14d %11.3f %11.3f %5s MiB%n", r.get("keys"), r.get("buckets"),
                        r.get("eventsPerKeyPerWindow"), r.get("discardingEventsPerSecond"), r.get("fileSinkEventsPerSecond"),
                        r.get("oursEventsPerSecond"), r.get("ratio"), r.get("oursOverFileSink"), r.get("peakRssMiB")));
            }
        }
        return t.toString();
    }

    private static String shortRange(Map<String, Object> s) {
        return String.format("%.2f..%.2fM", ((Number) s.get("eventsPerSecondMin")).doubleValue() / 1e6,
                ((Number) s.get("eventsPerSecondMax")).doubleValue() / 1e6);
    }

    private static String ms(Object v) {
        return v == null ? "-" : v + " ms";
    }

    private String markdown(Map<String, Object> results) {
        return "# Benchmarks: the price of exactly-once\n\n"
                + "Command: `" + results.get("command") + "`  \nMachine: " + results.get("machine") + "\n\n"
                + "```\n" + table(results).trim() + "\n```\n\n![events per second](chart.png)\n";
    }

    /** A bar chart of events/s per sink (with min..max) and, when measured, the scaling ratios. */
    @SuppressWarnings("unchecked")
    private void chart(Map<String, Object> results) throws IOException {
        BufferedImage img = new BufferedImage(900, 420, BufferedImage.TYPE_INT_RGB);
        Graphics2D g = img.createGraphics();
        g.setRenderingHint(RenderingHints.KEY_ANTIALIASING, RenderingHints.VALUE_ANTIALIAS_ON);
        g.setColor(Color.WHITE);
        g.fillRect(0, 0, img.getWidth(), img.getHeight());
        g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 13));
        Map<String, Map<String, Object>> sinks = (Map<String, Map<String, Object>>) ((Map<String, Object>) results.get("comparison")).get("sinks");
        double top = sinks.values().stream().mapToDouble(s -> ((Number) s.get("eventsPerSecondMax")).doubleValue()).max().orElse(1) * 1.15;
        g.setColor(Color.BLACK);
        g.drawString("events/s (median, min..max)", 40, 25);
        int x = 60;
        Color[] colors = {new Color(150, 150, 150), new Color(90, 140, 200), new Color(230, 120, 40)};
        int i = 0;
        for (Map.Entry<String, Map<String, Object>> e : sinks.entrySet()) {
            double median = ((Number) e.getValue().get("eventsPerSecondMedian")).doubleValue();
            int h = (int) (330 * median / top);
            g.setColor(colors[i++ % colors.length]);
            g.fillRect(x, 370 - h, 80, h);
            g.setColor(Color.BLACK);
            g.setStroke(new BasicStroke(2));
            int lo = (int) (330 * ((Number) e.getValue().get("eventsPerSecondMin")).doubleValue() / top);
            int hi = (int) (330 * ((Number) e.getValue().get("eventsPerSecondMax")).doubleValue() / top);
            g.drawLine(x + 40, 370 - lo, x + 40, 370 - hi);
            g.drawString(e.getKey(), x, 390);
            g.drawString(String.format("%.2fM", median / 1e6), x + 10, 365 - h);
            x += 120;
        }
        List<Map<String, Object>> scaling = (List<Map<String, Object>>) results.get("scaling");
        if (!scaling.isEmpty()) {
            g.drawString("ours / discarding by keys per window and buckets", 480, 25);
            int y = 60;
            for (Map<String, Object> r : scaling) {
                double ratio = ((Number) r.get("ratio")).doubleValue();
                g.setColor(new Color(230, 120, 40));
                g.fillRect(620, y - 12, (int) (250 * Math.min(ratio, 1.2)), 14);
                g.setColor(Color.BLACK);
                g.drawString(String.format("%,d keys, B=%s: %.2f", r.get("keys"), r.get("buckets"), ratio), 440, y);
                y += 22;
            }
            g.setColor(Color.GRAY);
            g.drawLine(620 + 250, 40, 620 + 250, y);
        }
        g.dispose();
        ImageIO.write(img, "png", out.resolve("chart.png").toFile());
    }

    private void say(String format, Object... args) {
        progress.printf("[%6.1fs] %s%n", (System.nanoTime() - startNanos) / 1e9, String.format(format, args));
    }
}
