package dev.snapshots.harness.bench;

import dev.snapshots.harness.bench.BenchPlan.Run;
import dev.snapshots.harness.bench.BenchPlan.Section;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;

/**
 * The runs' measurements turned into the sections of results.json: per sink of the comparison the
 * median and spread of events/s and what else each sink costs, the scaling table (ours against the
 * discarding sink and FileSink) and the catch-ups.
 */
final class BenchSummary {
    /** A run and what it measured. */
    record Measured(Run run, JsonNode result) {}

    private BenchSummary() {}

    static Map<String, Object> comparison(BenchPlan plan, List<Measured> runs) {
        Map<String, Object> comparison = new LinkedHashMap<>();
        comparison.put("events", plan.events());
        comparison.put("keys", plan.keys());
        comparison.put("buckets", plan.buckets());
        comparison.put("runs", plan.rounds());
        Map<String, Object> sinks = new LinkedHashMap<>();
        for (BenchRun.Sink sink : BenchRun.Sink.values()) {
            List<JsonNode> results = results(runs, Section.COMPARISON, sink);
            if (!results.isEmpty()) {
                sinks.put(sink.name().toLowerCase(Locale.ROOT), summary(results));
            }
        }
        comparison.put("sinks", sinks);
        double ours =
                median(results(runs, Section.COMPARISON, BenchRun.Sink.OURS), "eventsPerSecond");
        comparison.put(
                "oursOverDiscarding",
                round(
                        ours
                                / median(
                                        results(runs, Section.COMPARISON, BenchRun.Sink.DISCARDING),
                                        "eventsPerSecond"),
                        3));
        comparison.put(
                "oursOverFileSink",
                round(
                        ours
                                / median(
                                        results(runs, Section.COMPARISON, BenchRun.Sink.FILESINK),
                                        "eventsPerSecond"),
                        3));
        return comparison;
    }

    /**
     * A row per key count and bucket count of ours: the medians of its rounds beside the medians of
     * the discarding sink's and FileSink's rounds of the same key count.
     */
    static List<Map<String, Object>> scaling(List<Measured> runs) {
        List<Map<String, Object>> rows = new ArrayList<>();
        Set<List<Integer>> seen = new LinkedHashSet<>();
        for (Measured m : runs) {
            if (m.run().section() == Section.SCALING && m.run().sink() == BenchRun.Sink.OURS) {
                seen.add(List.of(m.run().keys(), m.run().buckets()));
            }
        }
        for (List<Integer> row : seen) {
            int keys = row.get(0);
            List<JsonNode> ours = scalingRuns(runs, BenchRun.Sink.OURS, keys, row.get(1));
            List<JsonNode> baseline = scalingRuns(runs, BenchRun.Sink.DISCARDING, keys, -1);
            List<JsonNode> fileSink = scalingRuns(runs, BenchRun.Sink.FILESINK, keys, -1);
            double rate = median(ours, "eventsPerSecond");
            JsonNode first = ours.get(0);
            Map<String, Object> r = new LinkedHashMap<>();
            r.put("keys", keys);
            r.put("buckets", row.get(1));
            r.put("rounds", ours.size());
            r.put("events", first.path("events").asLong());
            r.put(
                    "eventsPerKeyPerWindow",
                    round(
                            (double) first.path("events").asLong()
                                    / first.path("windows").asLong()
                                    / keys,
                            1));
            r.put("discardingEventsPerSecond", Math.round(median(baseline, "eventsPerSecond")));
            r.put("fileSinkEventsPerSecond", Math.round(median(fileSink, "eventsPerSecond")));
            r.put("oursEventsPerSecond", Math.round(rate));
            r.put("ratio", round(rate / median(baseline, "eventsPerSecond"), 3));
            r.put("oursOverFileSink", round(rate / median(fileSink, "eventsPerSecond"), 3));
            r.put("peakRssMiB", peakRssMiB(ours));
            r.put("fileSinkPeakRssMiB", peakRssMiB(fileSink));
            r.put("gcPauseMillisPerMinute", gcPerMinute(ours));
            r.put("fileSinkGcPauseMillisPerMinute", gcPerMinute(fileSink));
            r.put("discardingGcPauseMillisPerMinute", gcPerMinute(baseline));
            r.put("writtenPerSubtask", first.path("writtenPerSubtask"));
            r.put(
                    "lateAtWindow",
                    lateAtWindow(
                            Stream.of(ours, baseline, fileSink).flatMap(List::stream).toList()));
            rows.add(r);
        }
        return rows;
    }

    /**
     * What each sink costs per event, per key count (and bucket count of ours): the whole process's
     * CPU time, its sink threads' CPU time and bytes allocated in the steady state, their rounds'
     * range, each sink's own CPU (over the discarding sink of its round), and our CPU over the
     * others' round by round, with its spread and the verdict on the goal: our sink threads' CPU
     * per event at most FileSink's. The whole process's verdict is kept beside it.
     */
    static List<Map<String, Object>> cost(List<Measured> runs) {
        Set<List<Object>> groups = new LinkedHashSet<>();
        for (Measured m : runs) {
            if (m.run().sink() == BenchRun.Sink.OURS && m.result().has("cpuNanosPerEvent")) {
                groups.add(List.of(m.run().section(), m.run().keys(), m.run().buckets()));
            }
        }
        List<Map<String, Object>> rows = new ArrayList<>();
        for (List<Object> g : groups) {
            Section section = (Section) g.get(0);
            int keys = (Integer) g.get(1);
            int buckets = (Integer) g.get(2);
            // A round is its runs' label: they ran one after the other.
            List<String> labels =
                    runs.stream()
                            .filter(m -> m.run().section() == section && m.run().keys() == keys)
                            .map(m -> m.run().label())
                            .distinct()
                            .toList();
            Map<BenchRun.Sink, List<JsonNode>> bySink = new LinkedHashMap<>();
            for (BenchRun.Sink sink : BenchRun.Sink.values()) {
                List<JsonNode> rounds = new ArrayList<>();
                for (String label : labels) {
                    runs.stream()
                            .filter(
                                    m ->
                                            m.run().section() == section
                                                    && m.run().keys() == keys
                                                    && m.run().label().equals(label)
                                                    && m.run().sink() == sink
                                                    && (sink != BenchRun.Sink.OURS
                                                            || m.run().buckets() == buckets))
                            .findFirst()
                            .ifPresent(m -> rounds.add(m.result()));
                }
                if (!rounds.isEmpty()) {
                    bySink.put(sink, rounds);
                }
            }
            rows.add(costRow(keys, buckets, bySink));
        }
        return rows;
    }

    private static Map<String, Object> costRow(
            int keys, int buckets, Map<BenchRun.Sink, List<JsonNode>> bySink) {
        double[] discarding = figure(bySink.get(BenchRun.Sink.DISCARDING), "cpuNanosPerEvent");
        double[] fileSink = figure(bySink.get(BenchRun.Sink.FILESINK), "cpuNanosPerEvent");
        double[] ours = figure(bySink.get(BenchRun.Sink.OURS), "cpuNanosPerEvent");
        Map<String, Object> r = new LinkedHashMap<>();
        r.put("keys", keys);
        r.put("buckets", buckets);
        r.put("events", bySink.get(BenchRun.Sink.OURS).get(0).path("events").asLong());
        r.put("rounds", ours.length);
        for (String figure :
                List.of(
                        "cpuNanosPerEvent",
                        "sinkCpuNanosPerEvent",
                        "sinkCpuNanosPerEventOverall",
                        "jitCpuNanosPerEvent",
                        "allocatedBytesPerEvent")) {
            Map<String, Object> perSink = new LinkedHashMap<>();
            bySink.forEach(
                    (sink, results) ->
                            perSink.put(
                                    sink.name().toLowerCase(Locale.ROOT),
                                    Rounds.of(figure(results, figure)).toMap(1)));
            r.put(figure, perSink);
        }
        r.put(
                "ownCpuNanosPerEvent",
                Map.of(
                        "filesink",
                        Rounds.of(Rounds.differences(fileSink, discarding)).toMap(1),
                        "ours",
                        Rounds.of(Rounds.differences(ours, discarding)).toMap(1)));
        Rounds.Stats overFileSink = Rounds.of(Rounds.ratios(ours, fileSink));
        // The verdict's instrument: the sink's threads over the whole run, every window's parts
        // and every commit once (SinkThreads.WholeRun).
        double[] threadRatios =
                ratios(
                        bySink,
                        BenchRun.Sink.OURS,
                        BenchRun.Sink.FILESINK,
                        "sinkCpuNanosPerEventOverall");
        Rounds.Stats threadsOverFileSink = Rounds.of(threadRatios);
        r.put("oursOverDiscardingCpu", Rounds.of(Rounds.ratios(ours, discarding)).toMap(3));
        r.put("oursOverFileSinkCpu", overFileSink.toMap(3));
        r.put(
                "oursOverFileSinkSinkCpu",
                Rounds.of(
                                ratios(
                                        bySink,
                                        BenchRun.Sink.OURS,
                                        BenchRun.Sink.FILESINK,
                                        "sinkCpuNanosPerEvent"))
                        .toMap(3));
        r.put("oursOverFileSinkSinkCpuOverall", threadsOverFileSink.toMap(3));
        r.put(
                "oursOverDiscardingRate",
                Rounds.of(
                                ratios(
                                        bySink,
                                        BenchRun.Sink.OURS,
                                        BenchRun.Sink.DISCARDING,
                                        "eventsPerSecond"))
                        .toMap(3));
        if (bySink.containsKey(BenchRun.Sink.REDISTRIBUTED)) {
            // The same rounds, ours with its window at a parallelism that splits buckets over ours
            // with the window chained to its writers: what the redistribution costs.
            Map<String, Object> overOurs = new LinkedHashMap<>();
            for (String figure :
                    List.of("cpuNanosPerEvent", "allocatedBytesPerEvent", "eventsPerSecond")) {
                overOurs.put(
                        figure,
                        Rounds.of(
                                        ratios(
                                                bySink,
                                                BenchRun.Sink.REDISTRIBUTED,
                                                BenchRun.Sink.OURS,
                                                figure))
                                .toMap(3));
            }
            r.put("redistributedOverOurs", overOurs);
        }
        r.put(
                "roundsOursAtMostFileSink",
                Arrays.stream(threadRatios).filter(x -> x <= 1).count() + " of " + ours.length);
        r.put("goal", "our sink threads' CPU per event <= FileSink's");
        r.put("verdict", Rounds.verdict(threadsOverFileSink, 1));
        // The instrument before: the whole process's CPU, the window's and the JIT's with it.
        r.put("wholeProcessVerdict", Rounds.verdict(overFileSink, 1));
        return r;
    }

    /**
     * Commit latency and requests against S3Proxy: at the bench's own shape (our comparison runs,
     * each round's p99 of its commits and its requests per data object) and at each of production's
     * shapes (each round's p99 of the commits that carried a window's parts), with the rounds'
     * range and a verdict against the goals (p99 at most 500 ms, at most 1.2 requests per data
     * object), met only when every round meets it.
     */
    static List<Map<String, Object>> commitLatency(
            BenchPlan plan,
            List<Measured> runs,
            Map<CommitShapes.Shape, List<CommitShapes.Round>> shapes) {
        List<Map<String, Object>> rows = new ArrayList<>();
        List<JsonNode> ours = results(runs, Section.COMPARISON, BenchRun.Sink.OURS);
        if (!ours.isEmpty()) {
            rows.add(
                    latencyRow(
                            "bench: " + plan.keys() + " keys, B=" + plan.buckets() + ", P=2",
                            p99s(ours, "commitMillis"),
                            figure(ours, "s3RequestsPerDataObject"),
                            ours.stream().mapToLong(r -> r.path("commitMillis").size()).sum(),
                            p99s(ours, "pointerMillis")));
        }
        shapes.forEach(
                (shape, rounds) ->
                        rows.add(
                                latencyRow(
                                        "production: "
                                                + plan.keys()
                                                + " keys, "
                                                + shape
                                                + ", 10 s checkpoints",
                                        rounds.stream()
                                                .mapToDouble(CommitShapes.Round::p99)
                                                .toArray(),
                                        rounds.stream()
                                                .mapToDouble(
                                                        r ->
                                                                (double) r.requests()
                                                                        / r.dataObjects())
                                                .toArray(),
                                        rounds.stream()
                                                .mapToLong(r -> r.windowCommitMillis().length)
                                                .sum(),
                                        rounds.stream()
                                                .mapToDouble(CommitShapes.Round::pointerP99)
                                                .toArray())));
        return rows;
    }

    /** Each run's p99 of one of its histograms. */
    private static double[] p99s(List<JsonNode> runs, String histogram) {
        return runs.stream()
                .mapToDouble(
                        r -> {
                            long[] c = longs(r.path(histogram));
                            Arrays.sort(c);
                            return c.length == 0 ? 0 : percentile(c, 99);
                        })
                .toArray();
    }

    private static Map<String, Object> latencyRow(
            String shape,
            double[] p99,
            double[] requestsPerDataObject,
            long commits,
            double[] pointerP99) {
        Rounds.Stats latency = Rounds.of(p99);
        Rounds.Stats requests = Rounds.of(requestsPerDataObject);
        Map<String, Object> r = new LinkedHashMap<>();
        r.put("shape", shape);
        r.put("rounds", p99.length);
        r.put("commitsMeasured", commits);
        r.put("commitP99Millis", latency.toMap(0));
        r.put("commitP99Verdict", Rounds.verdictByRange(latency, 500));
        // The window is visible once its parts are; the pointer follows by this much.
        r.put("pointerP99Millis", Rounds.of(pointerP99).toMap(0));
        r.put("requestsPerDataObject", requests.toMap(2));
        r.put("requestsVerdict", Rounds.verdictByRange(requests, 1.2));
        return r;
    }

    private static double[] figure(List<JsonNode> runs, String field) {
        return runs.stream().mapToDouble(r -> r.path(field).asDouble()).toArray();
    }

    /** {@code field} of sink {@code a} over sink {@code b}'s, round by round. */
    private static double[] ratios(
            Map<BenchRun.Sink, List<JsonNode>> bySink,
            BenchRun.Sink a,
            BenchRun.Sink b,
            String field) {
        return Rounds.ratios(figure(bySink.get(a), field), figure(bySink.get(b), field));
    }

    private static long peakRssMiB(List<JsonNode> runs) {
        return runs.stream().mapToLong(r -> r.path("peakRssBytes").asLong()).max().orElse(0) >> 20;
    }

    /** The most events any of the runs found late at the window (0: every run measured all). */
    private static long lateAtWindow(List<JsonNode> runs) {
        return runs.stream().mapToLong(r -> r.path("lateAtWindow").asLong()).max().orElse(0);
    }

    /** The median of the runs' GC pause time per minute of the job's run. */
    private static long gcPerMinute(List<JsonNode> runs) {
        return Math.round(median(runs, "gcPauseMillisPerMinute"));
    }

    /**
     * A backlog replayed with and without watermark alignment: without it the sparse splits run
     * ahead and every window between them and the densest split stays open in state.
     */
    static List<Map<String, Object>> catchUp(List<Measured> runs) {
        List<Map<String, Object>> rows = new ArrayList<>();
        for (Measured m : runs) {
            if (m.run().section() != Section.CATCH_UP) {
                continue;
            }
            JsonNode run = m.result();
            Map<String, Object> row = new LinkedHashMap<>();
            row.put("maxDrift", m.run().maxDrift());
            row.put("events", run.path("events").asLong());
            row.put("eventsPerSecond", Math.round(run.path("eventsPerSecond").asDouble()));
            row.put(
                    "peakOldGenMiB",
                    Arrays.stream(longs(run.path("oldGenBytes"))).max().orElse(0) >> 20);
            row.put(
                    "peakCheckpointKiB",
                    Arrays.stream(longs(run.path("checkpointBytes"))).max().orElse(0) >> 10);
            row.put("peakRssMiB", run.path("peakRssBytes").asLong() >> 20);
            rows.add(row);
        }
        return rows;
    }

    private static List<JsonNode> results(
            List<Measured> runs, Section section, BenchRun.Sink sink) {
        return runs.stream()
                .filter(m -> m.run().section() == section && m.run().sink() == sink)
                .map(Measured::result)
                .toList();
    }

    /** The scaling runs of a sink and key count, and of a bucket count unless it is -1. */
    private static List<JsonNode> scalingRuns(
            List<Measured> runs, BenchRun.Sink sink, int keys, int buckets) {
        return runs.stream()
                .filter(
                        m ->
                                m.run().section() == Section.SCALING
                                        && m.run().sink() == sink
                                        && m.run().keys() == keys
                                        && (buckets < 0 || m.run().buckets() == buckets))
                .map(Measured::result)
                .toList();
    }

    private static Map<String, Object> summary(List<JsonNode> runs) {
        double[] rates =
                runs.stream()
                        .mapToDouble(r -> r.path("eventsPerSecond").asDouble())
                        .sorted()
                        .toArray();
        double median = median(rates);
        JsonNode last = runs.get(runs.size() - 1);
        Map<String, Object> s = new LinkedHashMap<>();
        s.put("eventsPerSecondMedian", Math.round(median));
        s.put("eventsPerSecondMin", Math.round(rates[0]));
        s.put("eventsPerSecondMax", Math.round(rates[rates.length - 1]));
        s.put("spreadPercent", round(100 * (rates[rates.length - 1] - rates[0]) / median, 1));
        s.put("eventsPerSecondOverallMedian", Math.round(median(runs, "eventsPerSecondOverall")));
        for (String histogram : List.of("commitMillis", "pointerMillis")) {
            long[] pooled =
                    runs.stream()
                            .flatMapToLong(r -> Arrays.stream(longs(r.path(histogram))))
                            .sorted()
                            .toArray();
            s.put(histogram + "P50", pooled.length == 0 ? null : percentile(pooled, 50));
            s.put(histogram + "P99", pooled.length == 0 ? null : percentile(pooled, 99));
            s.put(histogram.equals("commitMillis") ? "commits" : "pointerUpdates", pooled.length);
        }
        s.put("bytesWritten", last.path("bytesWritten").asLong());
        s.put("objectsWritten", last.path("objectsWritten").asLong());
        s.put("dataObjectsWritten", last.path("dataObjectsWritten").asLong());
        for (String ratio : List.of("s3RequestsPerObject", "s3RequestsPerDataObject")) {
            if (last.has(ratio)) {
                s.put(ratio, last.path(ratio).asDouble());
            }
        }
        s.put("peakRssMiB", peakRssMiB(runs));
        s.put("gcPauseMillisPerMinute", gcPerMinute(runs));
        s.put("oldGenMiBByQuarter", byQuarter(last.path("oldGenBytes"), 20));
        s.put("checkpointKiBByQuarter", byQuarter(last.path("checkpointBytes"), 10));
        s.put("writtenPerSubtask", last.path("writtenPerSubtask"));
        s.put("lateAtWindow", lateAtWindow(runs));
        if (last.has("profile")) {
            s.put("profile", last.path("profile"));
        }
        return s;
    }

    /**
     * The samples at the end of each quarter of a run, shifted right by {@code unit} bits (20:
     * MiB).
     */
    private static List<Long> byQuarter(JsonNode samples, int unit) {
        long[] all = longs(samples);
        List<Long> quarters = new ArrayList<>();
        for (int q = 1; q <= 4 && all.length > 0; q++) {
            quarters.add(all[Math.min(all.length - 1, all.length * q / 4)] >> unit);
        }
        return quarters;
    }

    private static long[] longs(JsonNode array) {
        long[] out = new long[array.size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = array.get(i).asLong();
        }
        return out;
    }

    private static double median(List<JsonNode> runs, String field) {
        return median(runs.stream().mapToDouble(r -> r.path(field).asDouble()).sorted().toArray());
    }

    private static double median(double[] sorted) {
        return Rounds.median(sorted);
    }

    private static long percentile(long[] sorted, int p) {
        return sorted[Math.min(sorted.length - 1, (int) Math.ceil(p / 100.0 * sorted.length) - 1)];
    }

    static double round(double v, int digits) {
        double f = Math.pow(10, digits);
        return Math.round(v * f) / f;
    }
}
