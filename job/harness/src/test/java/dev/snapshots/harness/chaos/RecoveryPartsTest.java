package dev.snapshots.harness.chaos;

import static org.assertj.core.api.Assertions.assertThat;

import dev.snapshots.harness.chaos.RecoveryParts.Attempt;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDate;
import java.time.LocalTime;
import java.time.ZoneId;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The parts of a recovery read from a real TaskManager's log: {@code
 * chaos/taskmanager-recovery.log} is taskmanager-3's log of the short chaos run under seed 52, from
 * the restart after taskmanager-1's kill until its tasks ran (a spare, new to the job). The
 * attempts' times are the JobManager's, from its log of the same run; each expected part was read
 * off the lines by hand.
 */
class RecoveryPartsTest {
    private static final Path LOG = resource("/chaos/taskmanager-recovery.log");
    private static final String JOB = "f5905c4dee5e263030e8896b815b7f35";
    private static final long KILL = at("09:48:54,000");

    /** aggregate -> writer (2/2), attempt 1: the last task of the job to run again. */
    private static final Attempt WRITER =
            new Attempt(
                    JOB,
                    "f7c20420360e0172e54933e6abdd481a",
                    "aggregate -> (late-at-window, snapshots-to-writer -> snapshots: Writer)",
                    1,
                    2,
                    1,
                    "taskmanager-3",
                    at("09:48:57,417"),
                    at("09:49:04,857"),
                    at("09:49:09,879"));

    private static final Attempt SOURCE =
            new Attempt(
                    JOB,
                    "468afd75ded5b209618f07ccd3e6fbf6",
                    "Source: kinesis -> ingest",
                    1,
                    2,
                    1,
                    "taskmanager-3",
                    at("09:48:57,417"),
                    at("09:49:04,879"),
                    at("09:49:09,816"));

    @Test
    void aWritersWayBackIsTheJarItsChecksOfTheStoreAndItsState() throws Exception {
        Map<String, Object> measured =
                RecoveryParts.of(WRITER, KILL, Optional.of(RecoveryParts.read(LOG, KILL)));

        assertThat(measured.get("runningSeconds")).isEqualTo(15.9);
        assertThat(measured.get("lastToRun"))
                .isEqualTo(
                        "aggregate -> (late-at-window, snapshots-to-writer -> snapshots: Writer)"
                                + " (2/2)#1 on taskmanager-3");
        // The jar: the source's thread downloaded it at 58.712; the writer's, waiting, went on at
        // 59.630. The probe: the writer's own line, 2374 ms. State: two handles, 47 + 21 ms.
        assertThat(parts(measured))
                .containsExactly(
                        Map.entry("restart", 3.4),
                        Map.entry("deploy", 6.5),
                        Map.entry("jar", 0.9),
                        Map.entry("client", 0.0),
                        Map.entry("probe", 2.4),
                        Map.entry("state", 0.1),
                        Map.entry("other", 2.6));
    }

    @Test
    void aSourcesWayBackIsTheKinesisClientBetweenItsSplitsAndItsFetcher() throws Exception {
        Map<String, Object> measured =
                RecoveryParts.of(SOURCE, KILL, Optional.of(RecoveryParts.read(LOG, KILL)));

        // Adding split(s) at 06.423, the fetcher started at 09.756.
        assertThat(parts(measured))
                .containsExactly(
                        Map.entry("restart", 3.4),
                        Map.entry("deploy", 6.5),
                        Map.entry("jar", 0.9),
                        Map.entry("client", 3.3),
                        Map.entry("probe", 0.0),
                        Map.entry("state", 0.0),
                        Map.entry("other", 1.6));
    }

    @Test
    void whatTheLogCannotTellIsUnknownNotGuessed(@TempDir Path dir) throws Exception {
        // No log of that TaskManager: only the JobManager's side is known.
        assertThat(parts(RecoveryParts.of(WRITER, KILL, Optional.empty())))
                .containsEntry("restart", 3.4)
                .containsEntry("deploy", null)
                .containsEntry("jar", null)
                .containsEntry("probe", null)
                .containsEntry("other", null);

        // A writer that did not time its checks (a jar from before it did): its probe is unknown,
        // and so is what is left, while the rest is still read.
        Path silent = dir.resolve("taskmanager-3.log");
        Files.write(
                silent,
                Files.readAllLines(LOG).stream()
                        .filter(l -> !l.contains("ms before publishing"))
                        .toList());
        assertThat(
                        parts(
                                RecoveryParts.of(
                                        WRITER,
                                        KILL,
                                        Optional.of(RecoveryParts.read(silent, KILL)))))
                .containsEntry("jar", 0.9)
                .containsEntry("state", 0.1)
                .containsEntry("probe", null)
                .containsEntry("other", null);

        // The overlap's second instance shares the job's vertex ids: an attempt of the same id
        // deployed on the same TaskManager makes every line of the task's thread ambiguous.
        Path twice = dir.resolve("taskmanager-twice.log");
        List<String> lines = new java.util.ArrayList<>(Files.readAllLines(LOG));
        String deployed =
                lines.stream()
                        .filter(
                                l ->
                                        l.contains(
                                                WRITER.attemptId()
                                                        + " switched from CREATED to DEPLOYING"))
                        .findFirst()
                        .orElseThrow();
        lines.add(
                deployed.replace(
                        "c1ed7c466939724eae1c323f15a375af", "217f23df049d125a81559238c354d0bf"));
        Files.write(twice, lines);
        assertThat(
                        parts(
                                RecoveryParts.of(
                                        WRITER,
                                        KILL,
                                        Optional.of(RecoveryParts.read(twice, KILL)))))
                .containsEntry("restart", 3.4)
                .containsEntry("jar", null)
                .containsEntry("client", null)
                .containsEntry("state", null);
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> parts(Map<String, Object> measured) {
        return (Map<String, Object>) measured.get("parts");
    }

    private static Path resource(String name) {
        try {
            return Path.of(RecoveryPartsTest.class.getResource(name).toURI());
        } catch (java.net.URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }

    /** A time of the run's day, in this machine's zone, as the logs write it. */
    private static long at(String time) {
        return LocalDate.of(2026, 12, 5)
                .atTime(LocalTime.parse(time.replace(',', '.')))
                .atZone(ZoneId.systemDefault())
                .toInstant()
                .toEpochMilli();
    }
}
