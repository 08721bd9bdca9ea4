package dev.snapshots.harness;

import dev.snapshots.cli.Inspect;
import dev.snapshots.cli.StoreScan;
import dev.snapshots.harness.cluster.FileTrees;
import dev.snapshots.job.SnapshotJob;
import dev.snapshots.job.config.CommandLine;
import dev.snapshots.job.config.JobConfig;
import dev.snapshots.job.config.JobOptions;
import dev.snapshots.key.ObjectKeys;
import dev.snapshots.key.ObjectKeys.PartKey;
import dev.snapshots.key.PartKind;
import dev.snapshots.progress.CompletionPointer;
import dev.snapshots.store.ObjectStore;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import org.apache.flink.api.common.JobExecutionResult;
import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.ConfigOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.execution.JobClient;

/**
 * {@code snapshots demo}: the job on an embedded Flink, generated telemetry in, Parquet snapshots
 * out to a local directory, one line per window as its snapshot is published. Run it twice on the
 * same directory and every part collapses into the objects of the first run.
 */
final class Demo {
    static final String USAGE =
            String.join(
                    "\n",
                    "usage: snapshots demo [--out DIR] [--fresh] [job flags]",
                    "",
                    "  --out DIR   where snapshots go [target/demo]; a second run into the same DIR collapses into the first",
                    "  --fresh     empty DIR first");

    private Demo() {}

    /**
     * What the demo runs unless told otherwise: small enough to watch, long enough to see windows
     * collapse.
     */
    static final Configuration DEFAULTS =
            Configuration.fromMap(
                    Map.of(
                            JobOptions.WINDOWS.key(),
                            "36",
                            JobOptions.EVENTS_PER_WINDOW.key(),
                            "1000",
                            JobOptions.EVENTS_PER_SECOND.key(),
                            "1500",
                            JobOptions.CHECKPOINT_INTERVAL.key(),
                            "2s",
                            JobOptions.KEYS.key(),
                            "50"));

    private static final ConfigOption<String> OUT =
            ConfigOptions.key("demo.out")
                    .stringType()
                    .defaultValue("target/demo")
                    .withDescription(
                            "where snapshots go; a second run into the same directory collapses into the first");

    /** The job's options but the store, which --out sets. */
    static final List<ConfigOption<?>> JOB_OPTIONS =
            JobOptions.ALL.stream().filter(o -> o != JobOptions.STORE).toList();

    static String usage() {
        return USAGE
                + "\n\njob flags (the demo's defaults):\n"
                + CommandLine.help(JOB_OPTIONS, DEFAULTS);
    }

    static int run(String[] args, PrintStream out) throws Exception {
        List<ConfigOption<?>> options = new ArrayList<>(JOB_OPTIONS);
        options.add(OUT);
        CommandLine.Parsed parsed = CommandLine.parse(args, options, Set.of("fresh"), 0, DEFAULTS);
        Path dir = Path.of(parsed.get(OUT)).toAbsolutePath();
        if (parsed.has("fresh")) {
            FileTrees.deleteRecursively(dir);
        }
        Files.createDirectories(dir);
        Configuration values = new Configuration(parsed.options());
        values.setString(JobOptions.STORE.key(), dir.toUri().toString());
        JobConfig config = JobConfig.of(values);
        long windows = config.get(JobOptions.WINDOWS);
        out.printf(
                "demo: %d windows of %s event time, %d events each, %d devices, B=%d buckets, into %s%n",
                windows,
                CommandLine.text(config.windowLength()),
                config.get(JobOptions.EVENTS_PER_WINDOW),
                config.get(JobOptions.KEYS),
                config.buckets(),
                dir);
        out.printf(
                "      every %sth record malformed, every %sth late; checkpoints every %s%n",
                config.get(JobOptions.BAD_EVERY),
                config.get(JobOptions.LATE_EVERY),
                CommandLine.text(config.get(JobOptions.CHECKPOINT_INTERVAL)));

        long started = System.nanoTime();
        JobClient job = SnapshotJob.start(SnapshotJob.embedded(), config);
        String jobId = job.getJobID().toHexString();
        Set<Long> printed = new HashSet<>();
        Totals totals = new Totals();
        try (ObjectStore store = config.store().open()) {
            out.printf(
                    "%-18s %6s %7s %10s %10s %13s%n",
                    "window (UTC)", "parts", "rows", "collapsed", "divergent", "dead letters");
            CompletableFuture<JobExecutionResult> result = job.getJobExecutionResult();
            while (!result.isDone()) {
                try {
                    printNewWindows(store, config, jobId, printed, totals, out, false);
                } catch (IOException e) {
                    // A look while the job writes can meet a file mid-promotion; the next look sees
                    // it whole.
                }
                Thread.sleep(500);
            }
            result.get();
            printNewWindows(store, config, jobId, printed, totals, out, true);
            Map<String, Long> reasons =
                    JobOutput.published(store, config.jobVersion(), Long.MIN_VALUE)
                            .deadLetterReasons;
            double seconds = (System.nanoTime() - started) / 1e9;
            out.printf(
                    "%ndone in %.1f s: %d windows, %d parts, %d rows; %d created, %d collapsed into earlier objects,"
                            + " %d divergent%n",
                    seconds,
                    printed.size(),
                    totals.parts,
                    totals.rows,
                    totals.parts - totals.collapsed,
                    totals.collapsed,
                    totals.divergent);
            out.printf(
                    "dead letters: %d %s%n",
                    reasons.values().stream().mapToLong(Long::longValue).sum(), reasons);
            out.printf("%nlook inside:  ./snapshots inspect %s%n", dir.toUri());
            out.printf(
                    "query:        duckdb -c \"SELECT device, sum(count) FROM read_parquet('%s/%s/v=%d/schema=%d/*/*/*.parquet',"
                            + " hive_partitioning=true) GROUP BY 1 ORDER BY 1 LIMIT 5\"%n",
                    dir, config.pipeline(), config.jobVersion(), config.schemaVersion());
        }
        return 0;
    }

    private static final class Totals {
        long parts;
        long rows;
        long collapsed;
        long divergent;
    }

    /**
     * Prints each window once the completion pointer has passed it, and every window left once the
     * job has finished.
     */
    private static void printNewWindows(
            ObjectStore store,
            JobConfig config,
            String jobId,
            Set<Long> printed,
            Totals totals,
            PrintStream out,
            boolean finished)
            throws IOException {
        // The pointer first: every part it covers is published before the listing starts.
        Optional<Long> pointer =
                CompletionPointer.read(
                        store, PartKind.SNAPSHOT, config.pipeline(), config.jobVersion());
        if (pointer.isEmpty()) {
            return;
        }
        // Dead letters are windowed by arrival and published on their own; wait for them too, once
        // they exist.
        Optional<Long> deadLetterPointer =
                CompletionPointer.read(
                        store, PartKind.DEAD_LETTER, config.pipeline(), config.jobVersion());
        long through =
                finished
                        ? Long.MAX_VALUE
                        : Math.min(pointer.get(), deadLetterPointer.orElse(pointer.get()));
        StoreScan scan = StoreScan.all(store, Optional.of(config.jobVersion()));
        Map<Long, StoreScan.Window> snapshots =
                scan.windows(
                        new StoreScan.Version(
                                PartKind.SNAPSHOT, config.pipeline(), config.jobVersion()),
                        config.schemaVersion());
        Map<Long, StoreScan.Window> deadLetters =
                scan.windows(
                        new StoreScan.Version(
                                PartKind.DEAD_LETTER, config.pipeline(), config.jobVersion()),
                        config.schemaVersion());
        Map<Long, Long> divergentByWindow = new TreeMap<>();
        store.list(
                ObjectKeys.DIVERGENCE_PREFIX,
                o ->
                        ObjectKeys.parseDivergence(o.key())
                                .ifPresent(
                                        p ->
                                                divergentByWindow.merge(
                                                        p.windowStartMillis(), 1L, Long::sum)));
        long window = config.windowLength().toMillis();
        for (StoreScan.Window w : snapshots.values()) {
            if (w.start + window > through || w.parts.isEmpty() || !printed.add(w.start)) {
                continue;
            }
            long rows = 0;
            long collapsed = 0;
            for (PartKey p : w.allParts()) {
                StoreScan.PartInfo info = StoreScan.PartInfo.of(store, p);
                rows += info.rows();
                collapsed += info.writerJob().equals(jobId) ? 0 : 1;
            }
            long divergent = divergentByWindow.getOrDefault(w.start, 0L);
            long dead = 0;
            for (PartKey p :
                    deadLetters.containsKey(w.start)
                            ? deadLetters.get(w.start).allParts()
                            : List.<PartKey>of()) {
                dead += StoreScan.PartInfo.of(store, p).rows();
            }
            int parts = w.allParts().size();
            totals.parts += parts;
            totals.rows += rows;
            totals.collapsed += collapsed;
            totals.divergent += divergent;
            out.printf(
                    "%-18s %6d %7d %10d %10d %13d%n",
                    Inspect.WINDOW.format(Instant.ofEpochMilli(w.start)),
                    parts,
                    rows,
                    collapsed,
                    divergent,
                    dead);
        }
    }
}
