package dev.snapshots.harness.chaos;

import dev.snapshots.cli.Flags;
import dev.snapshots.harness.cluster.LocalCluster;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.Set;

/**
 * What a chaos run does: its flags, checked, the job's arguments and the moments of every action.
 */
final class ChaosPlan {
    /**
     * About the median snapshot part here (5.1-5.4 KB between the quartiles, at 200 records a
     * window over 4 buckets): so both the inline and the staged path run.
     */
    static final String DEFAULT_INLINE_THRESHOLD = "5200";

    private static final String[][] FLAGS = {
        {"windows", "12"},
        {"kills", "2"},
        {"jobmanager-kills", "1"},
        {"overlap", "3"},
        {"jobmanager-overlap", "1"},
        {"catch-up", "2"},
        {"s3-faults", "0.05"},
        {"s3-outage", "0"},
        {"inline-threshold", DEFAULT_INLINE_THRESHOLD},
        {"seed", "1"},
        {"shards", "4"},
        {"taskmanagers", "3"},
        {"events-per-window", "200"},
        {"window-seconds", "10"},
    };
    static final long WINDOW_MILLIS = Duration.ofMinutes(5).toMillis();

    /** The job's subtasks: fewer than the shards, as in production. */
    static final int PARALLELISM = 2;

    static final String STORE_URI = "s3://" + LocalCluster.BUCKET + "/chaos";

    /**
     * What happens at a moment of the production timeline: in window {@code window}, {@code at} of
     * the way through.
     */
    record Action(int window, double at, String what) {
        String label() {
            return what + "@" + window + String.format(Locale.ROOT, "+%.2f", at);
        }
    }

    private final Map<String, String> flags;
    final int windows;
    final int kills;
    final int jobManagerKills;
    final int overlap;
    final int jobManagerOverlap;
    final int catchUp;
    final int shards;
    final long seed;
    final double faultRate;
    final int outageSeconds;
    final int taskManagers;
    final int perWindow;
    final int windowSeconds;

    private ChaosPlan(Map<String, String> flags) {
        this.flags = flags;
        this.windows = positive("windows", 1);
        this.kills = positive("kills", 0);
        this.jobManagerKills = positive("jobmanager-kills", 0);
        this.overlap = positive("overlap", 0);
        this.jobManagerOverlap = positive("jobmanager-overlap", 0);
        this.catchUp = positive("catch-up", 0);
        this.shards = positive("shards", 1);
        this.seed = positive("seed", 0);
        try {
            faultRate = Double.parseDouble(flags.get("s3-faults"));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(
                    "--s3-faults must be a fraction between 0 and 0.5, got '"
                            + flags.get("s3-faults")
                            + "'");
        }
        if (!(faultRate >= 0 && faultRate <= 0.5)) {
            throw new IllegalArgumentException(
                    "--s3-faults must be a fraction between 0 and 0.5, got " + faultRate);
        }
        int least = overlap + catchUp + jobManagerOverlap + 6;
        while (!fits(least, overlap, catchUp, jobManagerOverlap)) {
            least++;
        }
        if (windows < least || windows > 1000) {
            throw new IllegalArgumentException(
                    "--windows must be between "
                            + least
                            + " (a start, the catch-up, the overlap, a rolling update, the JobManager overlap"
                            + " after it and a tail: at least --overlap + --catch-up + --jobmanager-overlap + 6)"
                            + " and 1000, got "
                            + windows);
        }
        this.outageSeconds = positive("s3-outage", 0);
        positive("inline-threshold", 0);
        this.taskManagers = positive("taskmanagers", 1);
        this.perWindow = positive("events-per-window", 20);
        this.windowSeconds = positive("window-seconds", 1);
    }

    static ChaosPlan parse(String[] args) {
        return new ChaosPlan(Flags.parse(args, FLAGS, Set.of("keep-cluster", "json", "iceberg")));
    }

    /** Whether the job keeps an Iceberg table, read throughout the run ({@link IcebergWatch}). */
    boolean iceberg() {
        return flags.containsKey("iceberg");
    }

    boolean json() {
        return flags.containsKey("json");
    }

    boolean keepCluster() {
        return flags.containsKey("keep-cluster");
    }

    /** The command line, defaults spelled out. */
    String command() {
        StringBuilder c = new StringBuilder("./snapshots chaos");
        flags.forEach((k, v) -> c.append(" --").append(k).append(v.equals("true") ? "" : " " + v));
        return c.toString();
    }

    /** Event time lies in the recent past, so Kinesis arrival times (now) judge it as on time. */
    long startMillis() {
        return System.currentTimeMillis() / WINDOW_MILLIS * WINDOW_MILLIS
                - (windows + 3) * WINDOW_MILLIS;
    }

    /**
     * Event time runs 30 times faster than the clock here (a window per --window-seconds), and the
     * stream holds while a deployment starts: idleness, judged by arrival time, would mean nothing.
     */
    List<String> jobArgs(
            String streamArn, String kinesisEndpoint, String storeEndpoint, long startMillis) {
        return List.of(
                "--source",
                "kinesis",
                "--stream-arn",
                streamArn,
                "--kinesis-endpoint",
                kinesisEndpoint,
                "--start",
                Instant.ofEpochMilli(startMillis).toString(),
                "--windows",
                Integer.toString(windows),
                "--events-per-window",
                flags.get("events-per-window"),
                "--seed",
                Long.toString(seed),
                "--idleness",
                "0s",
                "--store",
                STORE_URI,
                "--endpoint",
                storeEndpoint,
                "--checkpoint-interval",
                "1s",
                "--inline-threshold",
                flags.get("inline-threshold"),
                "--parallelism",
                Integer.toString(PARALLELISM));
    }

    /**
     * Kill moments at random; the overlap early, the rolling update between the overlap and the
     * end, the JobManager overlap after it. A JobManager is killed at a random moment outside the
     * instances' overlap: its replacement resumes the job under its fixed id, which the second
     * instance does not have. One may fall inside the JobManager overlap, as an old task dies
     * during a deployment at 200 %: the JobManager waiting beside it takes the job over.
     */
    List<Action> actions(Random random) {
        List<Action> plan = new ArrayList<>();
        int overlapStart = overlapStart(windows, overlap, catchUp);
        int overlapEnd = overlapStart + overlap;
        if (overlap > 0) {
            if (catchUp > 0) {
                plan.add(new Action(overlapStart - catchUp, 0.5, "older-savepoint"));
            }
            plan.add(new Action(overlapStart, 0.5, "overlap-start"));
            plan.add(new Action(overlapEnd, 0.5, "overlap-end"));
        }
        int rollingUpdate = rollingUpdate(windows, overlap, catchUp);
        plan.add(new Action(rollingUpdate, 0.5, "rolling-update"));
        if (jobManagerOverlap > 0) {
            int from = rollingUpdate + 1;
            plan.add(new Action(from, 0.7, "jobmanager-overlap-start"));
            plan.add(new Action(from + jobManagerOverlap, 0.7, "jobmanager-overlap-end"));
        }
        if (outageSeconds > 0) { // after the overlap; the rolling update waits for it to end
            plan.add(
                    new Action(
                            overlapEnd + Math.max(1, (windows - overlapEnd) / 4),
                            0.2,
                            "s3-outage"));
        }
        List<Integer> outsideTheOverlap = new ArrayList<>();
        for (int w = 1; w < windows - 1; w++) {
            if (overlap == 0 || w < overlapStart || w > overlapEnd) {
                outsideTheOverlap.add(w);
            }
        }
        for (int k = 0; k < kills; k++) {
            plan.add(
                    new Action(
                            1 + random.nextInt(windows - 2),
                            0.1 + 0.8 * random.nextDouble(),
                            "kill"));
        }
        // Drawn after the TaskManager kills, so a seed's kill moments stay what they were.
        for (int k = 0; k < jobManagerKills; k++) {
            plan.add(
                    new Action(
                            outsideTheOverlap.get(random.nextInt(outsideTheOverlap.size())),
                            0.1 + 0.8 * random.nextDouble(),
                            "jobmanager-kill"));
        }
        plan.sort(Comparator.comparingInt(Action::window).thenComparingDouble(Action::at));
        return plan;
    }

    private static int overlapStart(int windows, int overlap, int catchUp) {
        return catchUp + Math.max(1, (windows - overlap - catchUp) / 6);
    }

    private static int rollingUpdate(int windows, int overlap, int catchUp) {
        int overlapEnd = overlapStart(windows, overlap, catchUp) + overlap;
        return overlapEnd + Math.max(1, (windows - overlapEnd) / 2);
    }

    /**
     * Whether the JobManager overlap fits whole between the rolling update and the last window. A
     * long one once started before the rolling update and the outage, which then ran inside it: the
     * successor's submit would resume the job the update had stopped, or that the outage held
     * still.
     */
    private static boolean fits(int windows, int overlap, int catchUp, int jobManagerOverlap) {
        int last = rollingUpdate(windows, overlap, catchUp);
        if (jobManagerOverlap > 0) {
            last += 1 + jobManagerOverlap;
        }
        return last <= windows - 1;
    }

    /** The records produced by the moment of {@code action}. */
    long recordsBy(Action action) {
        return (long) ((action.window() + action.at()) * perWindow);
    }

    private int positive(String flag, int min) {
        try {
            int v = Integer.parseInt(flags.get(flag));
            if (v >= min) {
                return v;
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        throw new IllegalArgumentException(
                "--"
                        + flag
                        + " must be a whole number >= "
                        + min
                        + ", got '"
                        + flags.get(flag)
                        + "'");
    }
}
