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
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;
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

    /**
     * The recovery table's columns: until every task ran again, its parts, until a checkpoint too.
     */
    static final List<String> RECOVERY_COLUMNS =
            Stream.of(
                            Stream.of("runningSeconds"),
                            RecoveryParts.PARTS.stream(),
                            Stream.of("recoverySeconds"))
                    .flatMap(c -> c)
                    .toList();

    /**
     * Whether the S3 outage (until the jobs recovered from it) overlapped {@code kill}'s recovery
     * before every task ran again (until its checkpoint, if that is unknown): such a recovery may
     * have waited for S3, which the goal leaves out.
     */
    private boolean duringTheOutage(Map<String, Object> kill) {
        if (!(figures.get("s3Outage") instanceof Map<?, ?> outage)
                || !(outage.get("fromMillis") instanceof Long from)
                || !(kill.get("atMillis") instanceof Long at)) {
            return false;
        }
        long end =
                kill.get("runningSeconds") instanceof Double running
                        ? at + (long) (running * 1000)
                        : (Long) kill.get("recoveredMillis");
        return at <= (Long) outage.get("untilMillis") && end >= from;
    }

    /**
     * Median and worst of each column over the kills of each kind outside the S3 outage, of those
     * whose column is known: the figures issue 36's goal is stated in.
     */
    private Map<String, Object> recovery() {
        Map<String, Object> out = new LinkedHashMap<>();
        for (String kind : List.of("taskmanager", "jobmanager")) {
            List<Map<String, Object>> counted =
                    kills.stream()
                            .filter(k -> String.valueOf(k.get("killed")).startsWith(kind))
                            .filter(k -> !Boolean.TRUE.equals(k.get("duringTheOutage")))
                            .toList();
            if (counted.isEmpty()) {
                continue;
            }
            Map<String, Object> columns = new LinkedHashMap<>();
            columns.put("kills", counted.size());
            for (String column : RECOVERY_COLUMNS) {
                List<Double> known =
                        counted.stream()
                                .map(k -> recoveryValue(k, column))
                                .filter(Objects::nonNull)
                                .sorted()
                                .toList();
                int n = known.size();
                columns.put(
                        column,
                        n == 0
                                ? null
                                : ordered(
                                        "median",
                                        Math.round((known.get((n - 1) / 2) + known.get(n / 2)) * 5)
                                                / 10.0,
                                        "worst",
                                        Math.round(known.get(n - 1) * 10) / 10.0,
                                        "known",
                                        n));
            }
            out.put(
                    kind.equals("taskmanager")
                            ? "taskManagerKillsOutsideTheOutage"
                            : "jobManagerKillsOutsideTheOutage",
                    columns);
        }
        return out;
    }

    /** A kill's figure in the recovery table: null if unknown. */
    static Double recoveryValue(Map<?, ?> kill, String column) {
        Object v =
                RecoveryParts.PARTS.contains(column) && kill.get("parts") instanceof Map<?, ?> parts
                        ? parts.get(column)
                        : kill.get(column);
        return v instanceof Number n ? n.doubleValue() : null;
    }

    synchronized void write(Path out, ChaosPlan plan) throws IOException {
        kills.forEach(k -> k.put("duringTheOutage", duringTheOutage(k)));
        figures.put("recovery", recovery());
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
                    if (!TABLES.contains(k)) {
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
        recoveryTable(md);
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

    /**
     * Each kill's recovery in its parts, then the median and worst of each kind outside the outage.
     */
    private void recoveryTable(StringBuilder md) {
        md.append("\n## Recovery, part by part\n\n")
                .append(RECOVERY_NOTE)
                .append("\n\n| at window | killed | running again (s) | ")
                .append(String.join(" | ", RecoveryParts.PARTS))
                .append(" | last to run | checkpointed (s) |\n|---|---|")
                .append("---:|".repeat(RECOVERY_COLUMNS.size() - 1))
                .append("---|---:|\n");
        for (Map<String, Object> k : kills) {
            md.append("| ")
                    .append(k.get("window"))
                    .append(" | ")
                    .append(k.get("killed"))
                    .append(
                            Boolean.TRUE.equals(k.get("duringTheOutage"))
                                    ? " (during the S3 outage)"
                                    : "");
            for (String column : RECOVERY_COLUMNS.subList(0, RECOVERY_COLUMNS.size() - 1)) {
                md.append(" | ").append(cell(recoveryValue(k, column)));
            }
            md.append(" | ")
                    .append(
                            k.get("lastToRun") != null
                                    ? k.get("lastToRun")
                                    : "? (" + k.get("unknownBecause") + ")")
                    .append(" | ")
                    .append(cell(recoveryValue(k, "recoverySeconds")))
                    .append(" |\n");
        }
        ((Map<?, ?>) figures.get("recovery"))
                .forEach(
                        (kind, columns) -> {
                            Map<?, ?> c = (Map<?, ?>) columns;
                            for (String figure : List.of("median", "worst")) {
                                md.append("| ")
                                        .append(figure)
                                        .append(" | ")
                                        .append(c.get("kills"))
                                        .append(
                                                kind.equals("taskManagerKillsOutsideTheOutage")
                                                        ? " TaskManager"
                                                        : " JobManager")
                                        .append(" kills outside the S3 outage");
                                for (String column : RECOVERY_COLUMNS) {
                                    md.append(" | ");
                                    if (column.equals("recoverySeconds")) {
                                        md.append(" | ");
                                    }
                                    md.append(
                                            c.get(column) instanceof Map<?, ?> m
                                                    ? cell((Double) m.get(figure))
                                                            + (((Number) m.get("known")).intValue()
                                                                            < ((Number)
                                                                                            c.get(
                                                                                                    "kills"))
                                                                                    .intValue()
                                                                    ? " (of " + m.get("known") + ")"
                                                                    : "")
                                                    : "?");
                                }
                                md.append(" |\n");
                            }
                        });
    }

    static final String RECOVERY_NOTE =
            "Seconds from each kill until every task of the jobs it interrupted ran again, along the"
                    + " task that came last: restart (the kill until the restart scheduled it), deploy"
                    + " (scheduled until it initialised, less the jar), jar (its TaskManager downloading"
                    + " the job's jar), client (the Kinesis client's start), probe (the writer's checks of"
                    + " the store, the conformance probe when it runs), state (keyed state restored),"
                    + " other (the rest of its initialisation). From the JobManager's REST API and the"
                    + " TaskManager's log; ? where they cannot show it. Checkpointed: until a checkpoint"
                    + " triggered after the kill completed too.";

    private static String cell(Double seconds) {
        return seconds == null ? "?" : String.format(Locale.ROOT, "%.1f", seconds);
    }

    /** Figures with a table of their own, not rows of the figures' table. */
    static final List<String> TABLES =
            List.of("plan", "kills", "violations", "deadLetters", "notes", "pointer", "recovery");

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
