package dev.snapshots.harness.chaos;

import dev.snapshots.harness.JobOutput;
import dev.snapshots.iceberg.IcebergTable;
import dev.snapshots.job.config.JobConfig;
import dev.snapshots.store.StoreSpec;
import dev.snapshots.testkit.IcebergCatalogs;
import java.nio.file.Path;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Collectors;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.util.SnapshotUtil;

/**
 * The chaos run's Iceberg reader ({@code --iceberg}): the job keeps an Iceberg table (a JDBC
 * catalog in SQLite beside the run) up with its windows, and this reads the table's {@code main}
 * throughout the run, as a reader would, remembering every window as it saw it. At the end, every
 * window it saw must have been whole (equal to the reference), each window must be on the branch
 * once, no data file registered twice, and {@code main} equal to the reference.
 */
final class IcebergWatch implements AutoCloseable {
    static final String TABLE = "chaos.telemetry";

    private final IcebergTable table;
    private final StoreSpec store;
    private final Progress progress;
    private final Map<Long, Set<List<String>>> seen = new TreeMap<>();
    private final List<Integer> windowsPerRead = new ArrayList<>();
    private final List<String> readFailures = new ArrayList<>();
    private final AtomicBoolean running = new AtomicBoolean(true);
    private final Thread reader;

    private IcebergWatch(IcebergTable table, StoreSpec store, Progress progress) {
        this.table = table;
        this.store = store;
        this.progress = progress;
        this.reader = new Thread(this::readUntilClosed, "iceberg-reader");
    }

    /** The catalog for the run, created in {@code dir}, as the job's flag names it. */
    static String catalogFlag(Path dir) throws Exception {
        return IcebergCatalogs.sqlite(dir.resolve("catalog.db")).entrySet().stream()
                .map(e -> e.getKey() + "=" + e.getValue())
                .collect(Collectors.joining(","));
    }

    /** Starts reading {@code main}, once a second, straight from the store (no faults). */
    static IcebergWatch start(String catalogFlag, StoreSpec store, Progress progress) {
        IcebergWatch watch =
                new IcebergWatch(
                        IcebergTable.in(JobConfig.icebergCatalog(catalogFlag), TABLE),
                        store,
                        progress);
        watch.reader.start();
        return watch;
    }

    private void readUntilClosed() {
        while (running.get()) {
            try {
                Map<Long, List<String>> windows = readMain();
                synchronized (this) {
                    windows.forEach(
                            (w, rows) -> seen.computeIfAbsent(w, x -> new HashSet<>()).add(rows));
                    windowsPerRead.add(windows.size());
                }
                Thread.sleep(1_000);
            } catch (InterruptedException e) {
                return;
            } catch (Exception e) {
                synchronized (this) {
                    readFailures.add(e.toString());
                }
            }
        }
    }

    /** {@code main}'s rows by window, each window's rows sorted; empty before the table exists. */
    private Map<Long, List<String>> readMain() throws Exception {
        try (IcebergTable.Opened opened = table.open(store)) {
            if (!opened.catalog().tableExists(table.identifier())) {
                return Map.of();
            }
            Table t = opened.catalog().loadTable(table.identifier());
            Map<Long, List<String>> windows = new TreeMap<>();
            if (t.currentSnapshot() == null) {
                return windows;
            }
            try (CloseableIterable<Record> records =
                    IcebergGenerics.read(t).useSnapshot(t.currentSnapshot().snapshotId()).build()) {
                for (Record r : records) {
                    long window = millis(r, "window_start");
                    windows.computeIfAbsent(window, w -> new ArrayList<>())
                            .add(
                                    JobOutput.row(
                                            r.getField("device").toString(),
                                            window,
                                            (Long) r.getField("count"),
                                            micros(r, "value_sum"),
                                            micros(r, "value_min"),
                                            micros(r, "value_max"),
                                            millis(r, "last_event_time"),
                                            micros(r, "value_last"),
                                            (Long) r.getField("bytes_total"),
                                            micros(r, "latency_max_ms")));
                }
            }
            windows.values().forEach(Collections::sort);
            return windows;
        }
    }

    private static long millis(Record r, String field) {
        return ((OffsetDateTime) r.getField(field)).toInstant().toEpochMilli();
    }

    private static long micros(Record r, String field) {
        return Math.round((Double) r.getField(field) * 1_000_000d);
    }

    /**
     * Stops reading, reads once more, and judges what was seen against {@code expected}'s windows
     * before {@code closingWindow}; the figures go into the report.
     */
    List<String> verify(JobOutput expected, long closingWindow, ChaosReport report)
            throws Exception {
        close();
        Map<Long, List<String>> reference = expected.rowsByWindow(closingWindow);
        List<String> violations = new ArrayList<>();
        int partial = 0;
        synchronized (this) {
            for (Map.Entry<Long, Set<List<String>>> w : seen.entrySet()) {
                for (List<String> rows : w.getValue()) {
                    if (w.getKey() < closingWindow && !rows.equals(reference.get(w.getKey()))) {
                        partial++;
                        violations.add(
                                "iceberg: a reader saw window "
                                        + w.getKey()
                                        + " with "
                                        + rows.size()
                                        + " rows, not the reference's "
                                        + reference.getOrDefault(w.getKey(), List.of()).size()
                                        + " (or other rows)");
                    }
                }
            }
        }
        Map<Long, List<String>> last = readMain();
        last.keySet().removeIf(w -> w >= closingWindow);
        if (!last.equals(reference)) {
            violations.add(
                    "iceberg: main at the end has "
                            + last.size()
                            + " windows before the closing one, not equal to the reference's "
                            + reference.size());
        }
        List<Long> committed = new ArrayList<>();
        List<String> files = new ArrayList<>();
        try (IcebergTable.Opened opened = table.open(store)) {
            Table t = opened.catalog().loadTable(table.identifier());
            for (Snapshot s :
                    SnapshotUtil.ancestorsOf(t.snapshot("v1").snapshotId(), t::snapshot)) {
                String start = s.summary().get("snapshots.window-start-millis");
                if (start != null) {
                    committed.add(Long.parseLong(start));
                }
                for (DataFile f : s.addedDataFiles(t.io())) {
                    files.add(f.location());
                }
            }
        }
        long twice = committed.size() - committed.stream().distinct().count();
        long filesTwice = files.size() - files.stream().distinct().count();
        if (twice > 0) {
            violations.add("iceberg: " + twice + " windows committed more than once");
        }
        if (filesTwice > 0) {
            violations.add("iceberg: " + filesTwice + " data files registered more than once");
        }
        synchronized (this) {
            report.put(
                    "iceberg",
                    ChaosReport.ordered(
                            "reads",
                            windowsPerRead.size(),
                            "windowsSeenWhileRunning",
                            windowsPerRead.stream().distinct().sorted().toList(),
                            "partialWindowsSeen",
                            partial,
                            "windowsCommitted",
                            committed.size(),
                            "windowsCommittedTwice",
                            twice,
                            "dataFilesRegisteredTwice",
                            filesTwice,
                            "readFailures",
                            readFailures.size()));
        }
        progress.say(
                "iceberg: %d reads of main, %d windows committed, %d partial windows seen",
                windowsPerRead.size(), committed.size(), partial);
        return violations;
    }

    @Override
    public void close() throws InterruptedException {
        running.set(false);
        reader.interrupt();
        reader.join();
    }
}
