package dev.snapshots.harness.chaos;

import dev.snapshots.harness.metrics.CounterFiles;
import dev.snapshots.key.ObjectKeys;
import dev.snapshots.store.ObjectStore;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.SerializationFeature;

/**
 * What a chaos run found, in the order it happened: the figures, the kills, the pointer's progress
 * and the violations; written as report.json, report.md and report.html ({@link ChaosPage}). Kills
 * and violations come from the kill thread too.
 */
final class ChaosReport {
    private final Map<String, Object> figures = new LinkedHashMap<>();
    private final List<String> violations = new CopyOnWriteArrayList<>();
    private final List<Map<String, Object>> kills = new CopyOnWriteArrayList<>();

    /** The completion pointer as the producer read it after each window it produced. */
    private final List<Map<String, Object>> pointer = new CopyOnWriteArrayList<>();

    synchronized void put(String figure, Object value) {
        figures.put(figure, value);
    }

    void violation(String violation) {
        violations.add(violation);
    }

    void kill(Map<String, Object> kill) {
        kills.add(kill);
    }

    /**
     * A reading of the pointer: {@code windowsProduced} windows produced {@code seconds} into the
     * run, complete through {@code completeThrough} (none yet: empty), in windows from {@code
     * startMillis}.
     */
    void pointer(
            double windowsProduced,
            double seconds,
            Optional<Long> completeThrough,
            long startMillis) {
        pointer.add(
                ordered(
                        "windowsProduced",
                        windowsProduced,
                        "seconds",
                        seconds,
                        "completeThrough",
                        completeThrough.map(t -> Instant.ofEpochMilli(t).toString()).orElse(null),
                        "windowsComplete",
                        completeThrough
                                .map(
                                        t ->
                                                Math.round(
                                                                (t - startMillis)
                                                                        * 10.0
                                                                        / ChaosPlan.WINDOW_MILLIS)
                                                        / 10.0)
                                .orElse(-1.0)));
    }

    List<String> violations() {
        return violations;
    }

    /**
     * What the JobManagers' checkpoint directories hold at the end, of {@code started} JobManager
     * incarnations: the incarnations with a whole checkpoint or savepoint left, and how many of
     * each. Every JobManager start once left a full checkpoint behind.
     */
    void checkpointsLeft(ObjectStore checkpoints, int started) throws IOException {
        Set<String> incarnations = new TreeSet<>();
        AtomicLong whole = new AtomicLong();
        AtomicLong savepoints = new AtomicLong();
        checkpoints.list(
                "",
                o -> {
                    if (o.key().endsWith("/_metadata")) {
                        incarnations.add(o.key().substring(0, o.key().indexOf('/')));
                        (o.key().contains("/savepoints/") ? savepoints : whole).incrementAndGet();
                    }
                });
        put(
                "checkpointsLeft",
                ordered(
                        "jobManagersStarted",
                        started,
                        "incarnationsWithCheckpoints",
                        incarnations.size(),
                        "checkpoints",
                        whole.get(),
                        "savepoints",
                        savepoints.get()));
    }

    /**
     * What the committers, writers and window operator did, from the job's counters that every
     * TaskManager wrote into {@code counterFiles}, and the divergences, from the evidence in the
     * store.
     */
    void jobFigures(Path counterFiles, ObjectStore store) throws IOException {
        Map<String, Long> counters = CounterFiles.totals(counterFiles);
        AtomicLong divergences = new AtomicLong();
        store.list(ObjectKeys.DIVERGENCE_PREFIX, o -> divergences.incrementAndGet());
        put("partsCreated", counters.getOrDefault("partsCreated", 0L));
        put("partsStaged", counters.getOrDefault("partsStaged", 0L));
        put("partsInline", counters.getOrDefault("partsInline", 0L));
        put("duplicatesCollapsed", counters.getOrDefault("partsCollapsed", 0L));
        put("divergences", divergences.get());
        put("storeRetries", counters.getOrDefault("storeRetries", 0L));
        put("stageRetries", counters.getOrDefault("stageRetries", 0L));
        put("storeConflicts", counters.getOrDefault("storeConflicts", 0L));
        put("progressFailures", counters.getOrDefault("progressFailures", 0L));
        put("lateAtWindow", counters.getOrDefault("lateAtWindow", 0L));
        if (divergences.get() > 0) {
            violation(
                    divergences.get()
                            + " divergences: evidence under "
                            + ObjectKeys.DIVERGENCE_PREFIX
                            + " in the store");
        }
        put("kills", kills);
        put("pointer", pointer);
        put(
                "notes",
                List.of(
                        "Every figure from partsCreated to lateAtWindow but divergences is a counter of the job: each TaskManager"
                                + " wrote its counters every second and when a task attempt ended, summed here over every attempt of"
                                + " every instance. Of a SIGKILLed TaskManager, at most its last second of counts is missing.",
                        "partsStaged and partsInline count the parts the writers prepared, every attempt and instance included;"
                                + " partsCreated and duplicatesCollapsed what the committers found when publishing.",
                        "storeRetries counts the retried store calls of the committers and the completion pointer's task, stageRetries the writers' retried stagings.",
                        "divergences counts the evidence objects under "
                                + ObjectKeys.DIVERGENCE_PREFIX
                                + " in the store."));
    }

    synchronized void write(Path out, ChaosPlan plan) throws IOException {
        figures.put("violations", violations);
        ObjectMapper json = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);
        Files.writeString(out.resolve("report.json"), json.writeValueAsString(figures) + "\n");
        StringBuilder md = new StringBuilder();
        md.append("# Chaos run: ")
                .append(violations.isEmpty() ? "PASSED" : "FAILED")
                .append("\n\n");
        md.append("Command: `").append(plan.command());
        md.append("`  \nMachine: ")
                .append(Runtime.getRuntime().availableProcessors())
                .append(" cores, Java ")
                .append(System.getProperty("java.version"))
                .append(", finished ")
                .append(Instant.now())
                .append("  \n");
        md.append("Plan (action@window+fraction): ")
                .append(flat(figures.get("plan")))
                .append("\n\n| figure | value |\n|---|---|\n");
        figures.forEach(
                (k, v) -> {
                    if (!List.of("plan", "kills", "violations", "deadLetters", "notes", "pointer")
                            .contains(k)) {
                        md.append("| ").append(k).append(" | ").append(flat(v)).append(" |\n");
                    }
                });
        md.append(
                "\n## Kills\n\n| at window | killed | replacement | recovery (s) |\n|---|---|---|---|\n");
        for (Map<String, Object> k : kills) {
            md.append(
                    String.format(
                            "| %s | %s | %s | %.1f |%n",
                            k.get("window"),
                            k.get("killed"),
                            k.get("replacement"),
                            (Double) k.get("recoverySeconds")));
        }
        if (figures.get("deadLetters") instanceof Map<?, ?> dead) {
            md.append(
                    "\n## Dead letters by reason\n\n| reason | injected | published |\n|---|---|---|\n");
            Map<?, ?> injected = (Map<?, ?>) dead.get("injected");
            Map<?, ?> published = (Map<?, ?>) dead.get("published");
            injected.forEach(
                    (reason, n) ->
                            md.append("| ")
                                    .append(reason)
                                    .append(" | ")
                                    .append(n)
                                    .append(" | ")
                                    .append(
                                            published.get(reason) == null
                                                    ? 0
                                                    : published.get(reason))
                                    .append(" |\n"));
        }
        if (figures.get("notes") instanceof List<?> notes) {
            md.append("\n## Notes\n\n");
            notes.forEach(n -> md.append("- ").append(n).append('\n'));
        }
        md.append("\n## Violations\n\n");
        md.append(
                violations.isEmpty()
                        ? "None: the audit is clean, every (window, bucket) has exactly one object, every part's"
                                + " rows equal the reference, and the dead letters equal what was injected.\n"
                        : "");
        violations.forEach(v -> md.append("- ").append(v).append('\n'));
        Files.writeString(out.resolve("report.md"), md.toString());
        ChaosPage.write(json.valueToTree(figures), plan.command(), plan.windowSeconds, out);
    }

    /** A figure as one table cell: maps as "key value, ...", lists joined. */
    private static String flat(Object v) {
        if (v instanceof Map<?, ?> m) {
            return String.join(
                    ", ",
                    m.entrySet().stream().map(e -> e.getKey() + " " + flat(e.getValue())).toList());
        }
        if (v instanceof List<?> l) {
            return String.join(" ", l.stream().map(ChaosReport::flat).toList());
        }
        return String.valueOf(v).replace("|", "\\|");
    }

    static Map<String, Object> ordered(Object... keysAndValues) {
        Map<String, Object> m = new LinkedHashMap<>();
        for (int i = 0; i < keysAndValues.length; i += 2) {
            m.put((String) keysAndValues[i], keysAndValues[i + 1]);
        }
        return m;
    }
}
