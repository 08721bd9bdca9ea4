package dev.snapshots.jmh;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import org.openjdk.jmh.infra.BenchmarkParams;
import org.openjdk.jmh.profile.GCProfiler;
import org.openjdk.jmh.results.Result;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.results.format.ResultFormatType;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.options.OptionsBuilder;

/**
 * {@code ./snapshots jmh [ROWS,...] [PATH,...]}: runs {@link PartBenchmark} with JMH's GC profiler
 * and prints a table per row of a part: time and bytes allocated per row, the part's size, and our
 * path against the floor with its verdict (at most {@value #GOAL}x). JMH's own results go to {@code
 * target/jmh/results.json}.
 */
public final class PartBenchmarks {
    /** Our part path may cost at most this many times the floor per row. */
    static final double GOAL = 1.25;

    private PartBenchmarks() {}

    public static void main(String[] args) throws Exception {
        if (args.length > 0 && args[0].startsWith("-")) {
            System.out.println(
                    "usage: snapshots jmh [ROWS,...] [PATH,...]   one part's CPU and allocation per"
                            + " row: ours against the floor (paths: floor, ours, parquetAvro)");
            return;
        }
        Path out = Files.createDirectories(Path.of("target/jmh"));
        OptionsBuilder options = new OptionsBuilder();
        // Every path, or those named: "floor,ours" leaves parquet-avro out of a run about them.
        String paths = args.length > 1 ? "(" + args[1].replace(',', '|') + ")$" : "";
        options.include(PartBenchmark.class.getName() + "\\." + paths)
                .addProfiler(GCProfiler.class)
                .resultFormat(ResultFormatType.JSON)
                .result(out.resolve("results.json").toString());
        if (args.length > 0) {
            options.param("rows", args[0].split(","));
        }
        Collection<RunResult> results = new Runner(options.build()).run();
        System.out.print(table(results));
    }

    static String table(Collection<RunResult> results) throws Exception {
        // rows -> benchmark -> its result
        Map<Integer, Map<String, RunResult>> byRows = new LinkedHashMap<>();
        for (RunResult r : results) {
            BenchmarkParams p = r.getParams();
            String name = p.getBenchmark().substring(p.getBenchmark().lastIndexOf('.') + 1);
            byRows.computeIfAbsent(Integer.parseInt(p.getParam("rows")), k -> new LinkedHashMap<>())
                    .put(name, r);
        }
        StringBuilder t = new StringBuilder();
        t.append(
                String.format(
                        Locale.ROOT,
                        "%n| rows | path | CPU ns per row, median (min..max of iterations) | wall ns per row | bytes allocated per row | output bytes |%n|---|---|---|---|---|---|%n"));
        StringBuilder verdicts = new StringBuilder();
        for (Map.Entry<Integer, Map<String, RunResult>> e : byRows.entrySet()) {
            int rows = e.getKey();
            Map<String, double[]> cpu = new LinkedHashMap<>();
            for (Map.Entry<String, RunResult> b : e.getValue().entrySet()) {
                double[] perRow = cpuPerRow(b.getValue(), rows);
                cpu.put(b.getKey(), perRow);
                Result<?> alloc = b.getValue().getSecondaryResults().get("gc.alloc.rate.norm");
                t.append(
                        String.format(
                                Locale.ROOT,
                                "| %,d | %s | %,.0f (%,.0f..%,.0f) | %,.0f | %,.0f | %,d |%n",
                                rows,
                                b.getKey(),
                                median(perRow),
                                perRow[0],
                                perRow[perRow.length - 1],
                                b.getValue().getPrimaryResult().getScore() * 1000 / rows,
                                alloc == null ? Double.NaN : alloc.getScore() / rows,
                                outputBytes(b.getKey(), rows)));
            }
            if (cpu.containsKey("ours") && cpu.containsKey("floor")) {
                double[] ours = cpu.get("ours");
                double[] floor = cpu.get("floor");
                // Bounds: our fastest iteration over the floor's slowest, and the reverse.
                double low = ours[0] / floor[floor.length - 1];
                double high = ours[ours.length - 1] / floor[0];
                verdicts.append(
                        String.format(
                                Locale.ROOT,
                                "| %,d | %.2f (%.2f..%.2f) | %s |%n",
                                rows,
                                median(ours) / median(floor),
                                low,
                                high,
                                verdict(low, high)));
            }
        }
        if (verdicts.length() > 0) {
            t.append(
                            String.format(
                                    Locale.ROOT,
                                    "%n| rows | ours / floor, CPU per row (bounds from the iterations) | at most %.2fx |%n|---|---|---|%n",
                                    GOAL))
                    .append(verdicts);
        }
        return t.toString();
    }

    /** Each measured iteration's CPU time per row of the benchmark thread, sorted. */
    private static double[] cpuPerRow(RunResult result, int rows) {
        return result.getBenchmarkResults().stream()
                .flatMap(b -> b.getIterationResults().stream())
                .mapToDouble(
                        i ->
                                i.getSecondaryResults().get("cpuNanos").getScore()
                                        / i.getSecondaryResults().get("parts").getScore()
                                        / rows)
                .sorted()
                .toArray();
    }

    private static double median(double[] sorted) {
        int n = sorted.length;
        return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
    }

    /** Met when even the worst bound is within the goal, missed when even the best is not. */
    static String verdict(double low, double high) {
        return high <= GOAL ? "met" : low > GOAL ? "missed" : "inconclusive";
    }

    /** The part's size on that path: written once more here, outside JMH's measurement. */
    private static long outputBytes(String path, int rows) throws Exception {
        PartBenchmark b = new PartBenchmark();
        b.part = PartBenchmark.rows(rows, 42);
        switch (path) {
            case "ours" -> b.ours();
            case "parquetAvro" -> b.parquetAvro();
            default -> b.floor();
        }
        return b.outputBytes;
    }
}
