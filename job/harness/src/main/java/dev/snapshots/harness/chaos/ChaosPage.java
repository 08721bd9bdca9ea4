package dev.snapshots.harness.chaos;

import dev.snapshots.cli.page.Charts;
import dev.snapshots.cli.page.Html;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;

/**
 * A chaos run's report as one page: the timeline of what was done to the job (TaskManager and
 * JobManager kills, the overlapping instance, the JobManager overlap, the rolling update, the S3
 * outage) above the completion pointer's progress on the same axis, then the figures, kills, dead
 * letters and violations. Drawn from report.json alone, so an older report draws too (without what
 * it did not record).
 */
final class ChaosPage {
    private static final int LEFT = 150;
    private static final int PLOT = 820;
    private static final int LANE = 34;

    private static final String CSS =
            String.join(
                    "\n",
                    ".verdict{font-size:20px;font-weight:700}",
                    "svg .lane{font-weight:600}",
                    "svg .axis{fill:var(--muted)}");

    private ChaosPage() {}

    /**
     * @param secondsPerWindow wall-clock seconds per window of production, to draw durations
     * @param dir where report.html goes, beside store.html if the run drew its store
     */
    static void write(JsonNode report, String command, int secondsPerWindow, Path dir)
            throws IOException {
        boolean passed = report.path("violations").isEmpty();
        double windows = Math.max(1, report.path("windows").asDouble(maxWindow(report)));
        try (Html h =
                Html.page(
                        dir.resolve("report.html"),
                        "Chaos run: " + (passed ? "PASSED" : "FAILED"),
                        CSS)) {
            h.raw(
                            "<h1>Chaos run: <span class=\"verdict "
                                    + (passed ? "ok\">✓ PASSED" : "bad\">✗ FAILED"))
                    .raw("</span></h1>");
            h.raw("<p class=\"sub\">").text(command).raw("</p>");
            if (Files.exists(dir.resolve("store.html"))) {
                h.raw(
                        "<p><a href=\"store.html\">The store this run left: every window and bucket →</a></p>");
            }
            h.el("h2", "", "What was done, and the completion pointer");
            h.el(
                    "p",
                    "class=\"sub\"",
                    "Both drawn against production: the windows of records produced so far, at "
                            + secondsPerWindow
                            + " s a window. A band lasts as long as the fault or deployment did; a mark's tooltip says what"
                            + " happened and how long the job took to recover.");
            // Actions the plan set late in production can end after it (on a slow machine the
            // deployments wait for the jobs to recover): the axis runs on to where the last ended.
            double extent = extent(report, windows, secondsPerWindow);
            timeline(h, report, windows, extent, secondsPerWindow);
            pointer(h, report, windows, extent);
            figures(h, report);
            kills(h, report);
            recovery(h, report);
            deadLetters(h, report);
            violations(h, report);
        }
    }

    /** One lane per kind of event, marks and bands at the window of production they happened. */
    private static void timeline(
            Html h, JsonNode report, double produced, double windows, int secondsPerWindow) {
        List<String> lanes = List.of("plan", "TaskManagers", "JobManagers", "instances", "S3");
        int height = 30 + LANE * lanes.size();
        h.raw("<figure><svg width=\"" + (LEFT + PLOT + 40) + "\" height=\"" + (height + 20))
                .raw(
                        "\" role=\"img\" aria-label=\"timeline of the faults and deployments of the run\">");
        h.el("title", "", "Timeline of the faults and deployments, by windows produced");
        Charts.defs(h, "tl", 6);
        for (int i = 0; i < lanes.size(); i++) {
            int y = 20 + i * LANE;
            h.raw("<text class=\"lane\" x=\"0\" y=\"" + (y + 18) + "\">")
                    .text(lanes.get(i))
                    .raw("</text>");
            h.raw(
                    "<path d=\"M"
                            + LEFT
                            + " "
                            + (y + LANE - 2)
                            + "H"
                            + (LEFT + PLOT)
                            + "\" stroke=\"#ddd\"/>");
        }
        if (windows > produced) {
            double from = x(produced, windows);
            h.raw("<rect x=\"" + fmt(from) + "\" y=\"14\" width=\"" + fmt(LEFT + PLOT - from))
                    .raw("\" height=\"" + (height - 14) + "\" fill=\"#f1f1f1\"/>")
                    .raw("<text class=\"axis\" x=\"" + fmt(from + 4) + "\" y=\"12\">")
                    .text("production ended: what the plan set late ran on")
                    .raw("</text>");
        }
        axis(h, windows, height);
        // Planned moments, as the plan drew them: action@window+fraction.
        for (JsonNode p : report.path("plan")) {
            String label = p.asText();
            int at = label.indexOf('@');
            int plus = label.indexOf('+', at);
            if (at < 0 || plus < 0) {
                continue;
            }
            double w =
                    Double.parseDouble(label.substring(at + 1, plus))
                            + Double.parseDouble(label.substring(plus + 1));
            mark(
                    h,
                    w,
                    windows,
                    0,
                    "│",
                    "planned: " + label.substring(0, at) + " at window " + fmt(w));
        }
        for (JsonNode k : report.path("kills")) {
            boolean jobManager = k.path("killed").asText().startsWith("jobmanager");
            double w = k.path("window").asDouble();
            double recovery = k.path("recoverySeconds").asDouble();
            int lane = jobManager ? 2 : 1;
            band(
                    h,
                    w,
                    recovery / secondsPerWindow,
                    windows,
                    lane,
                    4,
                    "recovering from the kill of "
                            + k.path("killed").asText()
                            + ": "
                            + fmt(recovery)
                            + " s");
            mark(
                    h,
                    w,
                    windows,
                    lane,
                    jobManager ? "✕" : "▼",
                    "SIGKILL "
                            + k.path("killed").asText()
                            + " at window "
                            + fmt(w)
                            + ", replaced by "
                            + k.path("replacement").asText()
                            + (!k.has("resumedFrom")
                                    ? ""
                                    : (k.has("takenOverBy")
                                                    ? "; "
                                                            + k.path("takenOverBy").asText()
                                                            + ", waiting beside it,"
                                                    : ", which")
                                            + " resumed from "
                                            + k.path("resumedFrom").asText())
                            + "; recovered in "
                            + fmt(recovery)
                            + " s");
        }
        JsonNode jm = report.path("jobManagerOverlap");
        if (jm.has("fromWindow")) {
            // Side by side for so many windows of production, or, once production ended, for as
            // long as the successor waited.
            band(
                    h,
                    jm.path("fromWindow").asDouble(),
                    Math.max(
                            jm.path("windowsSideBySide").asDouble(),
                            jm.path("successorWaitedSeconds").asDouble() / secondsPerWindow),
                    windows,
                    2,
                    1,
                    jm.path("successor").asText()
                            + " beside "
                            + jm.path("old").asText()
                            + " for "
                            + fmt(jm.path("windowsSideBySide").asDouble())
                            + " windows, then the first stopped; the second took the job over "
                            + jm.path("takenOver").asText("when the first stopped")
                            + "; recovered in "
                            + fmt(jm.path("recoverySeconds").asDouble())
                            + " s");
        }
        JsonNode roll = report.path("rollingUpdate");
        if (roll.has("window")) {
            mark(
                    h,
                    roll.path("window").asDouble(),
                    windows,
                    2,
                    "◆",
                    "rolling update at window "
                            + fmt(roll.path("window").asDouble())
                            + ": stop-with-savepoint, "
                            + roll.path("jobManagers")
                                    .asText(
                                            roll.path("from").asText()
                                                    + " -> "
                                                    + roll.path("to").asText())
                            + ", "
                            + fmt(roll.path("seconds").asDouble())
                            + " s");
        }
        JsonNode overlap = report.path("overlap");
        if (overlap.has("fromWindow")) {
            band(
                    h,
                    overlap.path("fromWindow").asDouble(),
                    overlap.path("windowsSideBySide").asDouble(),
                    windows,
                    3,
                    2,
                    "a second instance ran beside the first for "
                            + fmt(overlap.path("windowsSideBySide").asDouble())
                            + " windows (kept "
                            + overlap.path("kept").asText(overlap.path("old").asText())
                            + ", cancelled "
                            + overlap.path("cancelled").asText(overlap.path("new").asText())
                            + ")");
        }
        JsonNode outage = report.path("s3Outage");
        if (outage.has("window")) {
            double seconds = outage.path("seconds").asDouble();
            band(
                    h,
                    outage.path("window").asDouble(),
                    seconds / secondsPerWindow,
                    windows,
                    4,
                    5,
                    "S3 down for "
                            + fmt(seconds)
                            + " s from window "
                            + fmt(outage.path("window").asDouble())
                            + ", "
                            + outage.path("uploadsAborted").asText("?")
                            + " incomplete uploads aborted meanwhile; the jobs recovered "
                            + fmt(outage.path("recoverySeconds").asDouble())
                            + " s after");
        }
        JsonNode faults = report.path("faultsInjected");
        h.raw("</svg><figcaption>")
                .text(
                        "Marks: │ planned, ▼ TaskManager SIGKILL, ✕ JobManager SIGKILL, ◆ rolling update; striped: recovery;"
                                + " bands: the overlaps and the outage. Actions at the same window happened one after"
                                + " the other."
                                + (faults.isObject()
                                        ? " Throughout, S3 faults: " + flat(faults) + "."
                                        : ""))
                .raw("</figcaption></figure>\n");
    }

    /** The pointer's windows complete against the windows produced: the gap between is its lag. */
    private static void pointer(Html h, JsonNode report, double produced, double windows) {
        JsonNode readings = report.path("pointer");
        if (!readings.isArray() || readings.isEmpty()) {
            h.el(
                    "p",
                    "class=\"sub\"",
                    "This report has no readings of the completion pointer (written before the run recorded them).");
            return;
        }
        int plot = 200;
        int top = 20;
        h.raw("<figure><svg width=\"" + (LEFT + PLOT + 40) + "\" height=\"" + (plot + 60))
                .raw("\" role=\"img\" aria-label=\"windows complete against windows produced\">");
        h.el("title", "", "The completion pointer: windows complete, after each window produced");
        h.raw("<text class=\"lane\" x=\"0\" y=\"" + (top + 12) + "\">windows complete</text>");
        h.raw(
                "<text class=\"axis\" x=\""
                        + (LEFT - 24)
                        + "\" y=\""
                        + (top + 10)
                        + "\">"
                        + fmt(produced)
                        + "</text>");
        h.raw("<text class=\"axis\" x=\"" + (LEFT - 12) + "\" y=\"" + (top + plot) + "\">0</text>");
        h.raw(
                        "<path d=\"M"
                                + LEFT
                                + " "
                                + (top + plot)
                                + "L"
                                + fmt(x(produced, windows))
                                + " "
                                + top)
                .raw(
                        "\" stroke=\"#999\" stroke-dasharray=\"5 4\" fill=\"none\"><title>no lag: every window produced complete at once</title></path>");
        StringBuilder line = new StringBuilder();
        List<String> dots = new ArrayList<>();
        for (JsonNode r : readings) {
            double made = r.path("windowsProduced").asDouble();
            double complete = r.path("windowsComplete").asDouble();
            double px = x(made, windows);
            double py = top + plot - plot * Math.min(Math.max(0, complete), produced) / produced;
            line.append(line.length() == 0 ? "M" : "L").append(fmt(px)).append(' ').append(fmt(py));
            dots.add(
                    "<circle class=\"reading\" cx=\""
                            + fmt(px)
                            + "\" cy=\""
                            + fmt(py)
                            + "\" r=\"3.5\" fill=\"#000\"><title>"
                            + Html.esc(
                                    fmt(r.path("seconds").asDouble())
                                            + " s: "
                                            + fmt(made)
                                            + " windows produced, "
                                            + (complete < 0 ? "none" : fmt(complete))
                                            + " complete (pointer "
                                            + r.path("completeThrough").asText("-")
                                            + "), "
                                            + fmt(made - Math.max(0, complete))
                                            + " behind")
                            + "</title></circle>");
        }
        h.raw("<path d=\"" + line + "\" stroke=\"#0072B2\" stroke-width=\"2.5\" fill=\"none\"/>");
        dots.forEach(h::raw);
        axis(h, windows, top + plot);
        h.raw("</svg><figcaption>")
                .text(
                        "● the pointer, read after each window produced (windows complete); dashed: windows produced. The height between is how far behind readers are.")
                .raw("</figcaption></figure>\n");
    }

    private static void axis(Html h, double windows, int y) {
        int step = windows > 30 ? 5 : 1;
        for (int w = 0; w <= windows; w += step) {
            double px = x(w, windows);
            h.raw("<path d=\"M" + fmt(px) + " " + (y - 4) + "v6\" stroke=\"#777\"/>")
                    .raw(
                            "<text class=\"axis\" x=\""
                                    + fmt(px - 3)
                                    + "\" y=\""
                                    + (y + 14)
                                    + "\">"
                                    + w
                                    + "</text>");
        }
        h.raw(
                "<text class=\"axis\" x=\""
                        + (LEFT + PLOT - 110)
                        + "\" y=\""
                        + (y + 28)
                        + "\">windows produced</text>");
    }

    private static void mark(
            Html h, double w, double windows, int lane, String glyph, String text) {
        h.raw(
                        "<text class=\"mark\" x=\""
                                + fmt(x(w, windows) - 5)
                                + "\" y=\""
                                + (20 + lane * LANE + 18))
                .raw("\" font-size=\"15\">")
                .text(glyph)
                .el("title", "", text)
                .raw("</text>");
    }

    private static void band(
            Html h,
            double from,
            double length,
            double windows,
            int lane,
            int pattern,
            String text) {
        double x0 = x(from, windows);
        double width = Math.max(2, x(from + length, windows) - x0);
        h.raw(
                        "<rect class=\"band\" x=\""
                                + fmt(x0)
                                + "\" y=\""
                                + (20 + lane * LANE + 4)
                                + "\" width=\""
                                + fmt(width))
                .raw(
                        "\" height=\""
                                + (LANE - 10)
                                + "\" fill=\""
                                + Charts.fill("tl", pattern)
                                + "\" fill-opacity=\"0.75\" stroke=\"#333\">")
                .el("title", "", text)
                .raw("</rect>");
    }

    private static double x(double w, double windows) {
        return LEFT + PLOT * Math.min(w, windows) / windows;
    }

    /** Where the last thing the report holds ended, in windows of production: the axis's end. */
    private static double extent(JsonNode report, double windows, int secondsPerWindow) {
        double end = windows;
        for (JsonNode k : report.path("kills")) {
            end =
                    Math.max(
                            end,
                            k.path("window").asDouble()
                                    + k.path("recoverySeconds").asDouble() / secondsPerWindow);
        }
        for (String band : List.of("overlap", "jobManagerOverlap")) {
            JsonNode o = report.path(band);
            end =
                    Math.max(
                            end,
                            o.path("fromWindow").asDouble()
                                    + o.path("windowsSideBySide").asDouble()
                                    + o.path("recoverySeconds").asDouble() / secondsPerWindow);
        }
        JsonNode outage = report.path("s3Outage");
        end =
                Math.max(
                        end,
                        outage.path("window").asDouble()
                                + (outage.path("seconds").asDouble()
                                                + outage.path("recoverySeconds").asDouble())
                                        / secondsPerWindow);
        JsonNode roll = report.path("rollingUpdate");
        end =
                Math.max(
                        end,
                        roll.path("window").asDouble()
                                + roll.path("seconds").asDouble() / secondsPerWindow);
        return Math.ceil(end);
    }

    private static double maxWindow(JsonNode report) {
        double max = 1;
        for (JsonNode k : report.path("kills")) {
            max = Math.max(max, k.path("window").asDouble());
        }
        return Math.ceil(max);
    }

    /** Every figure that is a number or a small map, as the markdown report lists them. */
    private static void figures(Html h, JsonNode report) {
        h.raw("<h2>Figures</h2><table><tr><th>figure</th><th>value</th></tr>");
        for (Iterator<Map.Entry<String, JsonNode>> it = report.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> f = it.next();
            if (!ChaosReport.TABLES.contains(f.getKey())) {
                h.raw("<tr>")
                        .el("td", "", f.getKey())
                        .el("td", "", flat(f.getValue()))
                        .raw("</tr>");
            }
        }
        h.raw("</table>");
        if (report.path("notes").isArray()) {
            h.raw("<ul>");
            report.path("notes").forEach(n -> h.el("li", "class=\"sub\"", n.asText()));
            h.raw("</ul>");
        }
    }

    private static void kills(Html h, JsonNode report) {
        h.raw(
                "<h2>Kills</h2><table><tr><th class=\"n\">at window</th><th>killed</th><th>replacement</th><th class=\"n\">recovery (s)</th><th>resumed from</th></tr>");
        for (JsonNode k : report.path("kills")) {
            h.raw("<tr>")
                    .el("td", "class=\"n\"", fmt(k.path("window").asDouble()))
                    .el("td", "", k.path("killed").asText())
                    .el("td", "", k.path("replacement").asText())
                    .el("td", "class=\"n\"", fmt(k.path("recoverySeconds").asDouble()))
                    .el("td", "class=\"mono\"", k.path("resumedFrom").asText(""))
                    .raw("</tr>");
        }
        h.raw("</table>");
    }

    /**
     * Each kill's recovery in its parts, then the median and worst outside the outage; ? where the
     * run could not observe a part. Absent from reports written before the parts were measured.
     */
    private static void recovery(Html h, JsonNode report) {
        if (!report.has("recovery")) {
            return;
        }
        h.el("h2", "", "Recovery, part by part");
        h.el("p", "class=\"sub\"", ChaosReport.RECOVERY_NOTE);
        h.raw("<table class=\"recovery\"><tr><th class=\"n\">at window</th><th>killed</th>");
        h.el("th", "class=\"n\"", "running again (s)");
        RecoveryParts.PARTS.forEach(p -> h.el("th", "class=\"n\"", p));
        h.raw("<th>last to run</th>").el("th", "class=\"n\"", "checkpointed (s)").raw("</tr>");
        for (JsonNode k : report.path("kills")) {
            h.raw("<tr>")
                    .el("td", "class=\"n\"", fmt(k.path("window").asDouble()))
                    .el(
                            "td",
                            "",
                            k.path("killed").asText()
                                    + (k.path("duringTheOutage").asBoolean()
                                            ? " (during the S3 outage)"
                                            : ""));
            for (String column : ChaosReport.RECOVERY_COLUMNS) {
                if (column.equals("recoverySeconds")) {
                    h.el(
                            "td",
                            "",
                            k.path("lastToRun")
                                    .asText("? (" + k.path("unknownBecause").asText() + ")"));
                }
                JsonNode v =
                        RecoveryParts.PARTS.contains(column)
                                ? k.path("parts").path(column)
                                : k.path(column);
                h.el("td", "class=\"n\"", v.isNumber() ? fmt1(v.asDouble()) : "?");
            }
            h.raw("</tr>");
        }
        for (Iterator<Map.Entry<String, JsonNode>> it = report.path("recovery").fields();
                it.hasNext(); ) {
            Map.Entry<String, JsonNode> kind = it.next();
            for (String figure : List.of("median", "worst")) {
                h.raw("<tr class=\"summary\">")
                        .el("td", "", figure)
                        .el(
                                "td",
                                "",
                                kind.getValue().path("kills").asInt()
                                        + (kind.getKey().startsWith("taskManager")
                                                ? " TaskManager"
                                                : " JobManager")
                                        + " kills outside the S3 outage");
                for (String column : ChaosReport.RECOVERY_COLUMNS) {
                    if (column.equals("recoverySeconds")) {
                        h.el("td", "", "");
                    }
                    JsonNode c = kind.getValue().path(column);
                    h.el(
                            "td",
                            "class=\"n\"",
                            c.path(figure).isNumber() ? fmt1(c.path(figure).asDouble()) : "?");
                }
                h.raw("</tr>");
            }
        }
        h.raw("</table>");
    }

    private static String fmt1(double v) {
        return String.format(Locale.ROOT, "%.1f", v);
    }

    private static void deadLetters(Html h, JsonNode report) {
        JsonNode dead = report.path("deadLetters");
        if (!dead.path("injected").isObject()) {
            return;
        }
        h.el("h2", "", "Dead letters by reason");
        List<Charts.Bar> bars = new ArrayList<>();
        for (Iterator<String> it = dead.path("injected").fieldNames(); it.hasNext(); ) {
            String reason = it.next();
            long injected = dead.path("injected").path(reason).asLong();
            long published = dead.path("published").path(reason).asLong();
            bars.add(
                    new Charts.Bar(
                            reason,
                            published,
                            Double.NaN,
                            Double.NaN,
                            published
                                    + " published of "
                                    + injected
                                    + " injected"
                                    + (published == injected ? " ✓" : " ✗"),
                            0));
        }
        Charts.bars(h, "dead", "Dead letters published per reason, against those injected", bars);
    }

    private static void violations(Html h, JsonNode report) {
        h.el("h2", "", "Violations");
        if (report.path("violations").isEmpty()) {
            h.el(
                    "p",
                    "class=\"ok\"",
                    "✓ None: the audit is clean, every (window, bucket) has exactly one object, every part's rows equal the"
                            + " reference, and the dead letters equal what was injected.");
            return;
        }
        h.raw("<ul class=\"bad\">");
        report.path("violations").forEach(v -> h.el("li", "", v.asText()));
        h.raw("</ul>");
    }

    private static String flat(JsonNode v) {
        if (v.isObject()) {
            List<String> parts = new ArrayList<>();
            v.fields().forEachRemaining(e -> parts.add(e.getKey() + " " + flat(e.getValue())));
            return String.join(", ", parts);
        }
        if (v.isArray()) {
            List<String> parts = new ArrayList<>();
            v.forEach(e -> parts.add(flat(e)));
            return String.join(" ", parts);
        }
        return v.asText();
    }

    private static String fmt(double v) {
        return v == Math.rint(v) ? String.valueOf((long) v) : String.format(Locale.ROOT, "%.1f", v);
    }
}
