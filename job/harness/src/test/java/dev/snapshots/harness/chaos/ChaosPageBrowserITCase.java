package dev.snapshots.harness.chaos;

import static dev.snapshots.harness.chaos.ChaosReport.ordered;
import static org.assertj.core.api.Assertions.assertThat;

import dev.snapshots.harness.testutils.Chromium;
import dev.snapshots.store.LocalObjectStore;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;

/**
 * A chaos run's page in headless Chromium: each kill, overlap, rolling update and outage the report
 * holds is a mark or a band on the timeline, at the window of production it happened, on the same
 * axis as the pointer's readings below it; a report written before the pointer was read draws all
 * the same.
 */
class ChaosPageBrowserITCase {
    private static final Path OUT =
            Path.of(System.getProperty("snapshots.root", ".")).resolve("target/page-browser");

    @Test
    void theTimelineShowsEveryFaultBesideThePointersProgress() throws Exception {
        Path dir = Files.createDirectories(OUT.resolve("chaos"));
        ChaosPlan plan = ChaosPlan.parse(new String[] {"--windows", "12", "--s3-outage", "20"});
        ChaosReport report = new ChaosReport();
        report.put(
                "plan",
                java.util.List.of("kill@3+0.50", "overlap-start@5+0.50", "s3-outage@8+0.20"));
        report.kill(
                ordered(
                        "window",
                        3.6,
                        "killed",
                        "taskmanager-2",
                        "replacement",
                        "taskmanager-4",
                        "recoverySeconds",
                        12.5));
        report.kill(
                ordered(
                        "window",
                        4.2,
                        "killed",
                        "jobmanager-1",
                        "replacement",
                        "jobmanager-2",
                        "resumedFrom",
                        "s3://snapshots/flink/checkpoints/jm-1/x/chk-7",
                        "recoverySeconds",
                        21.0));
        report.put(
                "overlap",
                ordered(
                        "windowsSideBySide",
                        3.0,
                        "fromWindow",
                        5.5,
                        "kept",
                        "a",
                        "cancelled",
                        "b"));
        report.put(
                "s3Outage",
                ordered("window", 8.2, "seconds", 20, "uploadsAborted", 3, "recoverySeconds", 9.0));
        report.put(
                "rollingUpdate",
                ordered(
                        "window",
                        10.5,
                        "savepoint",
                        "s3://x/sp",
                        "jobManagers",
                        "jobmanager-2 -> jobmanager-3",
                        "seconds",
                        6.0));
        long start = 1_000_000_000L * 300;
        for (int w = 1; w <= 12; w++) {
            report.pointer(
                    w,
                    10.0 * w,
                    w < 2
                            ? Optional.empty()
                            : Optional.of(start + (w - 2) * ChaosPlan.WINDOW_MILLIS),
                    start);
        }
        report.put("windows", 12);
        Path empty = Files.createDirectories(dir.resolve("counters"));
        report.jobFigures(
                empty, new LocalObjectStore(Files.createDirectories(dir.resolve("store"))));
        report.write(dir, plan);

        try (Chromium browser = Chromium.start(1200, 900)) {
            browser.open(dir.resolve("report.html"));
            assertThat(
                            browser.evaluate(
                                            "document.scripts.length + performance.getEntriesByType('resource').length")
                                    .asInt())
                    .isZero();
            assertThat(titles(browser, "svg text.mark"))
                    .filteredOn(t -> t.startsWith("SIGKILL taskmanager"))
                    .hasSize(1);
            assertThat(titles(browser, "svg text.mark"))
                    .filteredOn(t -> t.startsWith("SIGKILL jobmanager"))
                    .hasSize(1);
            assertThat(titles(browser, "svg text.mark"))
                    .filteredOn(t -> t.startsWith("rolling update at window 10.5"))
                    .hasSize(1);
            assertThat(titles(browser, "svg rect.band"))
                    .anySatisfy(
                            t ->
                                    assertThat(t)
                                            .startsWith(
                                                    "a second instance ran beside the first for 3 windows"))
                    .anySatisfy(t -> assertThat(t).startsWith("S3 down for 20 s from window 8.2"));
            assertThat(titles(browser, "svg circle.reading"))
                    .hasSize(12)
                    .element(5)
                    .asString()
                    .contains("6 windows produced, 4 complete");
            // One axis for both: the kill at window 3.6 and the reading after window 4 sit where
            // their windows are.
            double kill =
                    browser.evaluate(
                                    "+[...document.querySelectorAll('svg text.mark')].find(m => m.textContent.startsWith('▼')).getAttribute('x') + 5")
                            .asDouble();
            double fourth =
                    browser.evaluate(
                                    "+document.querySelectorAll('svg circle.reading')[3].getAttribute('cx')")
                            .asDouble();
            assertThat(fourth - kill)
                    .isCloseTo(820 * 0.4 / 12, org.assertj.core.data.Offset.offset(1.0));
            Files.write(dir.resolve("report.png"), browser.screenshot(1200, 1400));

            // A report from before the pointer was read: drawn without it.
            Path old = Files.createDirectories(OUT.resolve("chaos-long-run"));
            JsonNode longRun =
                    new ObjectMapper()
                            .readTree(
                                    Path.of(System.getProperty("snapshots.root", "."))
                                            .resolve("docs/chaos/long-run.json")
                                            .toFile());
            ChaosPage.write(longRun, "./snapshots chaos --windows 50", 10, old);
            browser.open(old.resolve("report.html"));
            assertThat(titles(browser, "svg text.mark"))
                    .filteredOn(t -> t.startsWith("SIGKILL"))
                    .hasSize(longRun.path("kills").size());
            assertThat(browser.evaluate("document.body.textContent").asText())
                    .contains("no readings of the completion pointer");
        }
    }

    /**
     * The recovery table: each kill's parts, a part the run could not observe as "?", and the
     * median and worst of each kind over the kills outside the S3 outage only.
     */
    @Test
    void theRecoveryTableGivesEachKillsPartsAndLeavesTheOutageOut() throws Exception {
        Path dir = Files.createDirectories(OUT.resolve("chaos-recovery"));
        ChaosPlan plan = ChaosPlan.parse(new String[] {"--windows", "12", "--s3-outage", "20"});
        ChaosReport report = new ChaosReport();
        report.put(
                "s3Outage",
                ordered(
                        "window",
                        7.2,
                        "seconds",
                        20,
                        "recoverySeconds",
                        5.0,
                        "fromMillis",
                        70_000L,
                        "untilMillis",
                        95_000L));
        report.kill(taskManagerKill(2.3, 20_000L, 6.2, 1.5));
        report.kill(taskManagerKill(7.4, 72_000L, 30.0, null));
        report.kill(taskManagerKill(9.9, 99_000L, 8.0, null));
        Path empty = Files.createDirectories(dir.resolve("counters"));
        report.jobFigures(
                empty, new LocalObjectStore(Files.createDirectories(dir.resolve("store"))));
        report.write(dir, plan);

        try (Chromium browser = Chromium.start(1400, 900)) {
            browser.open(dir.resolve("report.html"));
            java.util.List<String> rows = new java.util.ArrayList<>();
            browser.evaluate(
                            "[...document.querySelectorAll('table.recovery tr')].slice(1)"
                                    + ".map(r => [...r.cells].map(c => c.textContent).join('|'))")
                    .forEach(r -> rows.add(r.asText()));
            assertThat(rows)
                    .containsExactly(
                            "2.3|taskmanager-2|6.2|1.2|0.8|1.5|0.9|0.3|0.4|1.1|aggregate (1/2)#1 on taskmanager-4|9.2",
                            "7.4|taskmanager-2 (during the S3 outage)|30.0|1.2|0.8|?|0.9|0.3|0.4|1.1|aggregate (1/2)#1 on taskmanager-4|33.0",
                            "9.9|taskmanager-2|8.0|1.2|0.8|?|0.9|0.3|0.4|1.1|aggregate (1/2)#1 on taskmanager-4|11.0",
                            "median|2 TaskManager kills outside the S3 outage|7.1|1.2|0.8|1.5|0.9|0.3|0.4|1.1||10.1",
                            "worst|2 TaskManager kills outside the S3 outage|8.0|1.2|0.8|1.5|0.9|0.3|0.4|1.1||11.0");
        }
    }

    private static java.util.Map<String, Object> taskManagerKill(
            double window, long at, double running, Double jar) {
        java.util.Map<String, Object> parts =
                ordered(
                        "restart", 1.2, "deploy", 0.8, "jar", jar, "client", 0.9, "probe", 0.3,
                        "state", 0.4, "other", 1.1);
        return ordered(
                "window",
                window,
                "killed",
                "taskmanager-2",
                "replacement",
                "taskmanager-4",
                "recoverySeconds",
                running + 3,
                "atMillis",
                at,
                "recoveredMillis",
                at + (long) (running + 3) * 1000,
                "runningSeconds",
                running,
                "lastToRun",
                "aggregate (1/2)#1 on taskmanager-4",
                "parts",
                parts);
    }

    private static java.util.List<String> titles(Chromium browser, String selector)
            throws Exception {
        java.util.List<String> out = new java.util.ArrayList<>();
        browser.evaluate(
                        "[...document.querySelectorAll('"
                                + selector
                                + "')].map(e => e.querySelector('title').textContent)")
                .forEach(t -> out.add(t.asText()));
        return out;
    }
}
