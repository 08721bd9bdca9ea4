package dev.snapshots.harness.bench;

import dev.snapshots.harness.bench.BenchSummary.Measured;
import dev.snapshots.harness.cluster.FileTrees;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.flink.annotation.Internal;

/**
 * {@code snapshots bench}: what the guarantee costs. The same pipeline on the same input, ending in
 * a discarding sink (the upper bound), Flink's FileSink writing Parquet (what users would otherwise
 * pick) and our sink, run in turn A B C A B C so machine drift hits all three alike, each run in a
 * JVM of its own. Then a scaling table of our sink against the discarding sink and FileSink over
 * keys per window and bucket counts.
 *
 * <p>The roles: {@link BenchPlan} (flags and the runs in order), {@link BenchRunner} (a JVM per
 * run), {@link BenchSummary} (statistics) and {@link BenchReport} (tables, chart and files).
 */
@Internal
public final class Bench {
    public static final String USAGE =
            String.join(
                    "\n",
                    "usage: snapshots bench [--events N] [--keys K] [--buckets B] [--store file|s3] [--runs R]",
                    "                       [--scale-keys K1,K2,..] [--scale-buckets B1,B2,..] [--scale-events N] [--heap SIZE] [--gc g1|parallel] [--profile yes|no]",
                    "                       [--checkpoint-interval D] [--publish-concurrency N] [--catch-up yes|no] [--commit-shapes BxP,..]",
                    "                       [--redistributed yes|no]",
                    "",
                    "  --events N          events per comparison run [20000000]",
                    "  --keys K            keys (devices) per window [10000]",
                    "  --buckets B         buckets per window for our sink [4]",
                    "  --store file|s3     local files, or S3Proxy over HTTP with requests counted at a proxy [file]",
                    "  --runs R            rounds of discarding, FileSink, ours [3]",
                    "  --scale-keys LIST   keys per window for the scaling table (discarding, FileSink, then ours per bucket count); 'none' skips it [10000,100000,1000000]",
                    "  --scale-buckets LIST  bucket counts for the scaling table [4]",
                    "  --scale-events N    events per scaling run (at least 8 x keys) [8000000]",
                    "  --heap SIZE         -Xmx of each run's JVM [3g]",
                    "  --checkpoint-interval D  how often the runs checkpoint (and FileSink and ours commit) [10s, the job's default]",
                    "  --publish-concurrency N  parts our sink publishes at a time per commit [8, the sink's default]",
                    "  --gc g1|parallel    the runs' garbage collector [g1]",
                    "  --profile yes|no    record each run with JFR and report where its CPU samples fall [no]",
                    "  --commit-shapes LIST  with --store s3, after the runs: drive our committers at production's shape,",
                    "                      B parts a window at P committers (e.g. 16x4,128x16), checkpoints every 10 s,",
                    "                      6 five-minute windows, --runs rounds each: commit p99 and requests per data object [none]",
                    "  --catch-up yes|no   also replay a backlog of 10 splits whose densities differ tenfold, with and without",
                    "                      watermark alignment (scale-events events, keys per window, checkpoints every 2 s):",
                    "                      events/s, heap and state [no]",
                    "  --redistributed yes|no  each round also runs ours with the window at 3 subtasks, which splits B's buckets:",
                    "                      its rows go by key to the writers at 2; CPU, allocation and events/s over ours' [no]",
                    "",
                    "Writes target/bench/results.json, BENCHMARKS.md, chart.png and report.html (one self-contained page).",
                    "One part's encoding alone (JMH: ours, parquet-avro, Parquet's floor): ./snapshots jmh [ROWS,..], about 5 minutes.");

    private Bench() {}

    public static int run(String[] args, PrintStream stdout) throws Exception {
        BenchPlan plan = BenchPlan.parse(args);
        Path root = Path.of(System.getProperty("snapshots.root", ".")).toAbsolutePath().normalize();
        Path out = root.resolve("target/bench");
        FileTrees.deleteRecursively(out);
        Files.createDirectories(out);
        Map<String, Object> results = new LinkedHashMap<>();
        results.put("command", plan.command());
        results.put("machine", machine());
        try (BenchRunner runner = BenchRunner.start(root, out, plan, stdout)) {
            List<Measured> measured = new ArrayList<>();
            for (BenchPlan.Run run : plan.runs()) {
                measured.add(new Measured(run, runner.run(run)));
            }
            results.put("cost", BenchSummary.cost(measured));
            results.put("comparison", BenchSummary.comparison(plan, measured));
            results.put("scaling", BenchSummary.scaling(measured));
            results.put("catchUp", BenchSummary.catchUp(measured));
            Map<CommitShapes.Shape, List<CommitShapes.Round>> shapes = new LinkedHashMap<>();
            for (CommitShapes.Shape shape : plan.commitShapes()) {
                for (int r = 1; r <= plan.rounds(); r++) {
                    shapes.computeIfAbsent(shape, s -> new ArrayList<>())
                            .add(runner.commitRound(shape, r));
                }
            }
            if (plan.s3()) {
                results.put("commitLatency", BenchSummary.commitLatency(plan, measured, shapes));
            }
            results.put("elapsedSeconds", runner.elapsedSeconds());
            BenchReport.write(results, out);
            runner.say(
                    "wrote %s, BENCHMARKS.md, chart.png and report.html",
                    out.resolve("results.json"));
        }
        stdout.println(BenchReport.table(results));
        return 0;
    }

    private static String machine() {
        return Runtime.getRuntime().availableProcessors()
                + " cores, "
                + (osMemory() >> 30)
                + " GiB, Java "
                + System.getProperty("java.version")
                + ", "
                + System.getProperty("os.name")
                + " "
                + System.getProperty("os.arch")
                + ", "
                + Instant.now();
    }

    private static long osMemory() {
        java.lang.management.OperatingSystemMXBean os =
                java.lang.management.ManagementFactory.getOperatingSystemMXBean();
        return os instanceof com.sun.management.OperatingSystemMXBean sun
                ? sun.getTotalMemorySize()
                : 0;
    }
}
