package dev.snapshots.cli.page;

import static org.assertj.core.api.Assertions.assertThat;

import dev.snapshots.cli.Audit;
import dev.snapshots.harness.Snapshots;
import dev.snapshots.harness.testutils.Chromium;
import dev.snapshots.harness.testutils.StoreDamage;
import dev.snapshots.key.ObjectKeys;
import dev.snapshots.key.WorkIdentity;
import dev.snapshots.store.ObjectStore;
import dev.snapshots.store.StoreSpec;
import dev.snapshots.testkit.StoreKind;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The store page in a real browser: a store the job wrote, run a second time over its first windows
 * (their parts collapse), then damaged the ways the audit knows (a part deleted, evidence of a
 * divergence, a stray copy, an acknowledged finding, a part staged and never published). Its page,
 * made by {@code inspect --html}, is loaded in headless Chromium, and the DOM must show each cell's
 * state: the state's class, glyph and label, and the look of the legend's swatch for that state,
 * every state's look distinct from every other's. The page fetches nothing and runs no script;
 * every cell carries a label; a finding links to its cell.
 */
class StorePageBrowserITCase {
    @RegisterExtension
    static final MiniClusterExtension CLUSTER =
            new MiniClusterExtension(
                    new MiniClusterResourceConfiguration.Builder()
                            .setNumberTaskManagers(1)
                            .setNumberSlotsPerTaskManager(4)
                            .build());

    private static final long FIRST = Instant.parse("2026-11-30T10:00:00Z").toEpochMilli();
    private static final long WINDOW = 300_000L;

    /** A window well after the job's last: 11:30. */
    private static final int OPEN = 18;

    @Test
    void eachCellOfADamagedStoreShowsItsStateInChromium() throws Exception {
        StoreSpec spec = StoreKind.FILESYSTEM.fresh();
        StoreDamage damage = new StoreDamage(spec);
        StoreDamage.jobWrote(spec);
        // A second execution of the first two windows: each of their parts collapses into the
        // first's, and says so.
        StoreDamage.jobWrote(spec, "--windows", "2");
        List<Path> parts = damage.parts();
        assertThat(parts.get(39).toString())
                .as("10 windows x 4 buckets from 10:00 (and what the closing records make)")
                .contains("window=1045/part-00003-of-00004-");
        damage.delete(parts.get(3 * 4 + 1));
        damage.divergenceEvidence(parts.get(4 * 4 + 2));
        damage.strayCopy(parts.get(5 * 4 + 3));
        Path examined = damage.divergenceEvidence(parts.get(6 * 4));
        acknowledge(spec, damage.key(examined));
        // Staged two days ago in a window the pointer has not passed.
        Path open =
                damage.root()
                        .resolve(
                                ObjectKeys.partKey(
                                        new WorkIdentity(
                                                "telemetry",
                                                FIRST + OPEN * WINDOW,
                                                WINDOW,
                                                1,
                                                1,
                                                2,
                                                4,
                                                "")));
        damage.staged(open, Duration.ofDays(2));

        Path out =
                Path.of(System.getProperty("snapshots.root", ".")).resolve("target/page-browser");
        Files.createDirectories(out);
        Path page = out.resolve("damaged-store.html");
        String said = run("inspect", spec.uri().toString(), "--html", page.toString());
        assertThat(said).contains("wrote " + page);

        Map<String, CellState> expected = new LinkedHashMap<>();
        expected.put(cell(0, 0), CellState.COLLAPSED);
        expected.put(cell(1, 3), CellState.COLLAPSED);
        expected.put(cell(2, 0), CellState.PUBLISHED);
        expected.put(cell(3, 1), CellState.MISSING);
        expected.put(cell(4, 2), CellState.DIVERGENT);
        expected.put(cell(5, 3), CellState.FINDING);
        expected.put(cell(6, 0), CellState.ACKNOWLEDGED);
        // The window the job's closing records opened: its manifest lists only the buckets that
        // had rows.
        Path closing = damage.window(parts.get(0), "window=1050");
        for (int b = 0; b < 4; b++) {
            String name = String.format("part-%05d-", b);
            try (Stream<Path> files = Files.list(closing)) {
                boolean rows = files.anyMatch(p -> p.getFileName().toString().startsWith(name));
                expected.put(cell(10, b), rows ? CellState.PUBLISHED : CellState.EMPTY);
            }
        }
        assertThat(expected).containsValue(CellState.EMPTY);
        expected.put(cell(OPEN, 2), CellState.STAGED);
        expected.put(cell(OPEN, 0), CellState.PENDING);

        try (Chromium browser = Chromium.start(1400, 1000)) {
            browser.open(page);
            assertThat(browser.evaluate("document.scripts.length").asInt()).as("scripts").isZero();
            assertThat(browser.evaluate("performance.getEntriesByType('resource').length").asInt())
                    .as("resources fetched")
                    .isZero();
            assertThat(
                            browser.evaluate(
                                            "[...document.querySelectorAll('.g .r > :is(i,a):not(.x)')]"
                                                    + ".filter(e => !e.title || e.getAttribute('role') !== 'img').length")
                                    .asInt())
                    .as("cells without a label")
                    .isZero();

            // What each state looks like in the legend: its swatch is drawn as a cell is.
            Map<String, String> looks = new LinkedHashMap<>();
            for (CellState s : CellState.values()) {
                looks.put(
                        s.id(),
                        browser.evaluate(
                                        look(
                                                "document.querySelector('.legend [data-state=\""
                                                        + s.id()
                                                        + "\"]')"))
                                .asText());
            }
            assertThat(new HashSet<>(looks.values()))
                    .as("every state looks different from every other: %s", looks)
                    .hasSize(CellState.values().length);
            assertThat(
                            looks.values().stream()
                                    .map(l -> l.substring(0, l.lastIndexOf(" | ")))
                                    .distinct())
                    .as("and not by its glyph alone: its fill and border differ too")
                    .hasSize(CellState.values().length);

            List<String> wrong = new ArrayList<>();
            for (Map.Entry<String, CellState> e : expected.entrySet()) {
                CellState state = e.getValue();
                JsonNode cell =
                        browser.evaluate(
                                "(() => { const e = "
                                        + e.getKey()
                                        + "; return {css: e.className, glyph: e.textContent,"
                                        + " title: e.title, look: "
                                        + look("e")
                                        + ", width: e.getBoundingClientRect().width}; })()");
                String where = e.getKey() + " (" + state.id() + ")";
                if (!cell.path("css").asText().equals(state.css)
                        || !cell.path("glyph").asText().equals(state.glyph)
                        || !cell.path("title").asText().startsWith(state.label + " ·")
                        || !cell.path("look").asText().equals(looks.get(state.id()))
                        || cell.path("width").asDouble() <= 0) {
                    wrong.add(where + " shows " + cell);
                }
            }
            assertThat(wrong).as("cells that do not show their state").isEmpty();

            // Each finding links to its cell, and the cell back to it.
            JsonNode links =
                    browser.evaluate(
                            "[...document.querySelectorAll('#findings a[href^=\"#c-\"]')].map(a => {"
                                    + " const c = document.getElementById(a.getAttribute('href').slice(1));"
                                    + " return c && c.closest('.g') ? c.className : 'none'; })");
            List<String> linked = new ArrayList<>();
            links.forEach(l -> linked.add(l.asText()));
            assertThat(linked).contains("m", "d", "f", "s").doesNotContain("none");
            assertThat(
                            browser.evaluate(
                                            "document.querySelector('#findings code.cmd').textContent")
                                    .asText())
                    .contains("snapshots audit '" + spec.uri() + "' --acknowledge ");

            Files.write(out.resolve("damaged-store.png"), browser.screenshot(1400, 2600));
        }
    }

    /** The expression for the cell of window {@code w} (from 10:00) and {@code bucket}. */
    private static String cell(int w, int bucket) {
        return "document.getElementById('w-telemetry-v1-s1-"
                + (FIRST + w * WINDOW) / 60_000
                + "').children["
                + (1 + bucket)
                + "]";
    }

    /** What an element looks like: its fill, border and glyph, as the browser computed them. */
    private static String look(String element) {
        return "(e => { const c = getComputedStyle(e); return [c.backgroundColor, c.borderTopStyle,"
                + " c.borderTopColor, c.color, e.textContent].join(' | '); })("
                + element
                + ")";
    }

    private static void acknowledge(StoreSpec spec, String evidence) throws Exception {
        String id;
        try (ObjectStore store = spec.open()) {
            id =
                    Audit.findings(store, Optional.empty()).stream()
                            .filter(f -> f.where().equals(evidence))
                            .findFirst()
                            .orElseThrow()
                            .id();
        }
        run(
                "audit",
                spec.uri().toString(),
                "--acknowledge",
                id,
                "--by",
                "ops@example.com",
                "--reason",
                "replayed input, checked");
    }

    private static String run(String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        int code =
                Snapshots.run(args, new PrintStream(out, true, StandardCharsets.UTF_8), System.err);
        String said = out.toString(StandardCharsets.UTF_8);
        assertThat(code).as(said).isZero();
        return said;
    }
}
