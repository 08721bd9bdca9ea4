package dev.snapshots.cli.page;

import java.io.BufferedWriter;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.Locale;
import org.apache.flink.annotation.Internal;

/**
 * One self-contained HTML page being written: inline CSS and SVG, no script, nothing fetched, so it
 * opens from an S3 console download or a CI artifact. Streams to its file: a week of a large store
 * is tens of megabytes.
 */
@Internal
public final class Html implements AutoCloseable {
    /** What every page shares: type, tables, the figures' notes, focus and targets. */
    private static final String BASE_CSS =
            String.join(
                    "\n",
                    ":root{--fg:#1b1b1b;--muted:#5a5a5a;--line:#c8c8c8;--bg:#fff;--tint:#f3f3f1}",
                    "body{font:14px/1.45 system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;color:var(--fg);background:var(--bg);margin:0 24px 48px}",
                    "h1{font-size:22px;margin:18px 0 4px}h2{font-size:18px;margin:28px 0 6px}h3{font-size:14px;margin:14px 0 4px}",
                    "p.sub{color:var(--muted);margin:0 0 10px}",
                    "table{border-collapse:collapse;margin:6px 0 12px}th,td{border-bottom:1px solid var(--line);padding:3px 10px 3px 0;text-align:left;vertical-align:top}",
                    "th{font-weight:600}td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}",
                    "code,.mono{font:12px/1.35 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}",
                    "code.cmd{display:block;background:var(--tint);padding:3px 6px;user-select:all;white-space:pre-wrap;word-break:break-all}",
                    "dl.facts{display:grid;grid-template-columns:max-content auto;gap:2px 14px;margin:6px 0}dl.facts dt{color:var(--muted)}dl.facts dd{margin:0}",
                    ".badge{display:inline-block;border:1px solid var(--fg);border-radius:3px;padding:0 5px;font-size:12px;font-weight:600;margin-left:6px}",
                    ".ok{color:#05603a}.bad{color:#a01010;font-weight:600}",
                    ":target{outline:3px solid #000;outline-offset:1px}",
                    "a:focus-visible{outline:3px solid #000}",
                    "svg text{font:11px system-ui,sans-serif;fill:var(--fg)}",
                    "figure{margin:8px 0 16px}figcaption{color:var(--muted);font-size:12px}");

    private static final DateTimeFormatter MINUTE =
            DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm", Locale.ROOT).withZone(ZoneOffset.UTC);
    private static final DateTimeFormatter CLOCK =
            DateTimeFormatter.ofPattern("HH:mm", Locale.ROOT).withZone(ZoneOffset.UTC);
    private static final DateTimeFormatter DAY =
            DateTimeFormatter.ofPattern("yyyy-MM-dd", Locale.ROOT).withZone(ZoneOffset.UTC);

    private final Writer out;

    private Html(Writer out) {
        this.out = out;
    }

    /** Opens {@code file} and writes the page's head: its title and stylesheet. */
    public static Html page(Path file, String title, String css) throws IOException {
        Html html =
                new Html(
                        new BufferedWriter(
                                Files.newBufferedWriter(file, StandardCharsets.UTF_8), 1 << 16));
        html.raw("<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">")
                .raw("<meta name=\"viewport\" content=\"width=device-width\">")
                .raw("<title>")
                .text(title)
                .raw("</title>\n<style>\n")
                .raw(BASE_CSS)
                .raw("\n")
                .raw(css)
                .raw("\n</style></head><body>\n");
        return html;
    }

    /** Markup as given. */
    public Html raw(String markup) {
        try {
            out.write(markup);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return this;
    }

    /** Text, escaped for an element's content or a quoted attribute's value. */
    public Html text(String text) {
        return raw(esc(text));
    }

    /** {@code <tag attrs>text</tag>}, the text escaped. */
    public Html el(String tag, String attrs, String text) {
        return raw("<" + tag + (attrs.isEmpty() ? "" : " " + attrs) + ">")
                .text(text)
                .raw("</" + tag + ">");
    }

    /** Escapes {@code &<>"'}; a line break becomes {@code &#10;}, which a tooltip shows as one. */
    public static String esc(String s) {
        StringBuilder b = new StringBuilder(s.length() + 16);
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '&' -> b.append("&amp;");
                case '<' -> b.append("&lt;");
                case '>' -> b.append("&gt;");
                case '"' -> b.append("&quot;");
                case '\'' -> b.append("&#39;");
                case '\n' -> b.append("&#10;");
                default -> b.append(c);
            }
        }
        return b.toString();
    }

    /** {@code attr="value"}, escaped. */
    public static String attr(String name, String value) {
        return name + "=\"" + esc(value) + "\"";
    }

    public static String minute(long millis) {
        return MINUTE.format(Instant.ofEpochMilli(millis));
    }

    public static String clock(long millis) {
        return CLOCK.format(Instant.ofEpochMilli(millis));
    }

    public static String day(long millis) {
        return DAY.format(Instant.ofEpochMilli(millis));
    }

    public static String count(long n) {
        // Most counts on a page are a part's rows: skip the formatter below a thousand.
        return n > -1000 && n < 1000 ? Long.toString(n) : String.format(Locale.ROOT, "%,d", n);
    }

    /** A duration as people say it: "3 d 4 h", "2 h 5 min", "40 s". */
    public static String span(Duration d) {
        long s = Math.abs(d.getSeconds());
        String sign = d.isNegative() ? "-" : "";
        if (s >= 86_400) {
            return sign
                    + s / 86_400
                    + " d"
                    + (s % 86_400 < 3600 ? "" : " " + s % 86_400 / 3600 + " h");
        }
        if (s >= 3600) {
            return sign + s / 3600 + " h" + (s % 3600 < 60 ? "" : " " + s % 3600 / 60 + " min");
        }
        if (s >= 60) {
            return sign + s / 60 + " min" + (s % 60 == 0 ? "" : " " + s % 60 + " s");
        }
        return sign + s + " s";
    }

    /** Closes the page and its file. */
    @Override
    public void close() {
        raw("\n</body></html>\n");
        try {
            out.close();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
