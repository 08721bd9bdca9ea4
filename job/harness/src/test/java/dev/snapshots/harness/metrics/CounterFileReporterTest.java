package dev.snapshots.harness.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Iterator;
import java.util.Map;
import java.util.Properties;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.CoreOptions;
import org.apache.flink.core.plugin.DefaultPluginManager;
import org.apache.flink.core.plugin.DirectoryBasedPluginFinder;
import org.apache.flink.metrics.MetricGroup;
import org.apache.flink.metrics.SimpleCounter;
import org.apache.flink.metrics.groups.UnregisteredMetricsGroup;
import org.apache.flink.metrics.reporter.MetricReporter;
import org.apache.flink.metrics.reporter.MetricReporterFactory;
import org.apache.flink.metrics.reporter.Scheduled;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The reporter keeps every task attempt's counters on disk, and loads as Flink loads a plugin. */
class CounterFileReporterTest {
    @TempDir Path dir;

    @Test
    void theCountersOfEveryTaskAttemptAddUpOverTheFilesOfEveryProcess() throws Exception {
        Path counters = Files.createDirectories(dir.resolve("metrics"));
        // What a TaskManager wrote before it was killed.
        Files.writeString(
                counters.resolve("counters-1.json"),
                "{\"pid\":1,\"counters\":[\n"
                        + "{\"job\":\"j\",\"taskAttempt\":\"a0\",\"operator\":\"snapshots: Committer\",\"counter\":\"partsCreated\",\"value\":5,\"final\":false}\n]}\n");
        MetricReporter reporter = reporter(counters);
        SimpleCounter ended = counter(3);
        SimpleCounter running = counter(2);
        reporter.notifyOfAddedMetric(ended, "partsCreated", group("a1", "snapshots: Committer"));
        reporter.notifyOfAddedMetric(running, "partsCreated", group("a2", "snapshots: Committer"));
        reporter.notifyOfAddedMetric(counter(7), "partsInline", group("a2", "snapshots: Writer"));
        reporter.notifyOfAddedMetric(
                counter(100), "numRecordsIn", group("a2", "snapshots: Writer"));

        reporter.notifyOfRemovedMetric(ended, "partsCreated", group("a1", "snapshots: Committer"));
        running.inc(4);
        ((Scheduled) reporter).report();

        assertThat(CounterFiles.totals(counters))
                .containsExactlyInAnyOrderEntriesOf(
                        Map.of("partsCreated", 5L + 3 + 6, "partsInline", 7L));
    }

    @Test
    void aCounterIsFinalOnceItsTaskAttemptEndsAndTheFileIsWrittenThen() throws Exception {
        MetricReporter reporter = reporter(dir);
        SimpleCounter collapsed = counter(4);
        reporter.notifyOfAddedMetric(
                collapsed, "partsCollapsed", group("a1", "say \"hi\"\\ to\tthe committer"));
        reporter.notifyOfRemovedMetric(
                collapsed, "partsCollapsed", group("a1", "say \"hi\"\\ to\tthe committer"));

        JsonNode file =
                new ObjectMapper()
                        .readTree(
                                dir.resolve("counters-" + ProcessHandle.current().pid() + ".json")
                                        .toFile());
        JsonNode only = file.path("counters").get(0);
        assertThat(only.path("operator").asText()).isEqualTo("say \"hi\"\\ to\tthe committer");
        assertThat(only.path("taskAttempt").asText()).isEqualTo("a1");
        assertThat(only.path("value").asLong()).isEqualTo(4);
        assertThat(only.path("final").asBoolean()).isTrue();
    }

    @Test
    void thePluginLoadsAsFlinkLoadsPluginsWithNothingButFlinkAndTheJdkBehindIt() throws Exception {
        Path plugins = dir.resolve("plugins");
        MetricsPlugin.install(plugins);
        Iterator<MetricReporterFactory> factories =
                new DefaultPluginManager(
                                new DirectoryBasedPluginFinder(plugins).findPlugins(),
                                CoreOptions.getPluginParentFirstLoaderPatterns(new Configuration()))
                        .load(MetricReporterFactory.class);
        MetricReporterFactory factory = factories.next();
        assertThat(factories.hasNext()).isFalse();
        assertThat(factory.getClass().getName())
                .isEqualTo(CounterFileReporterFactory.class.getName());
        assertThat(factory.getClass().getClassLoader())
                .as("loaded from the plugin's jar")
                .isNotSameAs(getClass().getClassLoader());

        Properties config = new Properties();
        config.setProperty("directory", dir.resolve("metrics").toString());
        MetricReporter reporter = factory.createMetricReporter(config);
        reporter.notifyOfAddedMetric(counter(1), "lateAtWindow", group("a1", "late-at-window"));
        reporter.close();
        assertThat(CounterFiles.totals(dir.resolve("metrics")))
                .containsExactlyEntriesOf(Map.of("lateAtWindow", 1L));
        assertThat(MetricsPlugin.config(dir.resolve("metrics")))
                .contains(
                        "metrics.reporter.counters.factory.class: "
                                + CounterFileReporterFactory.class.getName());
    }

    private static MetricReporter reporter(Path directory) {
        Properties config = new Properties();
        config.setProperty("directory", directory.toString());
        return new CounterFileReporterFactory().createMetricReporter(config);
    }

    private static SimpleCounter counter(long count) {
        SimpleCounter c = new SimpleCounter();
        c.inc(count);
        return c;
    }

    /** An operator's group of task attempt {@code attempt}, with the variables Flink gives it. */
    private static MetricGroup group(String attempt, String operator) {
        return new UnregisteredMetricsGroup() {
            @Override
            public Map<String, String> getAllVariables() {
                return Map.of(
                        "<job_id>",
                        "j",
                        "<task_attempt_id>",
                        attempt,
                        "<operator_name>",
                        operator,
                        "<operator_id>",
                        "o",
                        "<subtask_index>",
                        "0",
                        "<task_attempt_num>",
                        "0",
                        "<tm_id>",
                        "taskmanager-1");
            }
        };
    }
}
