package dev.snapshots.cli.page;

import java.util.List;
import java.util.Locale;
import org.apache.flink.annotation.Internal;

/**
 * Small inline SVG charts for the pages. A series is told by a fill pattern as well as a colour (a
 * colour-blind reader and a grey printout see the pattern), every mark carries its value in a
 * {@code <title>}, and a legend names each series in text.
 */
@Internal
public final class Charts {
    /** Okabe and Ito's palette, which stays distinct to the common colour-vision deficiencies. */
    private static final String[] COLOURS = {
        "#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#999999", "#000000"
    };

    /**
     * One bar: its value, an optional range (NaN for none), what its tooltip says, and its series
     * (its fill, shared with the other bars of the series).
     */
    public record Bar(
            String label, double value, double low, double high, String text, int series) {}

    private Charts() {}

    /**
     * Horizontal bars on one scale from 0, each with its range as a whisker when it has one.
     *
     * @param id unique in the page: it prefixes the chart's pattern ids
     */
    public static void bars(Html h, String id, String title, List<Bar> bars) {
        int labelWidth = 190;
        int plot = 460;
        int row = 24;
        int height = 28 + row * bars.size();
        double top =
                bars.stream()
                        .mapToDouble(b -> Double.isNaN(b.high()) ? b.value() : b.high())
                        .max()
                        .orElse(1);
        top = top <= 0 ? 1 : top * 1.1;
        h.raw("<figure><svg width=\"" + (labelWidth + plot + 330) + "\" height=\"" + height)
                .raw("\" role=\"img\" " + Html.attr("aria-label", title) + ">");
        defs(h, id, bars.stream().mapToInt(Bar::series).max().orElse(0) + 1);
        h.el("title", "", title);
        for (int i = 0; i < bars.size(); i++) {
            Bar b = bars.get(i);
            int y = 8 + i * row;
            double w = plot * Math.max(0, b.value()) / top;
            h.raw("<text x=\"0\" y=\"" + (y + 14) + "\">").text(b.label()).raw("</text>");
            h.raw("<rect x=\"" + labelWidth + "\" y=\"" + y + "\" width=\"" + fmt(w))
                    .raw("\" height=\"18\" fill=\"" + fill(id, b.series()) + "\" stroke=\"#333\">")
                    .el("title", "", b.label() + ": " + b.text())
                    .raw("</rect>");
            if (!Double.isNaN(b.low())) {
                double lo = labelWidth + plot * b.low() / top;
                double hi = labelWidth + plot * b.high() / top;
                h.raw("<path d=\"M" + fmt(lo) + " " + (y + 9) + "H" + fmt(hi))
                        .raw("M" + fmt(lo) + " " + (y + 4) + "v10M" + fmt(hi) + " " + (y + 4))
                        .raw("v10\" stroke=\"#000\" stroke-width=\"1.5\" fill=\"none\"/>");
            }
            h.raw(
                            "<text x=\""
                                    + fmt(
                                            labelWidth
                                                    + Math.max(
                                                            w,
                                                            Double.isNaN(b.high())
                                                                    ? 0
                                                                    : plot * b.high() / top)
                                                    + 6))
                    .raw("\" y=\"" + (y + 14) + "\">")
                    .text(b.text())
                    .raw("</text>");
        }
        h.raw("</svg><figcaption>").text(title).raw("</figcaption></figure>\n");
    }

    /**
     * Vertical bars stacked by series, one per category along the bottom.
     *
     * @param values {@code values[category][series]}
     */
    public static void stacked(
            Html h,
            String id,
            String title,
            List<String> categories,
            List<String> series,
            long[][] values) {
        int step = Math.max(6, Math.min(28, 900 / Math.max(1, categories.size())));
        int plot = 140;
        int width = 50 + step * categories.size() + 10;
        long top = 1;
        for (long[] stack : values) {
            long sum = 0;
            for (long v : stack) {
                sum += v;
            }
            top = Math.max(top, sum);
        }
        h.raw("<figure><svg width=\"" + width + "\" height=\"" + (plot + 70))
                .raw("\" role=\"img\" " + Html.attr("aria-label", title) + ">");
        defs(h, id, series.size());
        h.el("title", "", title);
        h.raw("<text x=\"0\" y=\"12\">").text(Html.count(top)).raw("</text>");
        h.raw("<text x=\"0\" y=\"" + (plot + 10) + "\">0</text>");
        h.raw(
                "<path d=\"M44 10V"
                        + (plot + 10)
                        + "H"
                        + width
                        + "\" stroke=\"#777\" fill=\"none\"/>");
        int labelEvery = Math.max(1, 40 / step);
        for (int c = 0; c < categories.size(); c++) {
            double x = 48 + c * step;
            double y = plot + 10;
            for (int s = 0; s < series.size(); s++) {
                long v = values[c][s];
                if (v == 0) {
                    continue;
                }
                double hgt = (double) plot * v / top;
                y -= hgt;
                h.raw("<rect x=\"" + fmt(x) + "\" y=\"" + fmt(y) + "\" width=\"" + (step - 2))
                        .raw("\" height=\"" + fmt(hgt) + "\" fill=\"" + fill(id, s))
                        .raw("\" stroke=\"#333\" stroke-width=\"0.5\">")
                        .el(
                                "title",
                                "",
                                categories.get(c) + ": " + Html.count(v) + " " + series.get(s))
                        .raw("</rect>");
            }
            if (c % labelEvery == 0) {
                h.raw("<text transform=\"translate(" + fmt(x + step / 2.0) + "," + (plot + 16))
                        .raw(") rotate(60)\">")
                        .text(categories.get(c))
                        .raw("</text>");
            }
        }
        h.raw("</svg>");
        legend(h, id, series);
        h.raw("<figcaption>").text(title).raw("</figcaption></figure>\n");
    }

    /** Names each series beside a swatch of its fill. */
    public static void legend(Html h, String id, List<String> series) {
        h.raw("<div class=\"legend\">");
        for (int s = 0; s < series.size(); s++) {
            h.raw(
                    "<span style=\"margin-right:14px\"><svg width=\"16\" height=\"12\" aria-hidden=\"true\">");
            // The swatch's patterns are the chart's: defined once per page under the chart's id.
            h.raw("<rect width=\"16\" height=\"12\" fill=\"" + fill(id, s) + "\" stroke=\"#333\"/>")
                    .raw("</svg> ")
                    .text(series.get(s))
                    .raw("</span>");
        }
        h.raw("</div>");
    }

    /** Series {@code i}'s fill: a pattern of its own in a colour of its own. */
    public static String fill(String id, int i) {
        return "url(#" + id + "-p" + i + ")";
    }

    /** A colour of the palette, for marks that are not a series. */
    public static String colour(int i) {
        return COLOURS[i % COLOURS.length];
    }

    /** Patterns 0..n-1: solid, hatched, dotted, crossed, striped, ruled; then again, darker. */
    public static void defs(Html h, String id, int n) {
        h.raw("<defs>");
        for (int i = 0; i < n; i++) {
            String c = COLOURS[i % COLOURS.length];
            h.raw("<pattern id=\"" + id + "-p" + i + "\" width=\"6\" height=\"6\"")
                    .raw(" patternUnits=\"userSpaceOnUse\">")
                    .raw("<rect width=\"6\" height=\"6\" fill=\"" + c + "\"/>");
            String ink = "stroke=\"#fff\" stroke-width=\"1.3\"";
            switch (i % 6) {
                case 1 -> h.raw("<path d=\"M0 6L6 0M-1 1L1 -1M5 7L7 5\" " + ink + "/>");
                case 2 -> h.raw("<circle cx=\"3\" cy=\"3\" r=\"1.2\" fill=\"#fff\"/>");
                case 3 -> h.raw("<path d=\"M0 0L6 6M6 0L0 6\" " + ink + "/>");
                case 4 -> h.raw("<path d=\"M0 3H6\" " + ink + "/>");
                case 5 -> h.raw("<path d=\"M3 0V6\" " + ink + "/>");
                default -> {}
            }
            h.raw("</pattern>");
        }
        h.raw("</defs>");
    }

    public static String fmt(double v) {
        return String.format(Locale.ROOT, "%.1f", v);
    }
}
