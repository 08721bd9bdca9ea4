package dev.snapshots.cli.page;

import dev.snapshots.cli.Audit;
import dev.snapshots.cli.StoreScan;
import dev.snapshots.key.ObjectKeys.PartKey;
import dev.snapshots.key.PartKind;
import dev.snapshots.progress.CompletionPointer;
import dev.snapshots.progress.VersionIdentity;
import dev.snapshots.store.ObjectStore;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import org.apache.flink.annotation.Internal;

/**
 * Draws a {@link StorePage}: per job version a grid of windows (down, in time) by buckets (across),
 * each cell in its {@link CellState} with a label that gives its key, rows, fingerprint and writer;
 * the completion pointer as a line across its grid; the audit's findings linked to their cells,
 * each with the command that acknowledges it; dead letters per reason per window.
 *
 * <p>Sized for a week at B = 128 (258,048 cells): a cell is one short element, rows are laid out
 * only when scrolled to ({@code content-visibility}), and only cells with findings carry an id.
 */
@Internal
public final class StorePageHtml {
    private static final long DAY = 86_400_000L;

    /** Above this many windows a grid gets an overview of its days, one mark per window. */
    private static final int OVERVIEW_FROM = 96;

    private static final String CSS =
            String.join(
                    "\n",
                    ".g{margin:6px 0 10px;--c:14px}",
                    ".r{display:flex;align-items:center;height:calc(var(--c) + 1px);white-space:nowrap}",
                    ".r>b{flex:0 0 46px;font:600 10px/1 ui-monospace,Menlo,monospace;color:var(--muted)}",
                    ".r>b.f{color:#a01010}",
                    ":is(.r,.sw)>:is(i,a){flex:0 0 var(--c);display:inline-block;width:var(--c);height:var(--c);margin-right:1px;"
                            + "box-sizing:border-box;font:700 calc(var(--c) - 3px)/calc(var(--c) - 2px) system-ui,sans-serif;"
                            + "text-align:center;text-decoration:none;color:#000;overflow:hidden;vertical-align:middle}",
                    ":is(.r,.sw)>.p{background:#1b7f5a}",
                    ":is(.r,.sw)>.c{background:#56b4e9;border:1px solid #1d5f86}",
                    ":is(.r,.sw)>.d{background:#d55e00;color:#fff}",
                    ":is(.r,.sw)>.m{background:#fff;border:1px dashed #a01010;color:#a01010}",
                    ":is(.r,.sw)>.f{background:#e69f00;border:1px solid #7a5200}",
                    ":is(.r,.sw)>.s{background:#f0e442;border:1px solid #8a8000}",
                    ":is(.r,.sw)>.a{background:#c4c4c4;border:1px solid #666}",
                    ":is(.r,.sw)>.e{background:#d9d9d9}",
                    ":is(.r,.sw)>.o{background:#fff;border:1px dotted #8a8a8a}",
                    ".r>.x{visibility:hidden}",
                    ".r>.n{flex:0 0 auto;margin-left:8px;font-size:11px;color:#a01010}",
                    ".r.hd{height:auto;align-items:flex-end;font:10px ui-monospace,monospace;color:var(--muted)}",
                    ".r.hd>span{flex:0 0 calc(var(--c) + 1px);overflow:visible}",
                    // Only the rows on screen are laid out: a day at B = 128 is 36,864 cells.
                    ".g .r:not(.hd){content-visibility:auto;contain-intrinsic-size:auto calc(var(--c) + 1px)}",
                    ".day>h3{margin:8px 0 2px;font-size:12px}",
                    ".ptr{margin:2px 0;border-top:3px solid #000;font-size:11px;font-weight:600;padding-top:1px}",
                    ".open{background:repeating-linear-gradient(90deg,transparent 0 6px,#f1f1f1 6px 7px)}",
                    ".legend td{vertical-align:middle}.sw{display:inline-flex;--c:16px}",
                    ".finding td:nth-child(4){max-width:520px}",
                    "nav a{margin-right:12px}",
                    ".over a:focus rect{stroke:#000;stroke-width:2}");

    private StorePageHtml() {}

    /** Writes the page to {@code file}; returns the cells drawn per state. */
    public static Map<CellState, Long> write(StorePage page, Path file) throws IOException {
        Map<StorePage.Grid, Map<CellState, Long>> counts = new java.util.LinkedHashMap<>();
        // Each window's most pressing state, for the overview: the header's counts come first, so
        // the cells are worked out once before the page is written, and again as each is drawn.
        Map<StorePage.Grid, Map<Long, Map<CellState, Integer>>> windows = new java.util.HashMap<>();
        Map<String, Writer> writers = new TreeMap<>();
        for (StorePage.Grid g : page.grids) {
            Map<CellState, Long> c = new EnumMap<>(CellState.class);
            Map<Long, Map<CellState, Integer>> byWindow = new java.util.HashMap<>();
            windows.put(g, byWindow);
            for (StoreScan.Window w : g.windows.values()) {
                Map<CellState, Integer> states = new EnumMap<>(CellState.class);
                byWindow.put(w.start, states);
                for (int b = 0; b < g.columns; b++) {
                    StorePage.Cell cell = page.cell(g, w, b);
                    if (drawn(g, cell)) {
                        c.merge(cell.state(), 1L, Long::sum);
                        states.merge(cell.state(), 1, Integer::sum);
                    }
                    cell.read()
                            .ifPresent(
                                    r ->
                                            writers.computeIfAbsent(
                                                            r.writerJob()
                                                                    + "|"
                                                                    + r.writerHost()
                                                                    + "|"
                                                                    + r.writerTask(),
                                                            k -> new Writer(r))
                                                    .parts++);
                }
            }
            counts.put(g, c);
        }
        Map<CellState, Long> total = new EnumMap<>(CellState.class);
        counts.values().forEach(c -> c.forEach((s, n) -> total.merge(s, n, Long::sum)));
        try (Html h = Html.page(file, "Store " + page.store, CSS)) {
            header(h, page, total);
            findings(h, page);
            for (StorePage.Grid g : page.grids) {
                grid(h, page, g, counts.get(g), windows.get(g));
            }
            staged(h, page);
            writers(h, writers);
        }
        return total;
    }

    /** A column beyond B holds a cell only where a stray object is. */
    private static boolean drawn(StorePage.Grid g, StorePage.Cell cell) {
        return cell.bucket() < g.buckets || !cell.objects().isEmpty() || !cell.findings().isEmpty();
    }

    private static void header(Html h, StorePage page, Map<CellState, Long> total) {
        h.el("h1", "", "Store " + page.store);
        h.raw("<p class=\"sub\">")
                .text(
                        "read "
                                + page.generated
                                + " in "
                                + String.format(
                                        java.util.Locale.ROOT,
                                        "%.1f s",
                                        page.readTime.toMillis() / 1000.0)
                                + " (audit included"
                                + (page.readContent
                                        ? ", every part's content re-hashed"
                                        : ", from each part's metadata: content not re-read, so a fingerprint that lies,"
                                                + " an unreadable part and content rewritten under its old metadata show only in"
                                                + " snapshots audit")
                                + ") · windows "
                                + page.since
                                        .map(s -> "from " + Html.minute(s.toEpochMilli()) + " UTC")
                                        .orElse("of all time")
                                + " · "
                                + Html.count(page.objects)
                                + " objects, "
                                + Html.count(page.parts)
                                + " parts")
                .raw("</p>\n");
        boolean conforming = !page.conformance.contains("NOT CONFORMING");
        h.raw("<p class=\"" + (conforming ? "ok" : "bad") + "\">")
                .text((conforming ? "✓ " : "✗ ") + page.conformance)
                .raw("</p>\n");
        h.raw("<p>")
                .raw(
                        page.findings.isEmpty()
                                ? "<span class=\"ok\">✓ The audit is clean</span>"
                                : "<a class=\"bad\" href=\"#findings\">✗ "
                                        + Html.count(page.findings.size())
                                        + " audit findings</a>")
                .text(
                        page.acknowledged.isEmpty()
                                ? ""
                                : " · " + page.acknowledged.size() + " acknowledged")
                .text(
                        " · "
                                + page.staged.size()
                                + " staged uploads, "
                                + page.staged.stream()
                                        .filter(st -> page.stagedFor(st).equals("NOT PUBLISHED"))
                                        .count()
                                + " of them for parts not published")
                .raw("</p>\n<nav>");
        for (StorePage.Grid g : page.grids) {
            h.raw("<a href=\"#" + g.anchor() + "\">").text(title(g)).raw("</a>");
        }
        h.raw(
                "<a href=\"#findings\">findings</a><a href=\"#staged\">staged</a><a href=\"#writers\">writers</a></nav>\n");
        h.raw(
                "<table class=\"legend\" aria-label=\"what each cell shows\"><tr><th>cell</th><th>state</th><th class=\"n\">cells</th><th>meaning</th></tr>");
        for (CellState s : CellState.values()) {
            h.raw(
                            "<tr><td><span class=\"sw\"><i class=\""
                                    + s.css
                                    + "\" data-state=\""
                                    + s.id()
                                    + "\" role=\"img\" ")
                    .raw(Html.attr("title", s.label))
                    .raw(">")
                    .text(s.glyph)
                    .raw("</i></span></td>")
                    .el("td", "", s.label)
                    .el("td", "class=\"n\"", Html.count(total.getOrDefault(s, 0L)))
                    .el("td", "", s.meaning)
                    .raw("</tr>");
        }
        h.raw("</table>\n");
    }

    private static void findings(Html h, StorePage page) {
        h.raw("<section id=\"findings\"><h2>Audit findings</h2>");
        if (page.findings.isEmpty()) {
            h.el(
                    "p",
                    "class=\"ok\"",
                    "None: every part is one object that matches its fingerprint and its window's manifest, and every complete window has its manifest.");
        } else {
            h.el(
                    "p",
                    "class=\"sub\"",
                    "Each links to its cell, row or grid. To acknowledge one after examining it, run its command with who you are and why it stands; it then no longer fails the audit.");
            h.raw(
                    "<table class=\"finding\"><tr><th>id</th><th>finding</th><th>where</th><th>detail</th></tr>");
            for (Audit.Finding f : page.findings) {
                h.raw("<tr id=\"f-" + f.id() + "\">")
                        .el("td", "class=\"mono\"", f.id())
                        .el("td", "", f.kind())
                        .raw("<td class=\"mono\">");
                where(h, page, f);
                h.raw("</td><td>")
                        .text(f.detail())
                        .raw("<code class=\"cmd\">")
                        .text(
                                page.auditCommand
                                        + " --acknowledge "
                                        + f.id()
                                        + " --by WHO --reason 'WHY'")
                        .raw("</code></td></tr>\n");
            }
            h.raw("</table>");
        }
        if (!page.acknowledged.isEmpty()) {
            h.raw(
                    "<h3>Acknowledged (not counted)</h3><table><tr><th>id</th><th>finding</th><th>where</th><th>by</th><th>when</th><th>why</th></tr>");
            for (StorePage.Acknowledged a : page.acknowledged) {
                h.raw("<tr id=\"f-" + a.finding().id() + "\">")
                        .el("td", "class=\"mono\"", a.finding().id())
                        .el("td", "", a.finding().kind())
                        .raw("<td class=\"mono\">");
                where(h, page, a.finding());
                h.raw("</td>")
                        .el("td", "", String.valueOf(a.acknowledgement().get("by")))
                        .el("td", "", String.valueOf(a.acknowledgement().get("at")))
                        .el("td", "", String.valueOf(a.acknowledgement().get("reason")))
                        .raw("</tr>\n");
            }
            h.raw("</table>");
        }
        h.raw("</section>\n");
    }

    private static void where(Html h, StorePage page, Audit.Finding f) {
        var anchor = page.anchorOf(f);
        if (anchor.isPresent()) {
            h.raw("<a href=\"#" + anchor.get() + "\">").text(f.where()).raw("</a>");
        } else {
            h.text(f.where());
        }
    }

    private static String title(StorePage.Grid g) {
        return g.version.pipeline()
                + " v="
                + g.version.jobVersion()
                + (g.version.kind() == PartKind.DEAD_LETTER ? " dead letters" : "")
                + " schema "
                + g.schema;
    }

    private static void grid(
            Html h,
            StorePage page,
            StorePage.Grid g,
            Map<CellState, Long> counts,
            Map<Long, Map<CellState, Integer>> windows) {
        h.raw("<section id=\"" + g.anchor() + "\"><h2>").text(title(g));
        if (g.isCurrent()) {
            h.raw("<span class=\"badge\">current</span>");
        }
        h.raw("</h2>\n");
        facts(h, page, g, counts);
        if (g.windows.size() > OVERVIEW_FROM) {
            overview(h, g, windows);
        }
        if (g.version.kind() == PartKind.DEAD_LETTER) {
            deadLetters(h, g);
        }
        int cell = g.columns <= 16 ? 16 : g.columns <= 48 ? 13 : g.columns <= 96 ? 11 : 9;
        h.raw("<div class=\"g\" style=\"--c:" + cell + "px\" role=\"group\" ")
                .raw(Html.attr("aria-label", "windows by buckets of " + title(g)))
                .raw(">\n");
        columnHeads(h, g, cell);
        long through =
                g.pointer
                        .map(CompletionPointer.State::completeThroughMillis)
                        .orElse(Long.MIN_VALUE);
        boolean pointerDrawn = g.pointer.isEmpty();
        long day = Long.MIN_VALUE;
        for (StoreScan.Window w : g.windows.values()) {
            long d = Math.floorDiv(w.start, DAY) * DAY;
            if (d != day) {
                if (day != Long.MIN_VALUE) {
                    h.raw("</section>\n");
                }
                day = d;
                h.raw("<section class=\"day\">").el("h3", "", Html.day(d));
            }
            if (!pointerDrawn && w.start >= through) {
                pointer(h, g, through);
                pointerDrawn = true;
            }
            row(h, page, g, w);
        }
        if (!pointerDrawn) {
            pointer(h, g, through);
        }
        if (day != Long.MIN_VALUE) {
            h.raw("</section>");
        }
        h.raw("</div></section>\n");
    }

    private static void facts(
            Html h, StorePage page, StorePage.Grid g, Map<CellState, Long> counts) {
        h.raw("<dl class=\"facts\">");
        h.el("dt", "", "completion pointer");
        if (g.pointer.isPresent()) {
            long through = g.pointer.get().completeThroughMillis();
            long open =
                    g.windows.tailMap(through, true).values().stream()
                            .filter(w -> !w.parts.isEmpty())
                            .count();
            h.el(
                    "dd",
                    "",
                    through <= 0
                            ? "nothing complete yet"
                            : "complete through "
                                    + Html.minute(through)
                                    + " UTC: "
                                    + Html.span(
                                            Duration.between(
                                                    Instant.ofEpochMilli(through), page.generated))
                                    + " behind the clock; "
                                    + open
                                    + (open == 1 ? " window" : " windows")
                                    + " with parts after it");
        } else {
            h.raw("<dd class=\"bad\">")
                    .text(
                            g.pointerProblem
                                    .map(p -> "unreadable: " + p)
                                    .orElse("none: readers see no window of this version complete"))
                    .raw("</dd>");
        }
        h.el("dt", "", "readers follow");
        h.el(
                "dd",
                "",
                g.current.isEmpty()
                        ? "no version promoted for " + g.version.pipeline()
                        : g.isCurrent()
                                ? "this version (promoted)"
                                : "v=" + g.current.get() + " (promoted), not this one");
        h.el("dt", "", "identity");
        h.el(
                "dd",
                "",
                g.identity
                        .map(StorePageHtml::identity)
                        .orElse(
                                "none recorded (a version written before identities were, until its next run)"));
        h.el("dt", "", "cells");
        StringBuilder c = new StringBuilder();
        counts.forEach(
                (s, n) ->
                        c.append(c.length() == 0 ? "" : " · ")
                                .append(Html.count(n))
                                .append(' ')
                                .append(s.label));
        h.el(
                "dd",
                "",
                g.windows.size()
                        + (g.windows.size() == 1 ? " window × " : " windows × ")
                        + g.buckets
                        + (g.buckets == 1 ? " bucket: " : " buckets: ")
                        + c);
        h.raw("</dl>\n");
    }

    private static String identity(VersionIdentity i) {
        return "B = "
                + i.buckets()
                + ", "
                + i.bucketing().toLowerCase(java.util.Locale.ROOT)
                + " bucketing"
                + (i.maxParallelism() > 0 ? " over max parallelism " + i.maxParallelism() : "")
                + ", windows of "
                + Html.span(Duration.ofMillis(i.windowLengthMillis()))
                + ", schema "
                + i.schemaVersion()
                + ", pinned inputs "
                + (i.pinnedInputs().isEmpty() ? "none" : i.pinnedInputs())
                + ", key scheme "
                + i.keyScheme();
    }

    private static void columnHeads(Html h, StorePage.Grid g, int cell) {
        int every = g.columns <= 16 ? 1 : g.columns <= 48 ? 4 : 8;
        h.raw("<div class=\"r hd\" aria-hidden=\"true\"><b>UTC</b>");
        for (int b = 0; b < g.columns; b++) {
            h.raw(b % every == 0 ? "<span>" + b + "</span>" : "<span></span>");
        }
        h.raw(
                g.columns > g.buckets
                        ? "<span style=\"flex:auto\">(columns from "
                                + g.buckets
                                + " on are beyond B)</span>"
                        : "");
        h.raw("</div>\n");
    }

    private static void pointer(Html h, StorePage.Grid g, long through) {
        h.raw("<div class=\"ptr\" role=\"separator\">")
                .text(
                        through <= 0
                                ? "▲ completion pointer: nothing complete yet"
                                : "▲ completion pointer: complete through "
                                        + Html.minute(through)
                                        + " UTC; readers see the windows above, those below are open")
                .raw("</div>\n");
    }

    private static void row(Html h, StorePage page, StorePage.Grid g, StoreScan.Window w) {
        List<Audit.Finding> rowFindings = page.windowFindings(g, w.start);
        boolean complete = g.complete(w);
        long rows = 0;
        int present = 0;
        for (List<PartKey> parts : w.parts.values()) {
            present++;
            for (PartKey p : parts) {
                StoreScan.PartInfo r = w.read.get(p.key());
                rows += r == null ? 0 : r.rows();
            }
        }
        String rowLabel =
                Html.minute(w.start)
                        + " UTC: "
                        + present
                        + " of "
                        + g.buckets
                        + " parts, "
                        + Html.count(rows)
                        + " rows, "
                        + (w.manifest.isPresent() ? "manifest written" : "no manifest")
                        + (complete ? ", complete" : ", open");
        h.raw(
                        "<div class=\"r"
                                + (complete ? "" : " open")
                                + "\" id=\""
                                + g.windowAnchor(w.start)
                                + "\">")
                .raw(
                        "<b"
                                + (rowFindings.isEmpty() ? "" : " class=\"f\"")
                                + " "
                                + Html.attr("title", rowLabel)
                                + ">")
                .text(Html.clock(w.start))
                .raw("</b>");
        for (int b = 0; b < g.columns; b++) {
            cell(h, g, w, page.cell(g, w, b));
        }
        for (Audit.Finding f : rowFindings) {
            boolean acked =
                    page.acknowledged.stream().anyMatch(a -> a.finding().id().equals(f.id()));
            h.raw("<a class=\"n\" href=\"#f-" + f.id() + "\">")
                    .text((acked ? "✓ acknowledged " : "⚠ ") + f.kind())
                    .raw("</a>");
        }
        h.raw("</div>\n");
    }

    private static void cell(Html h, StorePage.Grid g, StoreScan.Window w, StorePage.Cell c) {
        if (!drawn(g, c)) {
            h.raw("<i class=\"x\"></i>");
            return;
        }
        CellState s = c.state();
        String label = label(g, w, c);
        List<String> ids = new ArrayList<>();
        c.findings().forEach(f -> ids.add(f.id()));
        c.acknowledged().forEach(a -> ids.add(a.finding().id()));
        if (ids.isEmpty()) {
            h.raw("<i class=\"" + s.css + "\" role=\"img\" " + Html.attr("title", label) + ">")
                    .text(s.glyph)
                    .raw("</i>");
        } else {
            h.raw(
                            "<a class=\""
                                    + s.css
                                    + "\" id=\""
                                    + g.cellAnchor(w.start, c.bucket())
                                    + "\" href=\"#f-"
                                    + ids.get(0))
                    .raw("\" role=\"img\" " + Html.attr("title", label) + ">")
                    .text(s.glyph)
                    .raw("</a>");
        }
    }

    /** What a cell's tooltip and accessible name say: state, key, rows, fingerprint, writer. */
    static String label(StorePage.Grid g, StoreScan.Window w, StorePage.Cell c) {
        StringBuilder l =
                new StringBuilder(c.state().label).append(" · bucket ").append(c.bucket());
        if (c.objects().isEmpty()) {
            l.append(" · ").append(Html.minute(w.start)).append(" UTC");
            c.listed()
                    .ifPresent(
                            p ->
                                    l.append("\nkey ")
                                            .append(p.key())
                                            .append("\nthe manifest lists ")
                                            .append(Html.count(p.rows()))
                                            .append(" rows · fingerprint ")
                                            .append(
                                                    p.fingerprint(),
                                                    0,
                                                    Math.min(16, p.fingerprint().length())));
        }
        for (PartKey p : c.objects()) {
            l.append('\n').append(p.key());
        }
        c.read()
                .ifPresent(
                        r ->
                                l.append('\n')
                                        .append(Html.count(r.rows()))
                                        .append(" rows · fingerprint ")
                                        .append(
                                                r.fingerprint(),
                                                0,
                                                Math.min(16, r.fingerprint().length()))
                                        .append("\nwriter task ")
                                        .append(shortTask(r.writerTask()))
                                        .append(" · job ")
                                        .append(
                                                r.writerJob(),
                                                0,
                                                Math.min(8, r.writerJob().length())));
        if (!c.collapsedBy().isEmpty()) {
            l.append("\ncomputed again, equal, by job ").append(String.join(", ", c.collapsedBy()));
        }
        for (ObjectStore.StagedInfo s : c.staged()) {
            l.append("\nstaged ").append(s.started()).append(" (").append(s.handle()).append(')');
        }
        for (Audit.Finding f : c.findings()) {
            l.append("\nfinding ")
                    .append(f.id())
                    .append(' ')
                    .append(f.kind())
                    .append(": ")
                    .append(shorten(f.detail()));
        }
        for (StorePage.Acknowledged a : c.acknowledged()) {
            l.append("\nacknowledged ")
                    .append(a.finding().id())
                    .append(' ')
                    .append(a.finding().kind())
                    .append(" by ")
                    .append(a.acknowledgement().get("by"))
                    .append(": ")
                    .append(a.acknowledgement().get("reason"));
        }
        if (c.state() == CellState.PENDING) {
            l.append("\nthe completion pointer has not passed this window");
        } else if (c.state() == CellState.EMPTY) {
            l.append("\nthe window's manifest lists no part for this bucket: it had no rows");
        } else if (c.state() == CellState.MISSING && w.manifest.isEmpty()) {
            l.append("\nno object, and no manifest to say the bucket had no rows");
        }
        return l.toString();
    }

    /** An ECS task ARN's id (its last segment); "-" off ECS. */
    private static String shortTask(String task) {
        return task.isEmpty() ? "-" : task.substring(task.lastIndexOf('/') + 1);
    }

    private static String shorten(String s) {
        return s.length() <= 240 ? s : s.substring(0, 237) + "...";
    }

    /**
     * One mark per window, a column per day: the version at a glance, each mark a link to its row.
     */
    private static void overview(
            Html h, StorePage.Grid g, Map<Long, Map<CellState, Integer>> windows) {
        long first = Math.floorDiv(g.windows.firstKey(), DAY) * DAY;
        long days = Math.floorDiv(g.windows.lastKey(), DAY) * DAY / DAY - first / DAY + 1;
        long slots = Math.max(1, DAY / Math.max(60_000, g.windowMillis));
        double slotHeight = Math.max(2, Math.min(6, Math.floor(600.0 / slots)));
        int columnWidth = 40;
        double height = slots * slotHeight + 30;
        h.raw(
                        "<figure class=\"over\"><svg width=\""
                                + (40 + days * columnWidth)
                                + "\" height=\""
                                + Charts.fmt(height))
                .raw(
                        "\" shape-rendering=\"crispEdges\" role=\"img\" aria-label=\"each window's most pressing state, a column per day\">");
        for (long d = 0; d < days; d++) {
            h.raw("<text x=\"" + (40 + d * columnWidth) + "\" y=\"10\" transform=\"rotate(0)\">")
                    .text(Html.day(first + d * DAY).substring(5))
                    .raw("</text>");
        }
        for (int hour = 0; hour < 24; hour += 6) {
            h.raw(
                            "<text x=\"0\" y=\""
                                    + Charts.fmt(
                                            24
                                                    + hour
                                                            * 3_600_000L
                                                            / Math.max(60_000, g.windowMillis)
                                                            * slotHeight)
                                    + "\">")
                    .text(String.format(java.util.Locale.ROOT, "%02d:00", hour))
                    .raw("</text>");
        }
        for (StoreScan.Window w : g.windows.values()) {
            Map<CellState, Integer> states = windows.get(w.start);
            CellState worst = states.keySet().stream().findFirst().orElse(CellState.PENDING);
            long day = Math.floorDiv(w.start, DAY) * DAY;
            double x = 40 + (day - first) / DAY * columnWidth;
            double y = 16 + (w.start - day) / Math.max(60_000, g.windowMillis) * slotHeight;
            StringBuilder t = new StringBuilder(Html.minute(w.start) + " UTC:");
            states.forEach(
                    (s, n) -> t.append(' ').append(n).append(' ').append(s.label).append(','));
            h.raw(
                            "<a href=\"#"
                                    + g.windowAnchor(w.start)
                                    + "\"><rect x=\""
                                    + Charts.fmt(x)
                                    + "\" y=\""
                                    + Charts.fmt(y))
                    .raw(
                            "\" width=\""
                                    + (columnWidth - 6)
                                    + "\" height=\""
                                    + Charts.fmt(slotHeight)
                                    + "\" fill=\""
                                    + colour(worst)
                                    + "\">")
                    .el("title", "", t.substring(0, t.length() - 1))
                    .raw("</rect></a>");
        }
        h.raw("</svg><figcaption>")
                .text(
                        "Each window's most pressing state (its tooltip counts them all), a column per day; a mark links to its row.")
                .raw("</figcaption></figure>\n");
    }

    private static String colour(CellState s) {
        return switch (s) {
            case DIVERGENT -> "#d55e00";
            case MISSING -> "#a01010";
            case FINDING -> "#e69f00";
            case STAGED -> "#f0e442";
            case ACKNOWLEDGED -> "#c4c4c4";
            case COLLAPSED -> "#56b4e9";
            case PUBLISHED -> "#1b7f5a";
            case EMPTY -> "#d9d9d9";
            case PENDING -> "#e8e8e8";
        };
    }

    /** Dead letters per reason per window, as the audit counted them decoding each part. */
    private static void deadLetters(Html h, StorePage.Grid g) {
        TreeSet<String> reasons = new TreeSet<>();
        List<StoreScan.Window> windows = new ArrayList<>();
        for (StoreScan.Window w : g.windows.values()) {
            if (!w.deadLetterReasons.isEmpty()) {
                reasons.addAll(w.deadLetterReasons.keySet());
                windows.add(w);
            }
        }
        if (windows.isEmpty()) {
            h.el("p", "class=\"sub\"", "No dead letters were read in these windows.");
            return;
        }
        List<String> series = new ArrayList<>(reasons);
        long[][] values = new long[windows.size()][series.size()];
        List<String> categories = new ArrayList<>();
        for (int i = 0; i < windows.size(); i++) {
            StoreScan.Window w = windows.get(i);
            categories.add(
                    windows.size() > 24 ? Html.minute(w.start).substring(5) : Html.clock(w.start));
            for (int s = 0; s < series.size(); s++) {
                values[i][s] = w.deadLetterReasons.getOrDefault(series.get(s), 0L);
            }
        }
        Charts.stacked(
                h,
                "dl-" + g.anchor(),
                "Dead letters per reason per window (UTC), of the windows that have any",
                categories,
                series,
                values);
    }

    private static void staged(Html h, StorePage page) {
        h.raw("<section id=\"staged\"><h2>Staged uploads</h2>");
        if (page.staged.isEmpty()) {
            h.el("p", "class=\"ok\"", "None: nothing is staged and unpublished.");
        } else {
            h.el(
                    "p",
                    "class=\"sub\"",
                    "Uploads a writer staged that no commit has published or aborted. One for a part"
                            + " published since is left for the bucket's staging retention; one for a part not"
                            + " published is at risk, and older than "
                            + Html.span(page.staleStaging)
                            + " an audit finding (a job down or failing commits).");
            h.raw(
                    "<table><tr><th>for</th><th>part</th><th>staged</th><th class=\"n\">age</th><th>handle</th></tr>");
            for (ObjectStore.StagedInfo s : page.staged) {
                String what = page.stagedFor(s);
                h.raw("<tr>")
                        .el("td", what.equals("NOT PUBLISHED") ? "class=\"bad\"" : "", what)
                        .el("td", "class=\"mono\"", s.key())
                        .el("td", "", s.started().toString());
                h.el("td", "class=\"n\"", Html.span(Duration.between(s.started(), page.generated)));
                h.el("td", "class=\"mono\"", s.handle()).raw("</tr>\n");
            }
            h.raw("</table>");
        }
        h.raw("</section>\n");
    }

    /** Who wrote the parts drawn: a Flink job, its host and (on ECS) its task. */
    private static final class Writer {
        final StoreScan.PartInfo first;
        long parts;

        Writer(StoreScan.PartInfo first) {
            this.first = first;
        }
    }

    private static void writers(Html h, Map<String, Writer> writers) {
        h.raw(
                "<section id=\"writers\"><h2>Writers</h2><table><tr><th>Flink job</th><th>host</th><th>task</th><th class=\"n\">parts</th></tr>");
        for (Writer w : writers.values()) {
            h.raw("<tr>")
                    .el("td", "class=\"mono\"", w.first.writerJob())
                    .el("td", "", w.first.writerHost())
                    .el("td", "class=\"mono\"", w.first.writerTask())
                    .el("td", "class=\"n\"", Html.count(w.parts))
                    .raw("</tr>");
        }
        h.raw("</table></section>\n");
    }
}
