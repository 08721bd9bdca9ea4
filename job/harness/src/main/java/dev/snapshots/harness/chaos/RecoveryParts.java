package dev.snapshots.harness.chaos;

import static dev.snapshots.harness.chaos.ChaosReport.ordered;

import dev.snapshots.cli.deploy.FlinkRest;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.ZoneId;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;

/**
 * Where a recovery's seconds went: from a kill until every task of the jobs it interrupted runs
 * again, along the task that came last, in parts that follow each other on its way back:
 *
 * <ul>
 *   <li><b>restart</b>: the kill until the restart scheduled the task (Flink noticing the loss, the
 *       restart's backoff, restarts that failed on the way; after a JobManager's kill, the new
 *       one's start and its submit too);
 *   <li><b>deploy</b>: scheduled until it began to initialise, less the jar (a slot, the
 *       deployment, the class loader);
 *   <li><b>jar</b>: what of that its TaskManager spent downloading the job's jar from the blob
 *       server (a TaskManager new to the job);
 *   <li><b>client</b>: the Kinesis client's start, between the source reader taking its restored
 *       shards and its fetcher starting;
 *   <li><b>probe</b>: the writer's checks of the store before it publishes (the conformance probe
 *       when it runs, the job version's identity), as the writer's INFO line times them;
 *   <li><b>state</b>: keyed state restored, between the state backend's restore lines;
 *   <li><b>other</b>: the rest of its initialisation, which no line names (operator state, opening
 *       the other operators).
 * </ul>
 *
 * The task's states and their times come from the JobManager's REST API, the rest from its
 * TaskManager's log, whose lines name the task's thread. A part the log cannot show (no log, two
 * attempts of the same name in it, a line missing) is unknown (null), never estimated.
 */
final class RecoveryParts {
    /** In the order they follow each other. */
    static final List<String> PARTS =
            List.of("restart", "deploy", "jar", "client", "probe", "state", "other");

    private static final DateTimeFormatter LOG_TIME = DateTimeFormatter.ofPattern("HH:mm:ss,SSS");
    private static final Pattern LINE =
            Pattern.compile("^(\\d\\d:\\d\\d:\\d\\d,\\d{3}) +\\S+ +\\S+ +\\[([^\\]]*)\\] (.*)$");
    private static final Pattern WRITER_CHECKED =
            Pattern.compile("checked .* in (\\d+) ms before publishing");

    private RecoveryParts() {}

    /**
     * One subtask's current attempt, as the JobManager's REST API shows it; times in epoch ms.
     *
     * @param vertex the job vertex's id, which the attempt's id in the logs carries
     * @param task the vertex's name, which its threads carry
     */
    record Attempt(
            String job,
            String vertex,
            String task,
            int subtask,
            int parallelism,
            int attempt,
            String taskManager,
            long scheduled,
            long initializing,
            long running) {
        /** The task's thread, as its log lines name it. */
        String thread() {
            return task + " (" + (subtask + 1) + "/" + parallelism + ")#" + attempt;
        }

        /** The end of its execution attempt's id in the logs. */
        String attemptId() {
            return "_" + vertex + "_" + subtask + "_" + attempt + ")";
        }
    }

    /** A line of a TaskManager's log: when (epoch ms), on which thread, what. */
    record Line(long millis, String thread, String text) {}

    /**
     * The parts of the recovery from a kill at {@code killMillis}, for the running jobs {@code
     * jobs}, from the JobManager behind {@code rest} and the logs in {@code logs} ({@code
     * <TaskManager>.log}).
     */
    static Map<String, Object> measure(
            FlinkRest rest, Path logs, Collection<String> jobs, long killMillis) {
        try {
            List<Attempt> attempts = new ArrayList<>();
            for (String job : jobs) {
                attempts.addAll(attempts(rest, job));
            }
            Optional<Attempt> last =
                    attempts.stream()
                            .filter(a -> a.scheduled() > killMillis && a.running() > 0)
                            .max(Comparator.comparingLong(Attempt::running));
            if (last.isEmpty()) {
                return unknown("no task of " + jobs + " was restarted after the kill");
            }
            Path log = logs.resolve(last.get().taskManager() + ".log");
            return of(
                    last.get(),
                    killMillis,
                    Files.exists(log) ? Optional.of(read(log, killMillis)) : Optional.empty());
        } catch (IOException e) {
            return unknown("the JobManager could not say: " + e.getMessage());
        } catch (RuntimeException e) { // a REST answer or a log of a shape not foreseen
            return unknown("could not be measured: " + e);
        }
    }

    /** Every subtask's current attempt of {@code job}. */
    private static List<Attempt> attempts(FlinkRest rest, String job) throws IOException {
        List<Attempt> out = new ArrayList<>();
        for (JsonNode v : rest.get("/jobs/" + job).path("vertices")) {
            String vertex = v.path("id").asText();
            JsonNode details = rest.get("/jobs/" + job + "/vertices/" + vertex);
            JsonNode times = rest.get("/jobs/" + job + "/vertices/" + vertex + "/subtasktimes");
            for (JsonNode s : details.path("subtasks")) {
                int subtask = s.path("subtask").asInt();
                JsonNode at = timestamps(times, subtask);
                out.add(
                        new Attempt(
                                job,
                                vertex,
                                v.path("name").asText(),
                                subtask,
                                v.path("parallelism").asInt(),
                                s.path("attempt").asInt(),
                                s.path("taskmanager-id").asText(),
                                at.path("SCHEDULED").asLong(),
                                at.path("INITIALIZING").asLong(),
                                at.path("RUNNING").asLong()));
            }
        }
        return out;
    }

    private static JsonNode timestamps(JsonNode times, int subtask) {
        for (JsonNode s : times.path("subtasks")) {
            if (s.path("subtask").asInt() == subtask) {
                return s.path("timestamps");
            }
        }
        return times.path("missing");
    }

    /**
     * The parts along {@code last}, the attempt that ran last, its TaskManager's log lines from the
     * kill on if there is that log.
     */
    static Map<String, Object> of(Attempt last, long killMillis, Optional<List<Line>> log) {
        Map<String, Object> parts = new LinkedHashMap<>();
        parts.put("restart", seconds(last.scheduled() - killMillis));
        Optional<List<Line>> own =
                log.filter(
                        lines ->
                                lines.stream()
                                                .filter(
                                                        l ->
                                                                l.text()
                                                                        .contains(
                                                                                last.attemptId()
                                                                                        + " switched from CREATED to DEPLOYING"))
                                                .count()
                                        == 1);
        Long jar = own.map(lines -> jar(lines, last)).orElse(null);
        parts.put(
                "deploy",
                jar == null ? null : seconds(last.initializing() - last.scheduled() - jar));
        parts.put("jar", jar == null ? null : seconds(jar));
        List<Line> initializing =
                own.map(
                                lines ->
                                        lines.stream()
                                                .filter(
                                                        l ->
                                                                l.millis()
                                                                        >= last.initializing()
                                                                                - 1000)
                                                .filter(l -> l.millis() <= last.running() + 1000)
                                                .toList())
                        .orElse(null);
        Long client = initializing == null ? null : client(initializing, last).orElse(null);
        Long probe = initializing == null ? null : probe(initializing, last).orElse(null);
        Long state = initializing == null ? null : state(initializing, last).orElse(null);
        parts.put("client", client == null ? null : seconds(client));
        parts.put("probe", probe == null ? null : seconds(probe));
        parts.put("state", state == null ? null : seconds(state));
        parts.put(
                "other",
                client == null || probe == null || state == null
                        ? null
                        : seconds(last.running() - last.initializing() - client - probe - state));
        return ordered(
                "runningSeconds",
                seconds(last.running() - killMillis),
                "lastToRun",
                last.thread() + " on " + last.taskManager(),
                "parts",
                parts);
    }

    static Map<String, Object> unknown(String why) {
        Map<String, Object> parts = new LinkedHashMap<>();
        PARTS.forEach(p -> parts.put(p, null));
        return ordered("runningSeconds", null, "unknownBecause", why, "parts", parts);
    }

    /**
     * The ms the attempt spent deploying while its TaskManager downloaded the job's jar: from
     * BlobClient's line on a task's thread until the first task waiting for the jar (that one, or
     * one that said it was loading the jar) logs its next line.
     */
    private static long jar(List<Line> lines, Attempt a) {
        long waited = 0;
        for (int i = 0; i < lines.size(); i++) {
            Line download = lines.get(i);
            if (download.text().startsWith("Downloading " + a.job() + "/")) {
                long end = loaded(lines, i).orElse(a.initializing());
                waited +=
                        Math.max(
                                0,
                                Math.min(end, a.initializing())
                                        - Math.max(download.millis(), a.scheduled()));
            }
        }
        return waited;
    }

    /**
     * When the first thread waiting on the download at {@code download} went on: the downloading
     * one, or one whose last line said it was loading the jar.
     */
    private static OptionalLong loaded(List<Line> lines, int download) {
        Map<String, String> last = new HashMap<>();
        for (int i = 0; i < lines.size(); i++) {
            Line l = lines.get(i);
            String before = last.put(l.thread(), l.text());
            if (i > download
                    && before != null
                    && (before.startsWith("Loading JAR files")
                            || before.startsWith("Downloading "))) {
                return OptionalLong.of(l.millis());
            }
        }
        return OptionalLong.empty();
    }

    /**
     * From the reader taking its restored shards to its fetcher's start: the fetcher, and with it
     * the Kinesis client, is made on the task's thread in between. None if the reader took no
     * shards before it ran (they come later, off the task's way back); unknown if its fetcher did
     * not say it started.
     */
    private static Optional<Long> client(List<Line> lines, Attempt a) {
        Optional<Line> adding =
                first(lines, a.thread(), "Adding split(s) to reader", Long.MIN_VALUE);
        if (adding.isEmpty()) {
            return Optional.of(0L);
        }
        return first(
                        lines,
                        "Source Data Fetcher for " + a.thread(),
                        "Starting split fetcher",
                        adding.get().millis())
                .map(started -> started.millis() - adding.get().millis());
    }

    /** What the task's writers said their checks of the store took; unknown if none said. */
    private static Optional<Long> probe(List<Line> lines, Attempt a) {
        long ms = 0;
        boolean said = false;
        for (Line l : lines) {
            if (!l.thread().equals(a.thread())) {
                continue;
            }
            Matcher m = WRITER_CHECKED.matcher(l.text());
            if (m.find()) {
                ms += Long.parseLong(m.group(1));
                said = true;
            }
        }
        return said || !a.task().contains("Writer") ? Optional.of(ms) : Optional.empty();
    }

    /** Each keyed state handle's restore, start to finish, on the task's thread. */
    private static Optional<Long> state(List<Line> lines, Attempt a) {
        long ms = 0;
        Long started = null;
        for (Line l : lines) {
            if (!l.thread().equals(a.thread())) {
                continue;
            }
            if (l.text().startsWith("Starting to restore from state handle")) {
                started = l.millis();
            } else if (l.text().startsWith("Finished restoring from state handle")) {
                if (started == null) {
                    return Optional.empty();
                }
                ms += l.millis() - started;
                started = null;
            }
        }
        return started == null ? Optional.of(ms) : Optional.empty();
    }

    private static Optional<Line> first(
            List<Line> lines, String thread, String text, long notBefore) {
        return lines.stream()
                .filter(l -> l.millis() >= notBefore)
                .filter(l -> l.thread().equals(thread) && l.text().startsWith(text))
                .findFirst();
    }

    /**
     * A TaskManager's log from {@code sinceMillis} on. Its lines carry the time of day in this
     * machine's zone, as the harness's clock does; the day is the one nearest {@code sinceMillis}.
     */
    static List<Line> read(Path log, long sinceMillis) throws IOException {
        ZoneId zone = ZoneId.systemDefault();
        LocalDateTime since =
                LocalDateTime.ofInstant(java.time.Instant.ofEpochMilli(sinceMillis), zone);
        List<Line> out = new ArrayList<>();
        for (String s : Files.readAllLines(log)) {
            Matcher m = LINE.matcher(s);
            if (!m.matches()) {
                continue; // a stack trace's
            }
            LocalDateTime at;
            try {
                at = since.toLocalDate().atTime(LocalTime.parse(m.group(1), LOG_TIME));
            } catch (DateTimeParseException e) {
                continue;
            }
            if (at.isAfter(since.plusHours(12))) {
                at = at.minusDays(1);
            } else if (at.isBefore(since.minusHours(12))) {
                at = at.plusDays(1);
            }
            long millis = at.atZone(zone).toInstant().toEpochMilli();
            if (millis >= sinceMillis) {
                out.add(new Line(millis, m.group(2), m.group(3)));
            }
        }
        return out;
    }

    private static double seconds(long millis) {
        return Math.round(Math.max(0, millis) / 100.0) / 10.0;
    }
}
