package dev.snapshots.harness.bench;

import dev.snapshots.cli.page.Charts;
import dev.snapshots.cli.page.Html;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;

/**
 * The benchmark's results.json as one page: the comparison's rates as bars with their rounds'
 * range, the ratios, every figure each sink measured side by side, the scaling rows and their
 * ratios, the catch-ups, and where each profiled sink spent its CPU samples. It draws what the
 * results hold, figure by figure: a figure added to the results appears in its table without a
 * change here, and a figure a sink did not measure is left blank.
 */
final class BenchPage {
    private static final String CSS =
            "td.n{white-space:nowrap}.wide{overflow-x:auto;max-width:100%}";

    private BenchPage() {}

    static void write(JsonNode results, Path file) throws IOException {
        try (Html h = Html.page(file, "Benchmarks: the price of exactly-once", CSS)) {
            h.el("h1", "", "Benchmarks: the price of exactly-once");
            h.raw("<p class=\"sub\">")
                    .text(
                            results.path("command").asText()
                                    + " · "
                                    + results.path("machine").asText())
                    .raw("</p>");
            cost(h, results.path("cost"));
            commitLatency(h, results.path("commitLatency"));
            comparison(h, results.path("comparison"));
            scaling(h, results.path("scaling"));
            table(h, "Catch-up of a backlog", results.path("catchUp"));
            profiles(h, results.path("comparison").path("sinks"));
            // Sections this page does not know yet, drawn as tables all the same.
            for (Iterator<Map.Entry<String, JsonNode>> it = results.fields(); it.hasNext(); ) {
                Map.Entry<String, JsonNode> e = it.next();
                if (!Set.of(
                                "command",
                                "machine",
                                "cost",
                                "commitLatency",
                                "comparison",
                                "scaling",
                                "catchUp")
                        .contains(e.getKey())) {
                    section(h, e.getKey(), e.getValue());
                }
            }
        }
    }

    private static void comparison(Html h, JsonNode c) {
        if (!c.isObject()) {
            return;
        }
        h.el("h2", "", "Comparison");
        h.el(
                "p",
                "class=\"sub\"",
                "events "
                        + c.path("events").asText("?")
                        + ", keys per window "
                        + c.path("keys").asText("?")
                        + ", buckets "
                        + c.path("buckets").asText("?")
                        + ", rounds "
                        + c.path("runs").asText("?"));
        JsonNode sinks = c.path("sinks");
        List<Charts.Bar> rates = new ArrayList<>();
        for (Iterator<Map.Entry<String, JsonNode>> it = sinks.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> s = it.next();
            JsonNode f = s.getValue();
            if (f.has("eventsPerSecondMedian")) {
                rates.add(
                        new Charts.Bar(
                                s.getKey(),
                                f.path("eventsPerSecondMedian").asDouble(),
                                f.path("eventsPerSecondMin").asDouble(Double.NaN),
                                f.path("eventsPerSecondMax").asDouble(Double.NaN),
                                Html.count(f.path("eventsPerSecondMedian").asLong())
                                        + " events/s (rounds "
                                        + Html.count(f.path("eventsPerSecondMin").asLong())
                                        + ".."
                                        + Html.count(f.path("eventsPerSecondMax").asLong())
                                        + ")",
                                rates.size()));
            }
        }
        if (!rates.isEmpty()) {
            Charts.bars(
                    h,
                    "rates",
                    "Events per second in the steady state: the median of the rounds, the whisker their range",
                    rates);
        }
        List<Charts.Bar> ratios = new ArrayList<>();
        for (Iterator<Map.Entry<String, JsonNode>> it = c.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            if (e.getKey().startsWith("oursOver") && e.getValue().isNumber()) {
                ratios.add(
                        new Charts.Bar(
                                "ours / " + e.getKey().substring("oursOver".length()),
                                e.getValue().asDouble(),
                                Double.NaN,
                                Double.NaN,
                                String.format(Locale.ROOT, "%.3f", e.getValue().asDouble()),
                                ratios.size()));
            }
        }
        if (!ratios.isEmpty()) {
            Charts.bars(h, "ratios", "Our sink's rate over the others' (1 is as fast)", ratios);
        }
        // Every figure any sink measured, a column per sink.
        Set<String> figures = new LinkedHashSet<>();
        sinks.forEach(s -> s.fieldNames().forEachRemaining(figures::add));
        figures.remove("profile");
        h.raw("<div class=\"wide\"><table><tr><th>figure</th>");
        sinks.fieldNames().forEachRemaining(s -> h.el("th", "class=\"n\"", s));
        h.raw("</tr>");
        for (String f : figures) {
            h.raw("<tr>").el("td", "", f);
            sinks.forEach(s -> h.el("td", "class=\"n\"", s.has(f) ? value(s.path(f)) : ""));
            h.raw("</tr>");
        }
        h.raw("</table></div>");
    }

    /**
     * Per key count: each sink's CPU time per event as a bar at the rounds' median with their
     * range, then every figure of the row (own CPU, allocation, the ratios with their spread, the
     * verdict).
     */
    private static void cost(Html h, JsonNode rows) {
        if (!rows.isArray() || rows.isEmpty()) {
            return;
        }
        h.el("h2", "", "Cost per event: CPU time and allocation");
        h.el(
                "p",
                "class=\"sub\"",
                "CPU: the run's JVM, user + system, in the steady state; own: over the discarding"
                        + " sink of the same round; sink threads: the sink's writer, committer and"
                        + " publisher threads alone, which decide. A ratio whose rounds spread more"
                        + " than "
                        + Rounds.INCONCLUSIVE_SPREAD_PERCENT
                        + " % is inconclusive.");
        int chart = 0;
        for (JsonNode r : rows) {
            String title =
                    Html.count(r.path("keys").asLong())
                            + " keys, B="
                            + r.path("buckets").asText()
                            + ", "
                            + r.path("rounds").asText()
                            + " rounds: "
                            + r.path("verdict").asText();
            List<Charts.Bar> bars = new ArrayList<>();
            for (Iterator<Map.Entry<String, JsonNode>> it = r.path("cpuNanosPerEvent").fields();
                    it.hasNext(); ) {
                Map.Entry<String, JsonNode> s = it.next();
                JsonNode f = s.getValue();
                bars.add(
                        new Charts.Bar(
                                s.getKey(),
                                f.path("median").asDouble(),
                                f.path("min").asDouble(),
                                f.path("max").asDouble(),
                                value(f.path("median"))
                                        + " ns/event (rounds "
                                        + value(f.path("min"))
                                        + ".."
                                        + value(f.path("max"))
                                        + ")",
                                bars.size()));
            }
            Charts.bars(
                    h,
                    "cost-" + chart++,
                    "CPU ns per event, "
                            + title
                            + ": the median of the rounds, the whisker their range",
                    bars);
            h.el("h3", "", title);
            // A sink's figures side by side, each the median of the rounds and their range.
            JsonNode cpu = r.path("cpuNanosPerEvent");
            h.raw("<div class=\"wide\"><table><tr><th>per event</th>");
            cpu.fieldNames().forEachRemaining(sink -> h.el("th", "class=\"n\"", sink));
            h.raw("</tr>");
            for (String[] f :
                    new String[][] {
                        {"cpuNanosPerEvent", "CPU ns"},
                        {"ownCpuNanosPerEvent", "own CPU ns (over discarding)"},
                        {"sinkCpuNanosPerEvent", "sink threads' CPU ns"},
                        {"sinkCpuNanosPerEventOverall", "sink threads' CPU ns, whole run"},
                        {"jitCpuNanosPerEvent", "JIT CPU ns (within CPU)"},
                        {"allocatedBytesPerEvent", "allocated bytes"}
                    }) {
                h.raw("<tr>").el("td", "", f[1]);
                cpu.fieldNames()
                        .forEachRemaining(
                                sink -> {
                                    JsonNode s = r.path(f[0]).path(sink);
                                    h.el(
                                            "td",
                                            "class=\"n\"",
                                            s.has("median") ? stats(s) + ", " + spread(s) : "");
                                });
                h.raw("</tr>");
            }
            h.raw("</table></div><div class=\"wide\"><table><tr><th>ratio, round by round</th>")
                    .el("th", "class=\"n\"", "median (min..max)")
                    .el("th", "class=\"n\"", "spread")
                    .raw("</tr>");
            JsonNode over = r.path("redistributedOverOurs");
            for (Object[] f :
                    new Object[][] {
                        {
                            r.path("oursOverFileSinkSinkCpuOverall"),
                            "ours / FileSink, sink threads' CPU per event, whole run"
                        },
                        {
                            r.path("oursOverFileSinkSinkCpu"),
                            "ours / FileSink, sink threads' CPU per event, steady state"
                        },
                        {r.path("oursOverFileSinkCpu"), "ours / FileSink, CPU per event"},
                        {r.path("oursOverDiscardingCpu"), "ours / discarding, CPU per event"},
                        {
                            r.path("oursOverDiscardingRate"),
                            "ours / discarding, events/s (wall clock)"
                        },
                        {over.path("cpuNanosPerEvent"), "redistributed / ours, CPU per event"},
                        {over.path("allocatedBytesPerEvent"), "redistributed / ours, allocated"},
                        {over.path("eventsPerSecond"), "redistributed / ours, events/s"}
                    }) {
                JsonNode ratio = (JsonNode) f[0];
                if (!ratio.isMissingNode()) {
                    h.raw("<tr>")
                            .el("td", "", (String) f[1])
                            .el("td", "class=\"n\"", stats(ratio))
                            .el("td", "class=\"n\"", spread(ratio))
                            .raw("</tr>");
                }
            }
            h.raw("</table></div>");
            h.el(
                    "p",
                    "",
                    r.path("goal").asText()
                            + ": "
                            + r.path("verdict").asText()
                            + " (ours at most FileSink in "
                            + r.path("roundsOursAtMostFileSink").asText()
                            + " rounds)");
        }
    }

    /**
     * Commit latency and requests per shape: each round's p99 and requests per data object, their
     * range and the verdicts against the goals.
     */
    private static void commitLatency(Html h, JsonNode rows) {
        if (!rows.isArray() || rows.isEmpty()) {
            return;
        }
        h.el("h2", "", "Commits: latency and requests against S3Proxy");
        h.raw("<div class=\"wide\"><table><tr>");
        for (String c :
                List.of(
                        "shape",
                        "rounds",
                        "commits",
                        "p99 ms, median (min..max)",
                        "spread",
                        "p99 <= 500 ms",
                        "requests per data object",
                        "<= 1.2")) {
            h.el("th", "class=\"n\"", c);
        }
        h.raw("</tr>");
        for (JsonNode r : rows) {
            h.raw("<tr>")
                    .el("td", "", r.path("shape").asText())
                    .el("td", "class=\"n\"", value(r.path("rounds")))
                    .el("td", "class=\"n\"", value(r.path("commitsMeasured")))
                    .el("td", "class=\"n\"", stats(r.path("commitP99Millis")))
                    .el("td", "class=\"n\"", spread(r.path("commitP99Millis")))
                    .el("td", "class=\"n\"", r.path("commitP99Verdict").asText())
                    .el("td", "class=\"n\"", stats(r.path("requestsPerDataObject")))
                    .el("td", "class=\"n\"", r.path("requestsVerdict").asText())
                    .raw("</tr>");
        }
        h.raw("</table></div>");
    }

    /** "median (min..max)" of a {@link Rounds.Stats} object; blank where there is none. */
    private static String stats(JsonNode s) {
        return s.has("median")
                ? value(s.path("median"))
                        + " ("
                        + value(s.path("min"))
                        + ".."
                        + value(s.path("max"))
                        + ")"
                : "";
    }

    private static String spread(JsonNode s) {
        return s.has("spreadPercent") ? value(s.path("spreadPercent")) + " %" : "";
    }

    private static void scaling(Html h, JsonNode rows) {
        if (!rows.isArray() || rows.isEmpty()) {
            return;
        }
        List<Charts.Bar> bars = new ArrayList<>();
        for (JsonNode r : rows) {
            for (String ratio : List.of("ratio", "oursOverFileSink")) {
                if (r.has(ratio)) {
                    bars.add(
                            new Charts.Bar(
                                    Html.count(r.path("keys").asLong())
                                            + " keys, B="
                                            + r.path("buckets").asText()
                                            + (ratio.equals("ratio")
                                                    ? " / discarding"
                                                    : " / FileSink"),
                                    r.path(ratio).asDouble(),
                                    Double.NaN,
                                    Double.NaN,
                                    String.format(Locale.ROOT, "%.3f", r.path(ratio).asDouble()),
                                    ratio.equals("ratio") ? 0 : 1));
                }
            }
        }
        h.el("h2", "", "Scaling");
        if (!bars.isEmpty()) {
            Charts.bars(
                    h,
                    "scaling",
                    "Our sink's rate over the discarding sink's and FileSink's, per keys per window and B",
                    bars);
        }
        table(h, null, rows);
    }

    /** Where each profiled sink's CPU samples fell: every {name: percent} of its profile. */
    private static void profiles(Html h, JsonNode sinks) {
        for (Iterator<Map.Entry<String, JsonNode>> it = sinks.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> s = it.next();
            JsonNode p = s.getValue().path("profile");
            if (!p.isObject()) {
                continue;
            }
            h.el(
                    "h2",
                    "",
                    "Profile: "
                            + s.getKey()
                            + " ("
                            + p.path("samples").asText("?")
                            + " CPU samples)");
            int chart = 0;
            for (Iterator<Map.Entry<String, JsonNode>> f = p.fields(); f.hasNext(); ) {
                Map.Entry<String, JsonNode> shares = f.next();
                if (!shares.getValue().isObject()) {
                    continue;
                }
                List<Charts.Bar> bars = new ArrayList<>();
                shares.getValue()
                        .fields()
                        .forEachRemaining(
                                e ->
                                        bars.add(
                                                new Charts.Bar(
                                                        shorten(e.getKey()),
                                                        e.getValue().asDouble(),
                                                        Double.NaN,
                                                        Double.NaN,
                                                        e.getValue().asText()
                                                                + " % · "
                                                                + e.getKey(),
                                                        0)));
                Charts.bars(h, "prof-" + s.getKey() + "-" + chart++, shares.getKey(), bars);
            }
        }
    }

    private static void section(Html h, String name, JsonNode v) {
        if (v.isArray()) {
            table(h, name, v);
        } else if (v.isObject()) {
            h.el("h2", "", name);
            h.raw("<table>");
            v.fields()
                    .forEachRemaining(
                            e ->
                                    h.raw("<tr>")
                                            .el("td", "", e.getKey())
                                            .el("td", "class=\"n\"", value(e.getValue()))
                                            .raw("</tr>"));
            h.raw("</table>");
        } else {
            h.raw("<p>").text(name + ": " + value(v)).raw("</p>");
        }
    }

    /** Rows of objects as a table, a column per field any row has. */
    private static void table(Html h, String title, JsonNode rows) {
        if (!rows.isArray() || rows.isEmpty()) {
            return;
        }
        if (title != null) {
            h.el("h2", "", title);
        }
        Set<String> columns = new LinkedHashSet<>();
        rows.forEach(r -> r.fieldNames().forEachRemaining(columns::add));
        h.raw("<div class=\"wide\"><table><tr>");
        columns.forEach(c -> h.el("th", "class=\"n\"", c));
        h.raw("</tr>");
        for (JsonNode r : rows) {
            h.raw("<tr>");
            columns.forEach(c -> h.el("td", "class=\"n\"", r.has(c) ? value(r.path(c)) : ""));
            h.raw("</tr>");
        }
        h.raw("</table></div>");
    }

    private static String value(JsonNode v) {
        if (v.isIntegralNumber()) {
            return Html.count(v.asLong());
        }
        if (v.isNumber()) {
            return String.format(Locale.ROOT, "%,.3f", v.asDouble()).replaceAll("\\.?0+$", "");
        }
        if (v.isArray() || v.isObject()) {
            List<String> parts = new ArrayList<>();
            if (v.isArray()) {
                v.forEach(e -> parts.add(value(e)));
            } else {
                v.fields().forEachRemaining(e -> parts.add(e.getKey() + " " + value(e.getValue())));
            }
            return String.join(v.isArray() ? " · " : ", ", parts);
        }
        return v.isNull() ? "" : v.asText();
    }

    private static String shorten(String frame) {
        return frame.length() <= 28 ? frame : "…" + frame.substring(frame.length() - 27);
    }
}
