package dev.snapshots.harness.bench;

import dev.snapshots.harness.cluster.FileTrees;
import dev.snapshots.harness.cluster.LocalCluster;
import dev.snapshots.store.ObjectStore;
import dev.snapshots.store.StoreSpec;
import dev.snapshots.testkit.FaultProxy;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.SerializationFeature;

/**
 * Launches each {@link BenchRun} in a JVM of its own and collects what it measured, plus the bytes
 * and objects it left in its store, the S3 requests it made and, when profiled, where its CPU went.
 * With {@code --store s3} it runs S3Proxy for them, behind a proxy that counts their requests.
 */
final class BenchRunner implements AutoCloseable {
    private static final ObjectMapper JSON =
            new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

    private final Path root;
    private final Path out;
    private final BenchPlan plan;
    private final PrintStream progress;
    private final long startNanos = System.nanoTime();
    private final LocalCluster s3;

    /**
     * Between the runs and S3Proxy, counting their requests (it injects no faults); null when the
     * runs write local files.
     */
    private FaultProxy counter;

    private int runNumber;

    private BenchRunner(Path root, Path out, BenchPlan plan, PrintStream progress) {
        this.root = root;
        this.out = out;
        this.plan = plan;
        this.progress = progress;
        this.s3 = new LocalCluster(root, out.resolve("s3"));
    }

    /** A runner for {@code plan}'s runs, with S3Proxy up when they write to S3. */
    static BenchRunner start(Path root, Path out, BenchPlan plan, PrintStream progress)
            throws Exception {
        BenchRunner runner = new BenchRunner(root, out, plan, progress);
        if (plan.s3()) {
            try {
                runner.counter = new FaultProxy(runner.s3.startS3Proxy(quiet()), 0);
            } catch (Exception e) {
                runner.close();
                throw e;
            }
        }
        return runner;
    }

    @Override
    public void close() throws Exception {
        if (counter != null) {
            counter.close();
        }
        s3.down(quiet());
    }

    /** One run in a fresh JVM; its measurements, plus bytes written and requests made. */
    JsonNode run(BenchPlan.Run run) throws Exception {
        BenchRun.Sink sink = run.sink();
        int n = ++runNumber;
        String name = String.format("%02d-%s", n, sink.name().toLowerCase(Locale.ROOT));
        String store;
        String endpoint = "";
        if (counter == null) {
            store = "file://" + out.resolve("runs/" + name);
        } else {
            endpoint = counter.endpoint();
            store =
                    (sink == BenchRun.Sink.FILESINK ? "s3a://" : "s3://")
                            + LocalCluster.BUCKET
                            + "/"
                            + name;
        }
        Path result = out.resolve("runs/" + name + ".json");
        Files.createDirectories(result.getParent());
        List<String> command =
                new ArrayList<>(
                        List.of(
                                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                                "-Xms" + plan.heap(),
                                "-Xmx" + plan.heap(),
                                plan.g1() ? "-XX:+UseG1GC" : "-XX:+UseParallelGC",
                                // BenchRun.jitNanos reads the compiler threads' CPU time.
                                "-XX:-UseDynamicNumberOfCompilerThreads",
                                // its MiniCluster's scratch where the launcher keeps the tool's
                                "-Djava.io.tmpdir=" + System.getProperty("java.io.tmpdir"),
                                "-Dlog4j.configurationFile="
                                        + root.resolve(
                                                "job/harness/src/launcher/log4j2.properties"),
                                "-Dsnapshots.log=" + out.resolve("runs/" + name + ".log"),
                                "-cp",
                                System.getProperty("java.class.path"),
                                BenchRun.class.getName(),
                                sink.name(),
                                Long.toString(run.events()),
                                Integer.toString(run.keys()),
                                Integer.toString(run.buckets()),
                                store,
                                endpoint,
                                result.toString(),
                                plan.checkpointInterval(),
                                plan.publishConcurrency()));
        if (run.maxDrift() != null) {
            command.add(run.maxDrift());
        }
        if (plan.profile()) {
            command.add(
                    1,
                    "-XX:StartFlightRecording=filename="
                            + out.resolve("runs/" + name + ".jfr")
                            + ",settings=profile");
        }
        ProcessBuilder pb =
                new ProcessBuilder(command)
                        .redirectErrorStream(true)
                        .redirectOutput(out.resolve("runs/" + name + ".out").toFile());
        pb.environment()
                .put(
                        "FLINK_PLUGINS_DIR",
                        root.resolve("deploy/flink-local/target/bench-plugins").toString());
        int requestsBefore = counter == null ? 0 : counter.forwarded();
        say(
                "%s: %s, %,d events, %,d keys, %d buckets ...",
                run.label(),
                sink.name().toLowerCase(Locale.ROOT),
                run.events(),
                run.keys(),
                run.buckets());
        Process p = pb.start();
        if (!p.waitFor(30, TimeUnit.MINUTES) || p.exitValue() != 0 || !Files.exists(result)) {
            p.destroyForcibly();
            throw new IOException(
                    "run " + name + " failed; see " + out.resolve("runs/" + name + ".out"));
        }
        Map<String, Object> measured = JSON.readValue(result.toFile(), LinkedHashMap.class);
        long[] written = written(store, endpoint);
        measured.put("bytesWritten", written[0]);
        measured.put("objectsWritten", written[1]);
        measured.put("dataObjectsWritten", written[2]);
        if (counter != null) {
            int requests = counter.forwarded() - requestsBefore;
            measured.put("s3Requests", requests);
            measured.put("s3RequestsPerObject", perObject(requests, written[1]));
            measured.put("s3RequestsPerDataObject", perObject(requests, written[2]));
        }
        if (plan.profile()) {
            measured.put("profile", Profile.of(out.resolve("runs/" + name + ".jfr")));
        }
        JsonNode node = JSON.valueToTree(measured);
        Files.writeString(result, JSON.writeValueAsString(node));
        if (counter == null) {
            FileTrees.deleteRecursively(out.resolve("runs/" + name));
        }
        say(
                "  %,.0f events/s steady (%,.0f over the whole %.1f s), %,d objects, %,d bytes, peak RSS %d MiB",
                node.path("eventsPerSecond").asDouble(),
                node.path("eventsPerSecondOverall").asDouble(),
                node.path("seconds").asDouble(),
                written[1],
                written[0],
                node.path("peakRssBytes").asLong() >> 20);
        return node;
    }

    /** One round of our committers at production's commit shape, against the runs' S3Proxy. */
    CommitShapes.Round commitRound(CommitShapes.Shape shape, int round) throws Exception {
        String pipeline =
                String.format(
                        Locale.ROOT, "shape-%dx%d-%d", shape.buckets(), shape.parallelism(), round);
        say("commit shape %s, round %d/%d ...", shape, round, plan.rounds());
        CommitShapes.Round r =
                CommitShapes.round(
                        shape,
                        plan.keys(),
                        pipeline,
                        StoreSpec.parse("s3://" + LocalCluster.BUCKET + "/" + pipeline)
                                .withEndpoint(counter.endpoint()),
                        Integer.parseInt(plan.publishConcurrency()),
                        counter::forwarded);
        say(
                "  window commit p99 %d ms, %.2f requests per data object",
                r.p99(), (double) r.requests() / r.dataObjects());
        return r;
    }

    void say(String format, Object... args) {
        progress.printf(
                "[%6.1fs] %s%n",
                (System.nanoTime() - startNanos) / 1e9, String.format(format, args));
    }

    long elapsedSeconds() {
        return Math.round((System.nanoTime() - startNanos) / 1e9);
    }

    private static PrintStream quiet() {
        return new PrintStream(new ByteArrayOutputStream());
    }

    private static double perObject(int requests, long objects) {
        return objects == 0 ? 0 : BenchSummary.round((double) requests / objects, 2);
    }

    /**
     * Bytes, objects and data objects a run left in its store; a discarding run leaves none. Data
     * objects are the Parquet files: not our manifests and pointer, whose names start with '_'.
     */
    private static long[] written(String store, String endpoint) throws IOException {
        long[] total = {0, 0, 0};
        if (store.startsWith("file://")) {
            Path dir = Path.of(store.substring("file://".length()));
            if (Files.isDirectory(dir)) {
                try (Stream<Path> files = Files.walk(dir)) {
                    files.filter(Files::isRegularFile)
                            .filter(f -> !f.getFileName().toString().startsWith("."))
                            .forEach(f -> count(total, root(dir, f), f.toFile().length()));
                }
            }
            return total;
        }
        StoreSpec spec =
                StoreSpec.parse(store.replaceFirst("^s3a://", "s3://")).withEndpoint(endpoint);
        try (ObjectStore s = spec.open()) {
            s.list("", o -> count(total, o.key(), o.size()));
        }
        return total;
    }

    private static String root(Path dir, Path file) {
        return dir.relativize(file).toString().replace('\\', '/');
    }

    private static void count(long[] total, String key, long size) {
        total[0] += size;
        total[1]++;
        if (!key.startsWith("_") && !key.contains("/_")) {
            total[2]++;
        }
    }
}
