package dev.snapshots.harness.bench;

import dev.snapshots.cli.Flags;
import dev.snapshots.job.SnapshotPipeline;
import dev.snapshots.job.config.JobConfig;
import dev.snapshots.sink.Bucketing;
import dev.snapshots.sink.CanonicalSnapshotSinkBuilder;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * What a benchmark measures: its flags, checked, and every run in the order they go: rounds of
 * discarding, FileSink, ours (and ours redistributed, if asked) (so machine drift hits all alike),
 * then per key count of the scaling table as many rounds of the discarding sink, FileSink and ours
 * per bucket count, then the catch-ups.
 */
final class BenchPlan {
    private static final String[][] FLAGS = {
        {"events", "20000000"},
        {"keys", "10000"},
        {"buckets", "4"},
        {"store", "file"},
        {"runs", "3"},
        {"scale-keys", "10000,100000,1000000"},
        // B = 1 would put every key group in one bucket: at parallelism 2 that splits it.
        {"scale-buckets", "4"},
        {"scale-events", "8000000"},
        {"heap", "3g"},
        {"gc", "g1"},
        {"profile", "no"},
        {"catch-up", "no"},
        {"redistributed", "no"},
        {"checkpoint-interval", "10s"},
        {"commit-shapes", "none"},
        {
            "publish-concurrency",
            Integer.toString(CanonicalSnapshotSinkBuilder.DEFAULT_PUBLISH_CONCURRENCY)
        },
    };

    enum Section {
        COMPARISON,
        SCALING,
        CATCH_UP
    }

    /**
     * One run in a JVM of its own: a sink over an input.
     *
     * @param maxDrift null: the generator's input; else a catch-up with this watermark alignment
     */
    record Run(
            Section section,
            BenchRun.Sink sink,
            long events,
            int keys,
            int buckets,
            String label,
            String maxDrift) {}

    private final Map<String, String> flags;

    private BenchPlan(Map<String, String> flags) {
        this.flags = flags;
    }

    static BenchPlan parse(String[] args) {
        Map<String, String> flags = Flags.parse(args, FLAGS, Set.of());
        for (String yesNo : List.of("profile", "catch-up", "redistributed")) {
            if (!List.of("yes", "no").contains(flags.get(yesNo))) {
                throw new IllegalArgumentException(
                        "--" + yesNo + " must be yes or no, got '" + flags.get(yesNo) + "'");
            }
        }
        if (!List.of("g1", "parallel").contains(flags.get("gc"))) {
            throw new IllegalArgumentException(
                    "--gc must be g1 or parallel, got '" + flags.get("gc") + "'");
        }
        if (!List.of("file", "s3").contains(flags.get("store"))) {
            throw new IllegalArgumentException(
                    "--store must be file or s3, got '" + flags.get("store") + "'");
        }
        if (!flags.get("commit-shapes").equals("none")) {
            if (!flags.get("store").equals("s3")) {
                throw new IllegalArgumentException(
                        "--commit-shapes measures against S3Proxy: add --store s3");
            }
            new BenchPlan(flags).commitShapes(); // each one parses
        }
        // The runs' job reads it as its --checkpoint-interval: checked the same way, here.
        JobConfig.parse(
                new String[] {
                    "--store",
                    "file:///tmp",
                    "--checkpoint-interval",
                    flags.get("checkpoint-interval")
                });
        for (String n :
                List.of(
                        "events",
                        "keys",
                        "buckets",
                        "runs",
                        "scale-events",
                        "publish-concurrency")) {
            if (!flags.get(n).matches("[1-9]\\d{0,10}")) {
                throw new IllegalArgumentException(
                        "--" + n + " must be a positive whole number, got '" + flags.get(n) + "'");
            }
        }
        BenchPlan plan = new BenchPlan(flags);
        if (plan.redistributed()
                && Bucketing.KEY_GROUPS.largestWholeParallelism(
                                plan.buckets(),
                                SnapshotPipeline.MAX_PARALLELISM,
                                BenchRun.REDISTRIBUTED_WINDOW_PARALLELISM)
                        == BenchRun.REDISTRIBUTED_WINDOW_PARALLELISM) {
            throw new IllegalArgumentException(
                    "--redistributed runs the window at "
                            + BenchRun.REDISTRIBUTED_WINDOW_PARALLELISM
                            + ", which keeps "
                            + plan.buckets()
                            + " buckets whole: take a --buckets below "
                            + SnapshotPipeline.MAX_PARALLELISM);
        }
        return plan;
    }

    List<Run> runs() {
        List<Run> runs = new ArrayList<>();
        for (int r = 1; r <= rounds(); r++) {
            for (BenchRun.Sink sink : BenchRun.Sink.values()) {
                if (sink == BenchRun.Sink.REDISTRIBUTED && !redistributed()) {
                    continue;
                }
                runs.add(
                        new Run(
                                Section.COMPARISON,
                                sink,
                                events(),
                                keys(),
                                buckets(),
                                String.format("round %d/%d", r, rounds()),
                                null));
            }
        }
        if (!flags.get("scale-keys").equals("none")) {
            for (String k : flags.get("scale-keys").split(",")) {
                int keys = Integer.parseInt(k.trim());
                long events = Math.max(Long.parseLong(flags.get("scale-events")), 8L * keys);
                for (int r = 1; r <= rounds(); r++) {
                    String label = String.format("scaling %d keys, round %d/%d", keys, r, rounds());
                    // FileSink has no buckets: one run per key count says how much of our cost is
                    // writing Parquet at all.
                    for (BenchRun.Sink sink :
                            List.of(BenchRun.Sink.DISCARDING, BenchRun.Sink.FILESINK)) {
                        runs.add(
                                new Run(
                                        Section.SCALING,
                                        sink,
                                        events,
                                        keys,
                                        buckets(),
                                        label,
                                        null));
                    }
                    for (String b : flags.get("scale-buckets").split(",")) {
                        runs.add(
                                new Run(
                                        Section.SCALING,
                                        BenchRun.Sink.OURS,
                                        events,
                                        keys,
                                        Integer.parseInt(b.trim()),
                                        label,
                                        null));
                    }
                }
            }
        }
        if (flags.get("catch-up").equals("yes")) {
            for (String drift : List.of("0s", "5m")) {
                runs.add(
                        new Run(
                                Section.CATCH_UP,
                                BenchRun.Sink.OURS,
                                Long.parseLong(flags.get("scale-events")),
                                keys(),
                                buckets(),
                                "catch-up, max drift " + drift,
                                drift));
            }
        }
        return runs;
    }

    long events() {
        return Long.parseLong(flags.get("events"));
    }

    int keys() {
        return Integer.parseInt(flags.get("keys"));
    }

    int buckets() {
        return Integer.parseInt(flags.get("buckets"));
    }

    int rounds() {
        return Integer.parseInt(flags.get("runs"));
    }

    boolean s3() {
        return flags.get("store").equals("s3");
    }

    /** Whether each comparison round also runs ours with the window at a splitting parallelism. */
    boolean redistributed() {
        return flags.get("redistributed").equals("yes");
    }

    boolean profile() {
        return flags.get("profile").equals("yes");
    }

    String heap() {
        return flags.get("heap");
    }

    boolean g1() {
        return flags.get("gc").equals("g1");
    }

    String checkpointInterval() {
        return flags.get("checkpoint-interval");
    }

    String publishConcurrency() {
        return flags.get("publish-concurrency");
    }

    /** Production's commit shapes to drive the committers at, after the runs (none: empty). */
    List<CommitShapes.Shape> commitShapes() {
        if (flags.get("commit-shapes").equals("none")) {
            return List.of();
        }
        return Arrays.stream(flags.get("commit-shapes").split(","))
                .map(CommitShapes.Shape::parse)
                .toList();
    }

    String command() {
        StringBuilder c = new StringBuilder("./snapshots bench");
        flags.forEach((k, v) -> c.append(" --").append(k).append(' ').append(v));
        return c.toString();
    }
}
