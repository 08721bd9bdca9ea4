package dev.snapshots.harness.bench;

import static org.assertj.core.api.Assertions.assertThat;

import dev.snapshots.harness.testutils.Chromium;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
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
        results.set(
                "commitLatency",
                new ObjectMapper()
                        .valueToTree(
                                BenchSummary.commitLatency(
                                        BenchPlan.parse(new String[] {"--store", "s3"}),
                                        List.of(),
                                        Map.of(
                                                new CommitShapes.Shape(16, 4),
                                                List.of(
                                                        new CommitShapes.Round(
                                                                new long[] {120, 480},
                                                                new long[] {40, 60},
                                                                20,
                                                                16),
                                                        new CommitShapes.Round(
                                                                new long[] {90, 610},
                                                                new long[] {30, 70},
                                                                18,
                                                                16))))));
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
                    .contains("ours / FileSink, CPU per event", "0.982 (0.982..0.982)", "0 %")
                    .contains("own CPU ns (over discarding)", "150 (100..200)", "120 (80..160)")
                    .contains("ours / FileSink, sink threads' CPU per event", "0.75 (0.75..0.75)")
                    .contains("sink threads' CPU ns", "400 (400..400), 0 %")
                    .contains("our sink threads' CPU per event <= FileSink's: met (ours at most")
                    .contains("in 3 of 3 rounds");
            // Commit p99 and requests per data object per shape, with range and verdicts.
            assertThat(text)
                    .contains("Commits: latency and requests", "B=16, P=4")
                    .contains("545 (480..610)", "inconclusive", "1.19 (1.13..1.25)");
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
