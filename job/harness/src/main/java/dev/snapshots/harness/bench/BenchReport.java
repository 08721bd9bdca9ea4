package dev.snapshots.harness.bench;

import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.Graphics2D;
import java.awt.RenderingHints;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import javax.imageio.ImageIO;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.SerializationFeature;

/**
 * The benchmark's results as people read them: plain-text tables, BENCHMARKS.md, chart.png,
 * results.json, and a page ({@link BenchPage}).
 */
final class BenchReport {
    private static final ObjectMapper JSON =
            new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

    private BenchReport() {}

    /** Writes results.json, chart.png, BENCHMARKS.md and report.html into {@code out}. */
    static void write(Map<String, Object> results, Path out) throws IOException {
        Files.writeString(out.resolve("results.json"), JSON.writeValueAsString(results) + "\n");
        chart(results, out);
        Files.writeString(out.resolve("BENCHMARKS.md"), markdown(results));
        BenchPage.write(JSON.valueToTree(results), out.resolve("report.html"));
    }

    /** One line per entry of a profile's {name: percent}. */
    private static void appendShares(StringBuilder t, JsonNode shares) {
        shares.fields()
                .forEachRemaining(
                        e ->
                                t.append(
                                        String.format(
                                                "  %5.1f%%  %s%n",
                                                e.getValue().asDouble(), e.getKey())));
    }

    /** The comparison and the scaling table as plain-text tables. */
    @SuppressWarnings("unchecked")
    static String table(Map<String, Object> results) {
        StringBuilder t = new StringBuilder();
        Map<String, Object> c = (Map<String, Object>) results.get("comparison");
        Map<String, Map<String, Object>> sinks = (Map<String, Map<String, Object>>) c.get("sinks");
        t.append(
                String.format(
                        "%n%,d events, %,d keys per window, %s buckets, %s rounds; %s%n%n",
                        c.get("events"),
                        c.get("keys"),
                        c.get("buckets"),
                        c.get("runs"),
                        results.get("machine")));
        t.append(
                String.format(
                        "%-13s %12s %12s %9s %12s %10s %10s %12s %9s %9s %10s%n",
                        "sink",
                        "events/s",
                        "min..max",
                        "spread",
                        "whole run",
                        "commit p50",
                        "commit p99",
                        "bytes",
                        "objects",
                        "peak RSS",
                        "GC ms/min"));
        sinks.forEach(
                (sink, s) ->
                        t.append(
                                String.format(
                                        "%-13s %,12d %12s %8s%% %,12d %10s %10s %,12d %9s %6s MiB %,10d%n",
                                        sink,
                                        s.get("eventsPerSecondMedian"),
                                        shortRange(s),
                                        s.get("spreadPercent"),
                                        s.get("eventsPerSecondOverallMedian"),
                                        ms(s.get("commitMillisP50")),
                                        ms(s.get("commitMillisP99")),
                                        s.get("bytesWritten"),
                                        s.get("objectsWritten"),
                                        s.get("peakRssMiB"),
                                        s.get("gcPauseMillisPerMinute"))));
        t.append(
                String.format(
                        "%nevents/s: steady state, between 20%% and 90%% of the input; whole run: from RUNNING to FINISHED."
                                + "%nGC ms/min: collector pause time per minute of the run (median of the rounds)."
                                + "%nours / discarding: %.3f    ours / FileSink: %.3f%n",
                        c.get("oursOverDiscarding"), c.get("oursOverFileSink")));
        for (String[] series :
                new String[][] {
                    {"oldGenMiBByQuarter", "old generation (MiB) at each quarter of the last run"},
                    {
                        "checkpointKiBByQuarter",
                        "checkpoint size (KiB) at each quarter of the last run"
                    },
                    {
                        "lateAtWindow",
                        "events late at the window (dropped; 0 or the run measured less input)"
                    },
                    {"writtenPerSubtask", "rows into the sink per subtask"},
                    {
                        "pointerMillisP50",
                        "pointer update p50 (ms, its own task, after the commits)"
                    },
                    {"pointerMillisP99", "pointer update p99 (ms)"},
                    {"dataObjectsWritten", "data objects (Parquet files)"},
                    {"s3RequestsPerObject", "S3 requests per object"},
                    {"s3RequestsPerDataObject", "S3 requests per data object"}
                }) {
            // A sink that does not measure a figure (no pointer in FileSink, no S3 requests on
            // files) is left out of its line, and a line no sink measured is left out.
            StringBuilder line = new StringBuilder();
            sinks.forEach(
                    (sink, s) -> {
                        if (s.get(series[0]) != null) {
                            line.append("  ").append(sink).append(' ').append(s.get(series[0]));
                        }
                    });
            if (line.length() > 0) {
                t.append(series[1]).append(':').append(line).append('\n');
            }
        }
        sinks.forEach(
                (sink, s) -> {
                    if (s.get("profile") instanceof JsonNode p) {
                        t.append(
                                String.format(
                                        "%n%s, CPU samples (%d) by thread (Flink task):%n",
                                        sink, p.path("samples").asInt()));
                        appendShares(t, p.path("threadsPercent"));
                        t.append("  on:\n");
                        appendShares(t, p.path("topFramesPercent"));
                        for (String[] part :
                                new String[][] {
                                    {"ourInnermostFramesPercent", "our code (job and library)"},
                                    {"libraryInnermostFramesPercent", "the sink library"}
                                }) {
                            t.append("  with, innermost on the stack, ")
                                    .append(part[1])
                                    .append(":\n");
                            appendShares(t, p.path(part[0]));
                        }
                    }
                });
        cost(t, (List<Map<String, Object>>) results.get("cost"));
        commitLatency(t, (List<Map<String, Object>>) results.get("commitLatency"));
        List<Map<String, Object>> catchUp = (List<Map<String, Object>>) results.get("catchUp");
        if (!catchUp.isEmpty()) {
            t.append(
                    String.format(
                            "%ncatch-up of a backlog, 10 splits of tenfold densities over 2 subtasks:%n%-10s %12s %12s %16s %18s %9s%n",
                            "max drift",
                            "events",
                            "events/s",
                            "peak old gen",
                            "peak checkpoint",
                            "peak RSS"));
            for (Map<String, Object> r : catchUp) {
                t.append(
                        String.format(
                                "%-10s %,12d %,12d %12s MiB %14s KiB %5s MiB%n",
                                r.get("maxDrift"),
                                r.get("events"),
                                r.get("eventsPerSecond"),
                                r.get("peakOldGenMiB"),
                                r.get("peakCheckpointKiB"),
                                r.get("peakRssMiB")));
            }
        }
        List<Map<String, Object>> scaling = (List<Map<String, Object>>) results.get("scaling");
        if (!scaling.isEmpty()) {
            t.append(
                    String.format(
                            "%nmedians of the rounds per row; peak RSS and GC pause ms/min: FileSink / ours%n"
                                    + "%-10s %7s %10s %13s %13s %13s %10s %11s %17s %13s%n",
                            "keys",
                            "buckets",
                            "ev/key/win",
                            "discarding/s",
                            "filesink/s",
                            "ours/s",
                            "ours/disc.",
                            "ours/FileS.",
                            "peak RSS (MiB)",
                            "GC ms/min"));
            for (Map<String, Object> r : scaling) {
                t.append(
                        String.format(
                                "%,-10d %7s %10s %,13d %,13d %,13d %10.3f %11.3f %17s %13s%n",
                                r.get("keys"),
                                r.get("buckets"),
                                r.get("eventsPerKeyPerWindow"),
                                r.get("discardingEventsPerSecond"),
                                r.get("fileSinkEventsPerSecond"),
                                r.get("oursEventsPerSecond"),
                                r.get("ratio"),
                                r.get("oursOverFileSink"),
                                r.get("fileSinkPeakRssMiB") + " / " + r.get("peakRssMiB"),
                                r.get("fileSinkGcPauseMillisPerMinute")
                                        + " / "
                                        + r.get("gcPauseMillisPerMinute")));
            }
        }
        return t.toString();
    }

    /** CPU time and allocation per event, per key count, with the rounds' range and verdicts. */
    @SuppressWarnings("unchecked")
    private static void cost(StringBuilder t, List<Map<String, Object>> rows) {
        if (rows == null || rows.isEmpty()) {
            return;
        }
        t.append(
                String.format(
                        "%nCPU per event: the run's JVM, user + system, steady state; own: over the discarding sink of the round;"
                                + "%nsink threads: the sink's writer, committer and publisher threads alone, steady state and whole run."
                                + "%nAllocated: bytes per event over the JVM's threads. Rounds: median (min..max).%n"
                                + "%-10s %3s %-13s %36s %24s %36s %36s %24s%n",
                        "keys",
                        "B",
                        "sink",
                        "CPU ns/event",
                        "own CPU ns/event",
                        "sink threads' CPU ns/event",
                        "sink threads', whole run",
                        "allocated B/event"));
        for (Map<String, Object> r : rows) {
            Map<String, Object> cpu = (Map<String, Object>) r.get("cpuNanosPerEvent");
            Map<String, Object> own = (Map<String, Object>) r.get("ownCpuNanosPerEvent");
            Map<String, Object> threads = (Map<String, Object>) r.get("sinkCpuNanosPerEvent");
            Map<String, Object> wholeRun =
                    (Map<String, Object>) r.get("sinkCpuNanosPerEventOverall");
            Map<String, Object> alloc = (Map<String, Object>) r.get("allocatedBytesPerEvent");
            boolean first = true;
            for (String sink : cpu.keySet()) {
                t.append(
                        String.format(
                                "%-10s %3s %-13s %36s %24s %36s %36s %24s%n",
                                first ? String.format("%,d", r.get("keys")) : "",
                                first ? r.get("buckets") : "",
                                sink,
                                spread(cpu.get(sink)),
                                own.containsKey(sink) ? range(own.get(sink)) : "-",
                                spread(threads.get(sink)),
                                spread(wholeRun.get(sink)),
                                range(alloc.get(sink))));
                first = false;
            }
            t.append(
                    String.format(
                            "  ours / FileSink, sink threads' CPU over the whole run %s, %s rounds at most 1: %s"
                                    + "%n  (sink threads' CPU in the steady state: %s)"
                                    + "%n  whole process: ours / FileSink CPU %s: %s; ours / discarding CPU %s"
                                    + "%n  (wall clock, ours / discarding events/s: %s)%n",
                            ratio(r.get("oursOverFileSinkSinkCpuOverall")),
                            r.get("roundsOursAtMostFileSink"),
                            r.get("verdict"),
                            ratio(r.get("oursOverFileSinkSinkCpu")),
                            ratio(r.get("oursOverFileSinkCpu")),
                            r.get("wholeProcessVerdict"),
                            ratio(r.get("oursOverDiscardingCpu")),
                            ratio(r.get("oursOverDiscardingRate"))));
            if (r.get("redistributedOverOurs") instanceof Map<?, ?> over) {
                t.append(
                        String.format(
                                "  redistributed / ours (window at 3 over writers at 2, against"
                                        + " chained at 2): CPU %s, allocated %s, events/s %s%n",
                                ratio(over.get("cpuNanosPerEvent")),
                                ratio(over.get("allocatedBytesPerEvent")),
                                ratio(over.get("eventsPerSecond"))));
            }
        }
    }

    /** Commit p99 and requests per data object per shape, with the rounds' range and verdicts. */
    @SuppressWarnings("unchecked")
    private static void commitLatency(StringBuilder t, List<Map<String, Object>> rows) {
        if (rows == null || rows.isEmpty()) {
            return;
        }
        t.append(
                String.format(
                        "%nCommits against S3Proxy, rounds median (min..max); goals: p99 <= 500 ms, <= 1.2 requests per data object%n"));
        for (Map<String, Object> r : rows) {
            t.append(
                    String.format(
                            "%s, %s rounds, %s commits:%n  commit p99 ms %s: %s%n  pointer update p99 ms, after: %s%n  requests per data object %s: %s%n",
                            r.get("shape"),
                            r.get("rounds"),
                            r.get("commitsMeasured"),
                            range(r.get("commitP99Millis")),
                            r.get("commitP99Verdict"),
                            range(r.get("pointerP99Millis")),
                            range(r.get("requestsPerDataObject"), 2),
                            r.get("requestsVerdict")));
        }
    }

    /** "median (min..max)" of a {@link Rounds.Stats} map, one decimal. */
    private static String range(Object stats) {
        return range(stats, 1);
    }

    /** "median (min..max) x%": a sink's rounds and their spread, for the CPU figures. */
    @SuppressWarnings("unchecked")
    private static String spread(Object stats) {
        return String.format(
                "%s %.1f%%", range(stats), number((Map<String, Object>) stats, "spreadPercent"));
    }

    @SuppressWarnings("unchecked")
    private static String range(Object stats, int digits) {
        Map<String, Object> s = (Map<String, Object>) stats;
        String f = "%,." + digits + "f";
        return String.format(
                f + " (" + f + ".." + f + ")",
                number(s, "median"),
                number(s, "min"),
                number(s, "max"));
    }

    @SuppressWarnings("unchecked")
    private static String ratio(Object stats) {
        Map<String, Object> s = (Map<String, Object>) stats;
        return String.format(
                "%.3f (%.3f..%.3f, spread %.1f%%)",
                number(s, "median"),
                number(s, "min"),
                number(s, "max"),
                number(s, "spreadPercent"));
    }

    private static double number(Map<String, Object> s, String name) {
        return ((Number) s.get(name)).doubleValue();
    }

    private static String shortRange(Map<String, Object> s) {
        return String.format(
                "%.2f..%.2fM",
                ((Number) s.get("eventsPerSecondMin")).doubleValue() / 1e6,
                ((Number) s.get("eventsPerSecondMax")).doubleValue() / 1e6);
    }

    private static String ms(Object v) {
        return v == null ? "-" : v + " ms";
    }

    private static String markdown(Map<String, Object> results) {
        return "# Benchmarks: the price of exactly-once\n\n"
                + "Command: `"
                + results.get("command")
                + "`  \nMachine: "
                + results.get("machine")
                + "\n\n"
                + "```\n"
                + table(results).trim()
                + "\n```\n\n![events per second](chart.png)\n";
    }

    /** A bar chart of events/s per sink (with min..max) and, when measured, the scaling ratios. */
    @SuppressWarnings("unchecked")
    private static void chart(Map<String, Object> results, Path out) throws IOException {
        BufferedImage img = new BufferedImage(900, 420, BufferedImage.TYPE_INT_RGB);
        Graphics2D g = img.createGraphics();
        g.setRenderingHint(RenderingHints.KEY_ANTIALIASING, RenderingHints.VALUE_ANTIALIAS_ON);
        g.setColor(Color.WHITE);
        g.fillRect(0, 0, img.getWidth(), img.getHeight());
        g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 13));
        Map<String, Map<String, Object>> sinks =
                (Map<String, Map<String, Object>>)
                        ((Map<String, Object>) results.get("comparison")).get("sinks");
        double top =
                sinks.values().stream()
                                .mapToDouble(
                                        s -> ((Number) s.get("eventsPerSecondMax")).doubleValue())
                                .max()
                                .orElse(1)
                        * 1.15;
        g.setColor(Color.BLACK);
        g.drawString("events/s (median, min..max)", 40, 25);
        int x = 60;
        Color[] colors = {
            new Color(150, 150, 150), new Color(90, 140, 200), new Color(230, 120, 40)
        };
        int i = 0;
        for (Map.Entry<String, Map<String, Object>> e : sinks.entrySet()) {
            double median = ((Number) e.getValue().get("eventsPerSecondMedian")).doubleValue();
            int h = (int) (330 * median / top);
            g.setColor(colors[i++ % colors.length]);
            g.fillRect(x, 370 - h, 80, h);
            g.setColor(Color.BLACK);
            g.setStroke(new BasicStroke(2));
            int lo =
                    (int)
                            (330
                                    * ((Number) e.getValue().get("eventsPerSecondMin"))
                                            .doubleValue()
                                    / top);
            int hi =
                    (int)
                            (330
                                    * ((Number) e.getValue().get("eventsPerSecondMax"))
                                            .doubleValue()
                                    / top);
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
                g.drawString(
                        String.format(
                                "%,d keys, B=%s: %.2f", r.get("keys"), r.get("buckets"), ratio),
                        440,
                        y);
                y += 22;
            }
            g.setColor(Color.GRAY);
            g.drawLine(620 + 250, 40, 620 + 250, y);
        }
        g.dispose();
        ImageIO.write(img, "png", out.resolve("chart.png").toFile());
    }
}
