package dev.snapshots.harness.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.snapshots.cli.Audit;
import dev.snapshots.cli.deploy.JobLifecycle;
import dev.snapshots.cli.testutils.EcsControlPlane;
import dev.snapshots.harness.Snapshots;
import dev.snapshots.harness.chaos.Chaos;
import dev.snapshots.harness.testutils.CloudWatchAlarm;
import dev.snapshots.harness.testutils.CloudWatchAlarm.Sample;
import dev.snapshots.harness.testutils.MetricsScrape;
import dev.snapshots.harness.testutils.Terraform;
import dev.snapshots.store.ObjectStore;
import dev.snapshots.store.StoreSpec;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * A first deploy and one JobManager replacement raise no page: the paging alarms of the ECS module
 * (deploy/terraform/modules/flink-ecs, alarms.tf), read from Terraform's own plan, evaluated as
 * CloudWatch evaluates them ({@link CloudWatchAlarm}) over the metrics a real job on the local
 * multi-process cluster reports while the stand-in ECS control plane deploys its JobManager service
 * (one task, 0 % / 100 %, as the module's): the first task brings the cluster up and its
 * entrypoint's {@code snapshots submit} starts the job on an empty store; a new deployment stops
 * that task as ECS does (SIGTERM: {@code snapshots release}, then the JVM, SIGKILL after the stop
 * timeout) before it starts the next, whose {@code submit} resumes the job from its newest
 * checkpoint. Then the service is scaled to 0 and the job stays down: the job-not-running alarm
 * must page once its evaluation periods have passed, and no other alarm with it.
 *
 * <p>Time runs {@value #TIME_SCALE} times faster than CloudWatch's: a 60 s period is 10 s here and
 * the sidecar's 30 s scrape 5 s, and the job checkpoints every 2 s where the module's default is 10
 * s. The cluster's own steps are not scaled (a JobManager starts in seconds, 'submit' waits at
 * least 10 s): a replacement here lasts, in CloudWatch's minutes, about as long as the module's
 * budget says one on Fargate does (a few minutes), so the alarms see a gap of the real size. Tagged
 * {@code long} (-Plong): about six minutes.
 */
@Tag("long")
class FirstDeployAlarmsITCase {
    private static final int TIME_SCALE = 6;
    private static final Path ROOT =
            Path.of(System.getProperty("snapshots.root")).toAbsolutePath().normalize();
    private static final String PIPELINE = "firstdeploy";
    private static final String JOB_ID = JobLifecycle.jobId(PIPELINE, 1);

    /** The variables of the module's own plan tests (tests/plan.tftest.hcl); the rest default. */
    private static final String VARIABLES =
            "  name       = \"snap\"\n"
                    + "  vpc_id     = \"vpc-1\"\n"
                    + "  subnet_ids = [\"subnet-1\", \"subnet-2\"]\n"
                    + "  image      = \"123456789012.dkr.ecr.eu-west-1.amazonaws.com/snapshots-job:1.0.0\"\n";

    private final LocalCluster cluster =
            new LocalCluster(ROOT, ROOT.resolve("target/first-deploy-cluster"));
    private final ExecutorService entrypoints = Executors.newCachedThreadPool();
    private final List<Future<String>> submits = new ArrayList<>();
    private StoreSpec store;

    @Test
    void aFirstDeployAndAJobManagerReplacementPageNobodyAndAJobLeftDownDoes() throws Exception {
        Optional<String> missing = Terraform.missing();
        assumeTrue(missing.isEmpty(), () -> "the module's alarms: " + missing.orElseThrow());
        JsonNode plan;
        try (Terraform terraform = Terraform.copyOf(ROOT)) {
            plan = terraform.plan("modules/flink-ecs", VARIABLES);
        }
        List<CloudWatchAlarm> alarms = new ArrayList<>();
        for (JsonNode after : planned(plan, "aws_cloudwatch_metric_alarm")) {
            alarms.add(CloudWatchAlarm.fromPlan(after, TIME_SCALE));
        }
        List<CloudWatchAlarm> paging = alarms.stream().filter(CloudWatchAlarm::pages).toList();
        CloudWatchAlarm notRunning = alarm(alarms, "snap-job-not-running");
        Duration period = notRunning.period();
        JsonNode scrapeConfig = scrapeConfig(plan);

        cluster.down(new PrintStream(new ByteArrayOutputStream())); // one an aborted run left
        MetricsScrape scrape =
                new MetricsScrape(
                        () -> cluster.endpoints().get("rest"), JOB_ID, cluster.logsDirectory());
        alarms.forEach(a -> scrape.metric(a.metric()));
        for (JsonNode relabel :
                scrapeConfig.path("scrape_configs").path(0).path("metric_relabel_configs")) {
            if (relabel.path("action").asText().equals("replace")) {
                String[] match = relabel.path("regex").asText().split(";");
                scrape.rename(match[0], match[1], relabel.path("replacement").asText());
            }
        }
        for (JsonNode filter : planned(plan, "aws_cloudwatch_log_metric_filter")) {
            scrape.logFilter(
                    filter.path("metric_transformation").path(0).path("name").asText(),
                    filter.path("pattern").asText());
        }
        // The alarms exist before any task: terraform apply creates them with the services.
        scrape.start(seconds(scrapeConfig.path("global").path("scrape_interval").asText()));
        try (scrape;
                EcsControlPlane ecs = new EcsControlPlane(this::startJobManagerTask, 0, 35)) {
            ecs.createService(1, 0, 100);
            ecs.awaitSteady(Duration.ofMinutes(3));
            assertThat(submits.get(0).get(3, TimeUnit.MINUTES)).contains("from the start");
            awaitParts(6);
            waitUntil(scrape, scrape.elapsed().plus(period.multipliedBy(3)));

            ecs.deploy();
            ecs.awaitSteady(Duration.ofMinutes(3));
            assertThat(submits.get(1).get(3, TimeUnit.MINUTES)).contains("resuming from");
            awaitParts(12);
            // As long again as the longest evaluation of a missing datapoint after the job is back.
            waitUntil(
                    scrape,
                    scrape.elapsed().plus(period.multipliedBy(notRunning.evaluationPeriods() + 1)));
            Duration quiet = scrape.elapsed();
            try (ObjectStore s = store.open()) {
                assertThat(Audit.findings(s, Optional.empty())).as("audit findings").isEmpty();
            }

            ecs.scale(0);
            ecs.awaitSteady(Duration.ofMinutes(2));
            Duration down = scrape.elapsed();
            waitUntil(scrape, down.plus(period.multipliedBy(notRunning.evaluationPeriods() + 2)));
            Duration end = scrape.elapsed();
            List<Sample> samples = scrape.samples();
            System.out.println(ecs.describe());
            report(paging, samples, end);

            for (CloudWatchAlarm alarm : paging) {
                assertThat(alarm.pages(samples, quiet))
                        .as(
                                "%s during the first deploy and the replacement (%s)",
                                alarm.name(), quiet)
                        .isEmpty();
            }
            assertThat(notRunning.pages(samples, end))
                    .as("the job left down from %s on", down)
                    .isNotEmpty()
                    .allSatisfy(page -> assertThat(page.at()).isGreaterThan(down));
            for (CloudWatchAlarm alarm : paging) {
                if (alarm != notRunning) {
                    assertThat(alarm.pages(samples, end))
                            .as(
                                    "%s: a silent JobManager is the job-not-running alarm's case",
                                    alarm.name())
                            .isEmpty();
                }
            }
        } finally {
            entrypoints.shutdownNow();
            cluster.down(System.out);
        }
    }

    /**
     * Starts a JobManager task: the first brings the whole cluster up (a first apply starts both
     * services), a later one starts a JobManager beside the TaskManagers, which register with it.
     * Either way its entrypoint then runs {@code snapshots submit} against it, as the image's does.
     */
    private EcsControlPlane.RunningTask startJobManagerTask(String task, String agentUri)
            throws Exception {
        String jobManager;
        if (cluster.pids().isEmpty()) {
            cluster.up(2, System.out);
            jobManager = cluster.currentJobManager();
            store =
                    StoreSpec.parse("s3://" + LocalCluster.BUCKET + "/" + PIPELINE)
                            .withEndpoint(cluster.endpoints().get("s3"));
        } else {
            jobManager = cluster.startJobManager();
            cluster.pointAddressAt(jobManager);
            cluster.awaitTaskManagers(cluster.aliveTaskManagers().size(), Duration.ofSeconds(90));
        }
        String rest = cluster.jobManagerRest(jobManager);
        submits.add(entrypoints.submit(() -> submit(rest)));
        return stopTimeout -> cluster.stopJobManager(jobManager, stopTimeout, System.out);
    }

    /** The job: generated, unbounded, a window every 2 s, a dead letter now and then. */
    private String submit(String rest) throws Exception {
        List<String> args =
                List.of(
                        "submit",
                        "--rest",
                        rest,
                        "--jar",
                        ROOT.resolve(Chaos.JOB_JAR).toString(),
                        "--pipeline",
                        PIPELINE,
                        "--store",
                        store.uri().toString(),
                        "--endpoint",
                        cluster.endpoints().get("s3"),
                        "--windows",
                        "0",
                        "--events-per-window",
                        "200",
                        "--events-per-second",
                        "100",
                        "--bad-every",
                        "1000",
                        "--late-every",
                        "0",
                        "--checkpoint-interval",
                        "2s");
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        int code =
                Snapshots.run(
                        args.toArray(new String[0]),
                        new PrintStream(out, true, StandardCharsets.UTF_8),
                        System.err);
        String said = out.toString(StandardCharsets.UTF_8);
        System.out.print("snapshots submit: " + said);
        assertThat(code).as("snapshots submit: %s", said).isZero();
        return said;
    }

    private void awaitParts(int parts) throws Exception {
        long deadline = System.nanoTime() + Duration.ofMinutes(2).toNanos();
        try (ObjectStore s = store.open()) {
            while (true) {
                int[] n = {0};
                s.list(PIPELINE + "/v=1/", o -> n[0] += o.key().endsWith(".parquet") ? 1 : 0);
                if (n[0] >= parts) {
                    return;
                }
                assertThat(System.nanoTime())
                        .as("%d parts within 2 minutes", parts)
                        .isLessThan(deadline);
                Thread.sleep(500);
            }
        }
    }

    /** Each paging alarm's datapoints, a period a column, and its state changes. */
    private static void report(List<CloudWatchAlarm> alarms, List<Sample> samples, Duration end) {
        for (CloudWatchAlarm a : alarms) {
            StringBuilder points = new StringBuilder();
            for (Double v : a.datapoints(samples, end)) {
                points.append(
                        v == null
                                ? " -"
                                : " "
                                        + (v == Math.rint(v)
                                                ? Long.toString(v.longValue())
                                                : String.format("%.2f", v)));
            }
            System.out.printf(
                    "ALARM %s (%s %s%s, %d of %d, %s %s, missing: %s):%s%n  %s%n",
                    a.name(),
                    a.statistic(),
                    a.diff() ? "DIFF " : "",
                    a.metric(),
                    a.datapointsToAlarm(),
                    a.evaluationPeriods(),
                    a.comparison(),
                    a.threshold(),
                    a.treatMissingData(),
                    points,
                    a.evaluate(samples, end));
        }
    }

    private static List<JsonNode> planned(JsonNode plan, String type) {
        List<JsonNode> after = new ArrayList<>();
        for (JsonNode change : plan.path("resource_changes")) {
            if (change.path("type").asText().equals(type)) {
                after.add(change.path("change").path("after"));
            }
        }
        return after;
    }

    private static CloudWatchAlarm alarm(List<CloudWatchAlarm> alarms, String name) {
        return alarms.stream().filter(a -> a.name().equals(name)).findFirst().orElseThrow();
    }

    /** The metrics sidecar's Prometheus scrape configuration, from the JobManager's task. */
    private static JsonNode scrapeConfig(JsonNode plan) throws Exception {
        ObjectMapper json = new ObjectMapper();
        for (JsonNode definition : planned(plan, "aws_ecs_task_definition")) {
            for (JsonNode container :
                    json.readTree(definition.path("container_definitions").asText())) {
                for (JsonNode variable : container.path("environment")) {
                    if (variable.path("name").asText().equals("PROMETHEUS_CONFIG_CONTENT")) {
                        return new ObjectMapper(new YAMLFactory())
                                .readTree(variable.path("value").asText());
                    }
                }
            }
        }
        throw new AssertionError("no metrics sidecar in the plan's task definitions");
    }

    /** A Prometheus duration in seconds ("30s"), scaled. */
    private static Duration seconds(String duration) {
        assertThat(duration).matches("\\d+s");
        return Duration.ofMillis(
                Long.parseLong(duration.substring(0, duration.length() - 1)) * 1000 / TIME_SCALE);
    }

    private static void waitUntil(MetricsScrape scrape, Duration at) throws InterruptedException {
        while (scrape.elapsed().compareTo(at) < 0) {
            Thread.sleep(200);
        }
    }
}
