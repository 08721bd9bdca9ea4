package dev.snapshots.harness.testutils;

import dev.snapshots.cli.deploy.FlinkRest;
import dev.snapshots.harness.testutils.CloudWatchAlarm.Sample;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;

/**
 * Records, every {@code interval}, what the module's metrics sidecar and log metric filters would
 * send CloudWatch for one job, under the same metric names: Flink's metrics named as its Prometheus
 * reporter names them ("flink_" + the group's logical scope + "_" + the metric), read here through
 * the REST API of whichever JobManager the cluster's address names; a scrape's renames ({@link
 * #rename}); and the TaskManager log lines a metric filter counts. A metric the job does not have
 * at that moment (no JobManager, no job, an operator not deployed) gives no sample: CloudWatch sees
 * it missing.
 */
public final class MetricsScrape implements AutoCloseable {
    private static final String JOB = "flink_jobmanager_job_";
    private static final String OPERATOR = "flink_taskmanager_job_task_operator_";
    private static final Pattern QUOTED = Pattern.compile("\"([^\"]*)\"");

    /** The REST address of the JobManager the cluster's address names, once there is one. */
    @FunctionalInterface
    public interface RestAddress {
        String get() throws IOException;
    }

    private final RestAddress rest;
    private final String jobId;
    private final Path logs;
    private final long start = System.nanoTime();
    private final List<Sample> samples = new ArrayList<>();
    private final List<String> metrics = new ArrayList<>();
    private final Map<String, String> renamed = new HashMap<>();
    private final Map<String, List<String>> logFilters = new HashMap<>();
    private final Map<Path, Long> logOffsets = new HashMap<>();
    private final ScheduledExecutorService scraper =
            Executors.newSingleThreadScheduledExecutor(r -> new Thread(r, "metrics-scrape"));

    /**
     * Scrapes through {@code rest} and counts log lines of the TaskManagers' logs in {@code logs}.
     */
    public MetricsScrape(RestAddress rest, String jobId, Path logs) {
        this.rest = rest;
        this.jobId = jobId;
        this.logs = logs;
    }

    /** A Flink metric, by its Prometheus name. */
    public MetricsScrape metric(String name) {
        metrics.add(name);
        return this;
    }

    /**
     * A scrape's relabelling: the series of Prometheus metric {@code source} whose operator_name is
     * {@code operator}, published as {@code target}.
     */
    public MetricsScrape rename(String source, String operator, String target) {
        metrics.add(target);
        renamed.put(target, operator + "." + source.substring(OPERATOR.length()));
        return this;
    }

    /**
     * A log metric filter: one datapoint per scrape while the TaskManagers log, the count of new
     * lines that hold every quoted term of {@code pattern} (CloudWatch's filter syntax for terms).
     */
    public MetricsScrape logFilter(String metric, String pattern) {
        List<String> terms = new ArrayList<>();
        Matcher m = QUOTED.matcher(pattern);
        while (m.find()) {
            terms.add(m.group(1));
        }
        logFilters.put(metric, terms);
        return this;
    }

    public MetricsScrape start(Duration interval) {
        scraper.scheduleAtFixedRate(this::scrape, 0, interval.toMillis(), TimeUnit.MILLISECONDS);
        return this;
    }

    /** How long the recording runs now. */
    public Duration elapsed() {
        return Duration.ofNanos(System.nanoTime() - start);
    }

    public synchronized List<Sample> samples() {
        return List.copyOf(samples);
    }

    @Override
    public void close() throws InterruptedException {
        scraper.shutdownNow();
        scraper.awaitTermination(70, TimeUnit.SECONDS);
    }

    private void scrape() {
        Duration at = elapsed();
        List<Sample> scraped = new ArrayList<>();
        try {
            FlinkRest jobManager = new FlinkRest(rest.get());
            jobMetrics(jobManager, at, scraped);
            operatorMetrics(jobManager, at, scraped);
        } catch (IOException e) {
            // No JobManager or no job behind the address: nothing to scrape, as for the sidecar.
        }
        try {
            logLines(at, scraped);
        } catch (IOException e) {
            throw new IllegalStateException("reading the TaskManagers' logs", e);
        }
        synchronized (this) {
            samples.addAll(scraped);
        }
    }

    private void jobMetrics(FlinkRest rest, Duration at, List<Sample> scraped) throws IOException {
        List<String> names = metrics.stream().filter(m -> m.startsWith(JOB)).toList();
        String get = String.join(",", names.stream().map(m -> m.substring(JOB.length())).toList());
        for (JsonNode m : rest.get("/jobs/" + jobId + "/metrics?get=" + get)) {
            scraped.add(new Sample(at, JOB + m.path("id").asText(), m.path("value").asDouble()));
        }
    }

    /** Each operator metric's largest value over the subtasks of every vertex that has it. */
    private void operatorMetrics(FlinkRest rest, Duration at, List<Sample> scraped)
            throws IOException {
        for (JsonNode vertex : rest.get("/jobs/" + jobId).path("vertices")) {
            String path =
                    "/jobs/"
                            + jobId
                            + "/vertices/"
                            + vertex.path("id").asText()
                            + "/subtasks/metrics";
            List<String> available = new ArrayList<>();
            rest.get(path).forEach(m -> available.add(m.path("id").asText()));
            for (String metric : metrics) {
                for (String id : available) {
                    if (renamed.containsKey(metric)
                            ? id.equals(renamed.get(metric))
                            : metric.startsWith(OPERATOR)
                                    && id.endsWith("." + metric.substring(OPERATOR.length()))) {
                        for (JsonNode m : rest.get(path + "?agg=max&get=" + id)) {
                            scraped.add(new Sample(at, metric, m.path("max").asDouble()));
                        }
                    }
                }
            }
        }
    }

    private void logLines(Duration at, List<Sample> scraped) throws IOException {
        if (logFilters.isEmpty() || !Files.isDirectory(logs)) {
            return;
        }
        List<String> lines = new ArrayList<>();
        boolean logged = false;
        try (Stream<Path> files = Files.list(logs)) {
            for (Path f :
                    files.filter(f -> f.getFileName().toString().matches("taskmanager-\\d+\\.log"))
                            .toList()) {
                long from = logOffsets.getOrDefault(f, 0L);
                try (RandomAccessFile file = new RandomAccessFile(f.toFile(), "r")) {
                    long to = file.length();
                    if (to < from) {
                        from = 0; // a new process under the same name
                    }
                    byte[] bytes = new byte[(int) (to - from)];
                    file.seek(from);
                    file.readFully(bytes);
                    logOffsets.put(f, to);
                    logged |= bytes.length > 0;
                    lines.addAll(List.of(new String(bytes, StandardCharsets.UTF_8).split("\n")));
                }
            }
        }
        if (!logged) {
            return;
        }
        logFilters.forEach(
                (metric, terms) ->
                        scraped.add(
                                new Sample(
                                        at,
                                        metric,
                                        lines.stream()
                                                .filter(l -> terms.stream().allMatch(l::contains))
                                                .count())));
    }
}
