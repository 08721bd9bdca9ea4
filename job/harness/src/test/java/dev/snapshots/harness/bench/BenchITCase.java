package dev.snapshots.harness.bench;

import static org.assertj.core.api.Assertions.assertThat;

import dev.snapshots.harness.Snapshots;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;

/**
 * The benchmark tool works end to end on a small input and writes what it promises; how fast
 * anything is, is not asserted (that is what the tool reports, not what a test can know).
 */
class BenchITCase {

    @Test
    void aSmallRunMeasuresAllThreeSinksAndWritesItsReports() throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        int code =
                Snapshots.run(
                        new String[] {
                            "bench",
                            "--events",
                            "200000",
                            "--keys",
                            "500",
                            "--runs",
                            "1",
                            "--scale-keys",
                            "500",
                            "--scale-buckets",
                            "2,4",
                            "--scale-events",
                            "100000",
                            "--heap",
                            "768m",
                            "--checkpoint-interval",
                            "1s"
                        },
                        new PrintStream(out, true, StandardCharsets.UTF_8),
                        System.err);
        String said = out.toString(StandardCharsets.UTF_8);
        System.out.print(said);
        assertThat(code).as(said).isZero();

        Path dir = Path.of(System.getProperty("snapshots.root"), "target/bench");
        JsonNode results = new ObjectMapper().readTree(dir.resolve("results.json").toFile());
        JsonNode sinks = results.path("comparison").path("sinks");
        assertThat(sinks.fieldNames())
                .toIterable()
                .containsExactly("discarding", "filesink", "ours");
        sinks.forEach(s -> assertThat(s.path("eventsPerSecondMedian").asLong()).isPositive());
        sinks.forEach(
                s ->
                        assertThat(s.path("eventsPerSecondOverallMedian").asLong())
                                .as("the whole run's rate")
                                .isPositive());
        assertThat(sinks.path("discarding").path("objectsWritten").asLong()).isZero();
        assertThat(sinks.path("filesink").path("objectsWritten").asLong())
                .as("FileSink wrote Parquet files")
                .isPositive();
        assertThat(sinks.path("ours").path("objectsWritten").asLong())
                .as("our parts (and progress pointer)")
                .isPositive();
        assertThat(sinks.path("ours").path("commits").asInt())
                .as("commit latencies were recorded")
                .isPositive();
        assertThat(sinks.path("ours").path("writtenPerSubtask").size())
                .as("both subtasks wrote rows")
                .isEqualTo(2);
        assertThat(rows(sinks.path("ours")))
                .as("rows into ours and into the discarding sink")
                .isPositive()
                .isEqualTo(rows(sinks.path("discarding")))
                .isEqualTo(rows(sinks.path("filesink")));
        sinks.forEach(
                s ->
                        assertThat(s.path("lateAtWindow").asLong())
                                .as("events dropped as late at the window: the input measured")
                                .isZero());
        results.path("scaling")
                .forEach(row -> assertThat(row.path("lateAtWindow").asLong()).isZero());
        sinks.forEach(
                s ->
                        assertThat(s.has("gcPauseMillisPerMinute"))
                                .as("GC pause time per minute")
                                .isTrue());
        assertThat(results.path("comparison").path("oursOverDiscarding").asDouble()).isPositive();
        assertThat(results.path("comparison").path("oursOverFileSink").asDouble()).isPositive();
        assertThat(results.path("scaling")).hasSize(2);
        results.path("scaling")
                .forEach(
                        row ->
                                assertThat(row.path("fileSinkEventsPerSecond").asLong())
                                        .isPositive());
        assertThat(sinks.path("ours").path("checkpointKiBByQuarter"))
                .as("checkpoint sizes were sampled")
                .isNotEmpty();
        assertThat(sinks.path("ours").path("pointerUpdates").asInt())
                .as("updates of the Completion pointer task, timed")
                .isPositive();
        JsonNode cost = results.path("cost");
        assertThat(cost)
                .as("a CPU row for the comparison and each scaling row")
                .hasSize(1 + results.path("scaling").size());
        for (JsonNode row : cost) {
            for (String sink : List.of("discarding", "filesink", "ours")) {
                assertThat(row.path("cpuNanosPerEvent").path(sink).path("median").asDouble())
                        .as("%s: CPU per event", sink)
                        .isPositive();
                assertThat(row.path("allocatedBytesPerEvent").path(sink).path("median").asDouble())
                        .as("%s: bytes allocated per event", sink)
                        .isPositive();
                assertThat(row.path("sinkCpuNanosPerEvent").path(sink).path("median").asDouble())
                        .as("%s: its own threads' CPU per event", sink)
                        .isPositive();
            }
            assertThat(row.path("verdict").asText()).isIn("met", "missed", "inconclusive");
            assertThat(row.path("wholeProcessVerdict").asText())
                    .isIn("met", "missed", "inconclusive");
        }
        try (Stream<Path> files = Files.list(dir.resolve("runs"))) {
            List<Path> runs = files.filter(f -> f.toString().endsWith(".json")).toList();
            assertThat(runs).hasSize(7);
            for (Path run : runs) {
                sinkThreadsAreTheSinksAlone(new ObjectMapper().readTree(run.toFile()));
            }
        }
        assertThat(said).contains("ours / discarding:", "events/s");
        assertThat(Files.readString(dir.resolve("BENCHMARKS.md")))
                .contains("Command: `./snapshots bench", "chart.png");
        byte[] png = Files.readAllBytes(dir.resolve("chart.png"));
        assertThat(new String(png, 1, 3, StandardCharsets.US_ASCII)).isEqualTo("PNG");
    }

    /**
     * A run's sink threads: some CPU, less than the whole process's, and by their names the sink's
     * tasks and our publishers, never the source's or the window's.
     */
    private static void sinkThreadsAreTheSinksAlone(JsonNode run) {
        String sink = run.path("sink").asText();
        assertThat(run.path("sinkCpuNanosPerEvent").asDouble())
                .as("%s: the sink threads' CPU per event", sink)
                .isPositive()
                .isLessThan(run.path("cpuNanosPerEvent").asDouble());
        // Over the whole run: at least the steady state's share of it (70 % of the input), and
        // never more than the process spent over that run.
        assertThat(run.path("sinkCpuNanosPerEventOverall").asDouble())
                .as("%s: the sink threads' CPU per event over the whole run", sink)
                .isGreaterThan(0.7 * run.path("sinkCpuNanosPerEvent").asDouble())
                .isLessThan(run.path("cpuNanosPerEventOverall").asDouble());
        List<String> threads = new ArrayList<>();
        run.path("sinkThreads").forEach(t -> threads.add(t.asText()));
        assertThat(threads)
                .as("%s: the threads timed", sink)
                .isNotEmpty()
                .noneMatch(t -> t.contains("aggregate") || t.contains("Source"));
        // Each task's own thread, or one Flink names "... for" it (its timers, its output flusher).
        switch (sink) {
            case "ours" ->
                    assertThat(threads)
                            .allMatch(
                                    t ->
                                            t.contains("snapshots-to-writer -> snapshots: Writer (")
                                                    || t.contains(
                                                            "snapshots-to-committer -> snapshots:"
                                                                    + " Committer (")
                                                    || t.contains("snapshots: Completion pointer (")
                                                    || t.equals("snapshot-publisher")
                                                    || t.equals("snapshot-manifests")
                                                    || t.equals("completion-pointer-snapshots"))
                            .anyMatch(t -> t.startsWith("snapshots-to-writer"))
                            .anyMatch(t -> t.startsWith("snapshots: snapshots-to-committer"))
                            .contains("snapshot-publisher");
            case "filesink" ->
                    assertThat(threads)
                            .allMatch(t -> t.contains("filesink: Writer -> filesink: Committer ("))
                            .anyMatch(t -> t.startsWith("filesink: Writer"));
            default ->
                    assertThat(threads)
                            .allMatch(t -> t.contains("discarding: Writer ("))
                            .anyMatch(t -> t.startsWith("discarding: Writer"));
        }
    }

    private static long rows(JsonNode sink) {
        long sum = 0;
        for (JsonNode n : sink.path("writtenPerSubtask")) {
            sum += n.asLong();
        }
        return sum;
    }
}
