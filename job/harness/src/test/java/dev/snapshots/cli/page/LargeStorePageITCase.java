package dev.snapshots.cli.page;

import static org.assertj.core.api.Assertions.assertThat;

import dev.snapshots.harness.Snapshots;
import dev.snapshots.harness.testutils.Chromium;
import dev.snapshots.harness.testutils.LargeStore;
import dev.snapshots.store.ObjectStore;
import dev.snapshots.store.StoreSpec;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * How the store page copes with a week of five-minute windows at B = 128 (258,048 parts): how long
 * {@code inspect --html} takes to read the store (audit included) and draw the page, how large the
 * page is, and how long Chromium takes to load it and to show its last window and a cell deep in
 * it. Minutes of building and reading, so it runs in the {@code page-scale} profile only: {@code
 * ./mvnw -o -pl job/harness -am verify -Ppage-scale}. {@code -Dpage.scale.days} and {@code
 * -Dpage.scale.buckets} change the size; {@code -Dpage.scale.store=DIR} reuses a store built
 * before.
 */
@Tag("page-scale")
class LargeStorePageITCase {
    @Test
    void aWeekAtB128IsReadDrawnAndLoadedInSeconds() throws Exception {
        int days = Integer.getInteger("page.scale.days", 7);
        int buckets = Integer.getInteger("page.scale.buckets", 128);
        long from = Instant.parse("2026-11-23T00:00:00Z").toEpochMilli();
        Path out = Path.of(System.getProperty("snapshots.root", ".")).resolve("target/page-scale");
        Files.createDirectories(out);
        String reused = System.getProperty("page.scale.store", "");
        Path root =
                reused.isEmpty()
                        ? Files.createTempDirectory("page-scale-store-")
                        : Files.createDirectories(Path.of(reused));
        StoreSpec spec = StoreSpec.parse(root.toUri().toString());
        long built = 0;
        if (reused.isEmpty() || !Files.exists(root.resolve("telemetry"))) {
            long t0 = System.nanoTime();
            try (ObjectStore store = spec.open()) {
                LargeStore.write(store, from, days, buckets);
            }
            built = (System.nanoTime() - t0) / 1_000_000;
        }
        Path page = out.resolve("store.html");

        long t0 = System.nanoTime();
        String said = inspect(spec, page);
        long inspected = (System.nanoTime() - t0) / 1_000_000;
        t0 = System.nanoTime();
        String saidFromMetadata =
                inspect(spec, out.resolve("store-metadata-only.html"), "--metadata-only");
        long fromMetadata = (System.nanoTime() - t0) / 1_000_000;

        Chromium.Timing timing;
        double lastWindow;
        double deepCell;
        long cells;
        try (Chromium browser = Chromium.start(1500, 1000)) {
            timing = browser.open(page);
            cells = browser.evaluate("document.querySelectorAll('.r > i.p').length").asLong();
            // Jump to the last window and to a cell in the middle of the week, as a link does, and
            // wait for the frame that shows it.
            lastWindow = jump(browser, "[...document.querySelectorAll('.g .r')].pop()");
            deepCell =
                    jump(
                            browser,
                            "document.querySelectorAll('.g .day')["
                                    + days / 2
                                    + "].querySelectorAll('.r')[150]");
            Files.write(out.resolve("store-top.png"), browser.screenshot(1500, 1000));
        }
        String figures =
                String.format(
                        Locale.ROOT,
                        "%d days x 288 windows x B=%d: %,d published cells drawn%n"
                                + "store built in %.1f s%n"
                                + "inspect --html: %.1f s in all; %s"
                                + "inspect --html --metadata-only: %.1f s in all; %s"
                                + "page: %,d bytes%n"
                                + "Chromium: DOMContentLoaded %.0f ms, load %.0f ms, first contentful paint %.0f ms;"
                                + " last window shown %.0f ms after the jump, a cell mid-week %.0f ms%n",
                        days,
                        buckets,
                        cells,
                        built / 1000.0,
                        inspected / 1000.0,
                        said,
                        fromMetadata / 1000.0,
                        saidFromMetadata,
                        Files.size(page),
                        timing.domContentLoaded(),
                        timing.load(),
                        timing.firstContentfulPaint(),
                        lastWindow,
                        deepCell);
        System.out.println(figures);
        Files.writeString(out.resolve("figures.txt"), figures);

        assertThat(cells).isEqualTo((long) days * 288 * buckets);
        assertThat(timing.load()).as("load event, ms").isLessThan(30_000);
        assertThat(lastWindow).as("the last window shown, ms").isLessThan(5_000);
        assertThat(deepCell).as("a cell mid-week shown, ms").isLessThan(5_000);
    }

    private static String inspect(StoreSpec spec, Path page, String... more) {
        List<String> args =
                new ArrayList<>(
                        List.of("inspect", spec.uri().toString(), "--html", page.toString()));
        args.addAll(List.of(more));
        ByteArrayOutputStream said = new ByteArrayOutputStream();
        int code =
                Snapshots.run(
                        args.toArray(new String[0]),
                        new PrintStream(said, true, StandardCharsets.UTF_8),
                        System.err);
        assertThat(code).as(said.toString(StandardCharsets.UTF_8)).isZero();
        return said.toString(StandardCharsets.UTF_8);
    }

    /** Scrolls {@code element} into view and returns the ms until the second frame after. */
    private static double jump(Chromium browser, String element) throws Exception {
        JsonNode ms =
                browser.evaluate(
                        "new Promise(done => { const t0 = performance.now(); "
                                + element
                                + ".scrollIntoView(); requestAnimationFrame(() => requestAnimationFrame(() =>"
                                + " done(performance.now() - t0))); })");
        return ms.asDouble();
    }
}
