package dev.snapshots.harness.bench;

import static org.assertj.core.api.Assertions.assertThat;

import dev.snapshots.harness.testutils.Chromium;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.node.ObjectNode;
import org.junit.jupiter.api.Test;

/**
 * The benchmark's page in headless Chromium, drawn from the results committed in docs/: a bar per
 * sink at its median rate with its rounds' range, every figure each sink measured in one table, the
 * scaling ratios; and a figure or section the page does not know yet (the results keep growing) is
 * drawn all the same; and each sink's CPU per event with its rounds' range, the ratio's spread and
 * the verdict.
 */
class BenchPageBrowserITCase {
    @Test
    void theFiguresOfEverySinkAreDrawnAndNewOnesToo() throws Exception {
        Path root = Path.of(System.getProperty("snapshots.root", "."));
        ObjectNode results =
                (ObjectNode)
                        new ObjectMapper()
                                .readTree(root.resolve("docs/bench-results.json").toFile());
        ((ObjectNode) results.path("comparison").path("sinks").path("ours"))
                .put("cpuNanosPerEvent", 1234.5);
        results.putObject("encodingFloor").put("nanosPerRow", 321);
        results.set(
                "cost",
                new ObjectMapper().valueToTree(BenchSummary.cost(RoundsTest.threeRounds())));
        Path out = Files.createDirectories(root.resolve("target/page-browser/bench"));
        Path page = out.resolve("report.html");
        BenchPage.write(results, page);

        try (Chromium browser = Chromium.start(1200, 900)) {
            browser.open(page);
            assertThat(
                            browser.evaluate(
                                            "document.scripts.length + performance.getEntriesByType('resource').length")
                                    .asInt())
                    .isZero();
            List<String> bars = texts(browser, "svg rect title");
            results.path("comparison")
                    .path("sinks")
                    .fields()
                    .forEachRemaining(
                            s ->
                                    assertThat(bars)
                                            .anySatisfy(
                                                    b ->
                                                            assertThat(b)
                                                                    .startsWith(s.getKey() + ": ")
                                                                    .contains(
                                                                            String.format(
                                                                                    java.util.Locale
                                                                                            .ROOT,
                                                                                    "%,d events/s",
                                                                                    s.getValue()
                                                                                            .path(
                                                                                                    "eventsPerSecondMedian")
                                                                                            .asLong()))));
            assertThat(
                            browser.evaluate(
                                            "document.querySelectorAll('svg path[stroke=\"#000\"]').length")
                                    .asInt())
                    .as("a whisker per sink")
                    .isGreaterThanOrEqualTo(3);
            String text = browser.evaluate("document.body.textContent").asText();
            assertThat(text)
                    .contains("ours / Discarding", "ours / FileSink")
                    .contains("cpuNanosPerEvent", "1,234.5")
                    .contains("encodingFloor", "nanosPerRow", "321");
            // CPU per event per sink, its rounds' range, the ratio's spread and the verdict.
            assertThat(text)
                    .contains("Cost per event", "10 keys, B=4, 3 rounds: met")
                    .contains("oursOverFileSinkCpu", "spreadPercent 0")
                    .contains("ownCpuNanosPerEvent", "roundsOursAtMostFileSink", "3 of 3");
            assertThat(bars)
                    .contains(
                            "discarding: 1,500 ns/event (rounds 1,000..2,000)",
                            "filesink: 1,650 ns/event (rounds 1,100..2,200)",
                            "ours: 1,620 ns/event (rounds 1,080..2,160)");
            Files.write(out.resolve("report.png"), browser.screenshot(1200, 1600));
        }
    }

    private static List<String> texts(Chromium browser, String selector) throws Exception {
        List<String> out = new ArrayList<>();
        browser.evaluate(
                        "[...document.querySelectorAll('"
                                + selector
                                + "')].map(e => e.textContent)")
                .forEach(t -> out.add(t.asText()));
        return out;
    }
}
