package dev.snapshots.harness.metrics;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Instant;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.apache.flink.annotation.Internal;
import org.apache.flink.metrics.Counter;
import org.apache.flink.metrics.Metric;
import org.apache.flink.metrics.MetricConfig;
import org.apache.flink.metrics.MetricGroup;
import org.apache.flink.metrics.reporter.MetricReporter;
import org.apache.flink.metrics.reporter.Scheduled;

/**
 * Keeps the job's counters past the TaskManager that held them. Every report interval, and when a
 * task attempt ends (its metrics are removed), it writes the latest value of each counter in {@link
 * #COUNTERS}, per job, task attempt and operator, to one JSON file for this process: a temporary
 * file moved into place, so a reader never sees half of one. A SIGKILLed TaskManager's file keeps
 * what it wrote last, at most one interval behind; summed over every file ({@link CounterFiles}), a
 * counter covers every attempt, killed TaskManagers included.
 *
 * <p>Runs inside the cluster as a plugin ({@link MetricsPlugin}): the Flink metrics API and the JDK
 * are all it may use.
 */
@Internal
public final class CounterFileReporter implements MetricReporter, Scheduled {
    /** The sink's committer and writer counters, and the pipeline's late-at-window counter. */
    static final Set<String> COUNTERS =
            Set.of(
                    "partsCreated",
                    "partsCollapsed",
                    "partsDivergent",
                    "storeRetries",
                    "storeConflicts",
                    "progressFailures",
                    "partsStaged",
                    "partsInline",
                    "stageRetries",
                    "lateAtWindow");

    private final long pid = ProcessHandle.current().pid();
    private final Path file;
    private final Path temporary;

    /** The counters of running task attempts, each with its key. */
    private final Map<Counter, String> live = new HashMap<>();

    /**
     * The latest value of every counter this process has held. A key is the opening of the
     * counter's JSON object (its identifying fields), so writing a line is appending the value to
     * it.
     */
    private final Map<String, Long> values = new TreeMap<>();

    /** Keys whose task attempt has ended: their values are final. */
    private final Set<String> ended = new HashSet<>();

    CounterFileReporter(Path directory) {
        this.file = directory.resolve("counters-" + pid + ".json");
        this.temporary = directory.resolve(".counters-" + pid + ".json.tmp");
    }

    @Override
    public void open(MetricConfig config) {} // configured by its factory

    @Override
    public synchronized void close() {
        report();
    }

    @Override
    public synchronized void notifyOfAddedMetric(Metric metric, String name, MetricGroup group) {
        if (metric instanceof Counter counter && COUNTERS.contains(name)) {
            Map<String, String> v = group.getAllVariables();
            String key =
                    "{\"job\":"
                            + quote(v.get("<job_id>"))
                            + ",\"taskAttempt\":"
                            + quote(v.get("<task_attempt_id>"))
                            + ",\"operator\":"
                            + quote(v.get("<operator_name>"))
                            + ",\"operatorId\":"
                            + quote(v.get("<operator_id>"))
                            + ",\"subtask\":"
                            + quote(v.get("<subtask_index>"))
                            + ",\"attempt\":"
                            + quote(v.get("<task_attempt_num>"))
                            + ",\"taskManager\":"
                            + quote(v.get("<tm_id>"))
                            + ",\"counter\":"
                            + quote(name);
            live.put(counter, key);
            values.put(key, counter.getCount());
        }
    }

    @Override
    public synchronized void notifyOfRemovedMetric(Metric metric, String name, MetricGroup group) {
        String key = live.remove(metric);
        if (key != null) {
            values.put(key, ((Counter) metric).getCount());
            ended.add(key);
            write();
        }
    }

    @Override
    public synchronized void report() {
        live.forEach((counter, key) -> values.put(key, counter.getCount()));
        write();
    }

    /** Flink logs what this throws (and carries on): a reporter has no logger of its own here. */
    private void write() {
        if (values.isEmpty()) { // a JobManager, or a TaskManager that has run none of the job's
            // operators yet
            return;
        }
        StringBuilder json =
                new StringBuilder(
                        "{\"pid\":"
                                + pid
                                + ",\"written\":\""
                                + Instant.now()
                                + "\",\"counters\":[");
        String separator = "\n";
        for (Map.Entry<String, Long> e : values.entrySet()) {
            json.append(separator)
                    .append(e.getKey())
                    .append(",\"value\":")
                    .append(e.getValue())
                    .append(",\"final\":")
                    .append(ended.contains(e.getKey()))
                    .append('}');
            separator = ",\n";
        }
        json.append("\n]}\n");
        try {
            Files.createDirectories(file.getParent());
            Files.writeString(temporary, json);
            Files.move(temporary, file, StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException e) {
            throw new UncheckedIOException("could not write the counters to " + file, e);
        }
    }

    private static String quote(String s) {
        if (s == null) {
            return "null";
        }
        StringBuilder q = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            if (c == '"' || c == '\\') {
                q.append('\\').append(c);
            } else if (c < 0x20) {
                q.append(String.format("\\u%04x", (int) c));
            } else {
                q.append(c);
            }
        }
        return q.append('"').toString();
    }
}
