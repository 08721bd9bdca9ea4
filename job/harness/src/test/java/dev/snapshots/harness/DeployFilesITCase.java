package dev.snapshots.harness;

import static org.assertj.core.api.Assertions.assertThat;

import dev.snapshots.harness.testutils.DebianPackages;
import dev.snapshots.harness.testutils.DockerEngine;
import dev.snapshots.job.source.kinesis.KinesisShardSource;
import dev.snapshots.key.ObjectKeys;
import java.io.IOException;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.StreamSupport;
import org.apache.flink.api.common.JobStatus;
import org.apache.flink.metrics.CharacterFilter;
import org.apache.flink.runtime.metrics.MetricNames;
import org.apache.flink.runtime.metrics.groups.AbstractMetricGroup;
import org.apache.flink.runtime.metrics.groups.UnregisteredMetricGroups;
import org.apache.flink.runtime.scheduler.metrics.JobStatusMetrics;
import org.apache.flink.runtime.scheduler.metrics.StateTimeMetric;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * What can be checked of the deployment here, where there is no Docker engine and no AWS account:
 * docker-compose.yml validates with docker-compose itself, the images' files are consistent, and
 * the Terraform parses (with @cdktf/hcl2json) into resources that have the properties the
 * deployment depends on. Expressions hcl2json cannot take apart arrive as their source text.
 */
class DeployFilesITCase {
    private static final Path ROOT =
            Path.of(System.getProperty("snapshots.root")).toAbsolutePath().normalize();
    private static final String MODULE = "modules/flink-ecs/";
    private static final String EXAMPLE = "examples/complete/main.tf";
    private static JsonNode terraform;

    @BeforeAll
    static void parseTerraform() throws Exception {
        Path parse = ROOT.resolve("deploy/terraform/parse");
        if (!Files.isDirectory(parse.resolve("node_modules/@cdktf/hcl2json"))) {
            run(parse, "npm", "ci", "--no-audit", "--no-fund");
        }
        terraform = new ObjectMapper().readTree(run(parse, "node", "parse.js", ".."));
    }

    // --- docker-compose and the images ------------------------------------------------------

    @Test
    void composeRunsOnS3ProxyAndImagesBuiltBeforehand() throws Exception {
        DebianPackages.require(Map.of(DockerEngine.COMPOSE, "docker-compose"));
        run(ROOT, "docker-compose", "-f", "docker-compose.yml", "config", "-q");
        // The resolved file: anchors and merges applied, as docker-compose will run it.
        JsonNode services =
                new YAMLMapper()
                        .readTree(run(ROOT, "docker-compose", "-f", "docker-compose.yml", "config"))
                        .path("services");
        assertThat(fieldNames(services))
                .contains(
                        "s3proxy",
                        "create-bucket",
                        "kinesis",
                        "producer",
                        "jobmanager",
                        "taskmanager-1",
                        "taskmanager-2")
                .doesNotContain("minio");

        JsonNode s3 = services.path("s3proxy");
        assertThat(s3.path("image").asText()).startsWith("andrewgaul/s3proxy:");
        assertThat(s3.path("environment").path("JCLOUDS_PROVIDER").asText())
                .isEqualTo("filesystem-nio2");
        assertThat(s3.path("environment").path("S3PROXY_AUTHORIZATION").asText()).isEqualTo("none");
        assertThat(services.path("create-bucket").path("entrypoint").toString())
                .contains("-X PUT http://s3proxy:80/snapshots");
        assertThat(
                        services.path("jobmanager")
                                .path("depends_on")
                                .path("create-bucket")
                                .path("condition")
                                .asText())
                .isEqualTo("service_completed_successfully");

        for (String kinesis : List.of("kinesis", "producer")) {
            JsonNode service = services.path(kinesis);
            assertThat(Path.of(service.path("build").path("context").asText()))
                    .as("%s runs an image built from deploy/kinesalite", kinesis)
                    .isEqualTo(ROOT.resolve("deploy/kinesalite"));
            assertThat(service.path("volumes").isMissingNode())
                    .as("%s mounts nothing from the host", kinesis)
                    .isTrue();
        }
        assertThat(services.toString()).as("no npm ci at start").doesNotContain("npm ci");

        JsonNode jobmanager = services.path("jobmanager").path("environment");
        assertThat(jobmanager.path("SNAPSHOTS_CHECKPOINT_BASE").asText())
                .isEqualTo("s3://snapshots/flink/checkpoints");
        assertThat(jobmanager.path("SNAPSHOTS_JOB_ARGS").asText())
                .contains("--endpoint http://s3proxy:80");
        List<String> jobmanagerProperties = lines(jobmanager.path("FLINK_PROPERTIES").asText());
        List<String> taskmanagerProperties =
                lines(
                        services.path("taskmanager-1")
                                .path("environment")
                                .path("FLINK_PROPERTIES")
                                .asText());
        assertThat(jobmanagerProperties)
                .as("the entrypoint sets the JobManager's checkpoint directory per incarnation")
                .noneMatch(p -> p.startsWith("state.checkpoints.dir:"))
                .contains("state.checkpoints.num-retained: 3", "s3.endpoint: http://s3proxy:80");
        assertThat(taskmanagerProperties)
                .contains("state.checkpoints.dir: s3://snapshots/flink/checkpoints");
        assertFlinkPropertiesSurviveTheEntrypoint(jobmanagerProperties);
        assertFlinkPropertiesSurviveTheEntrypoint(taskmanagerProperties);
    }

    @Test
    void theKinesisImageInstallsItsPackagesWhenItIsBuilt() throws Exception {
        Path context = ROOT.resolve("deploy/kinesalite");
        List<String> lines = Files.readAllLines(context.resolve("Dockerfile"));
        assertThat(lines).anyMatch(l -> l.startsWith("RUN npm ci"));
        assertCopySourcesExist(lines, context);
        assertThat(Files.readAllLines(context.resolve(".dockerignore")))
                .as("the host's packages stay out of the context")
                .contains("node_modules");
    }

    @Test
    void theImageRunsAsFlinkWithThePluginAndTheJob() throws Exception {
        List<String> lines = Files.readAllLines(ROOT.resolve("deploy/docker/Dockerfile"));
        assertThat(lines)
                .contains(
                        "ARG FLINK_IMAGE=flink:1.20.3-java17", "FROM ${FLINK_IMAGE}", "USER flink");
        assertThat(String.join("\n", lines))
                .contains("/opt/flink/plugins/s3-fs-presto", "/opt/flink/usrlib/snapshots-job.jar");
        assertCopySourcesExist(lines, ROOT);
        assertThat(lines.indexOf("USER flink"))
                .as("no root after the last COPY")
                .isGreaterThan(lastIndexStartingWith(lines, "COPY"));
        run(ROOT, "bash", "-n", "deploy/docker/snapshots-entrypoint.sh");
    }

    /**
     * The JobManager container's entrypoint, run by bash with the official entrypoint and java
     * replaced by stand-ins that log what they are asked and behave as the real programs do: the
     * JobManager runs until SIGTERM, then exits 143 as Flink's JVM does; {@code submit} returns 0
     * once the job runs, fails with 1, or is still in its quiet wait (and exits 143 on SIGTERM);
     * {@code release} takes a moment, as the real one waits for the job's tasks to end. In each
     * state a SIGTERM releases the job (cancelled, its tasks ended) before the JobManager is
     * stopped, the container exits 0 (the JobManager's 143 answers the entrypoint's own SIGTERM:
     * the stop went as designed), and no process is left behind. With the REST API behind TLS (the
     * client's stores named, as the ECS module's rest_tls prelude names them), both address the
     * JobManager over https.
     */
    @ParameterizedTest(name = "submit {0}")
    @ValueSource(strings = {"waits", "runs", "fails", "runs a script", "runs over TLS"})
    void onSigtermTheEntrypointReleasesTheJobBeforeStoppingTheJobManager(String asked)
            throws Exception {
        String submit = asked.split(" ")[0];
        boolean script = asked.endsWith("script");
        String rest = asked.endsWith("TLS") ? "https://localhost:8081" : "http://localhost:8081";
        Path dir = Files.createTempDirectory("entrypoint");
        Path log = dir.resolve("log");
        Path pids = dir.resolve("pids");
        Files.writeString(
                dir.resolve("docker-entrypoint.sh"),
                String.join(
                        "\n",
                        "#!/usr/bin/env bash",
                        "echo $$ >> \"$PIDS\"",
                        "echo \"flink $*\" >> \"$LOG\"",
                        "trap 'echo \"jobmanager TERM\" >> \"$LOG\"; exit 143' TERM",
                        "while :; do sleep 0.1; done",
                        ""));
        Files.writeString(
                dir.resolve("java"),
                String.join(
                        "\n",
                        "#!/usr/bin/env bash",
                        "echo $$ >> \"$PIDS\"",
                        "args=\"${*:4}\"", // after -cp CLASSPATH dev.snapshots.cli.Cli
                        "echo \"cli $args\" >> \"$LOG\"",
                        "trap 'echo \"cli ${args%% *} TERM\" >> \"$LOG\"; exit 143' TERM",
                        "case \"$args\" in",
                        "  submit*) [[ \"$args\" != *--sql* ]] || cat \"${args##* }\" >> \"$LOG\"",
                        "    case \"$SUBMIT\" in",
                        "    runs) sleep 0.3; echo 'submit returned' >> \"$LOG\"; exit 0;;",
                        "    fails) sleep 0.3; echo 'submit failed' >> \"$LOG\"; exit 1;;",
                        "    waits) while :; do sleep 0.1; done;;",
                        "  esac;;",
                        "  release*) sleep 1; echo 'release done' >> \"$LOG\";;",
                        "esac",
                        ""));
        String entrypoint =
                Files.readString(ROOT.resolve("deploy/docker/snapshots-entrypoint.sh"))
                        .replace(
                                "/docker-entrypoint.sh",
                                dir.resolve("docker-entrypoint.sh").toString());
        Files.writeString(dir.resolve("entrypoint.sh"), entrypoint);
        for (String f : List.of("docker-entrypoint.sh", "java", "entrypoint.sh")) {
            assertThat(dir.resolve(f).toFile().setExecutable(true)).isTrue();
        }
        ProcessBuilder pb =
                new ProcessBuilder("bash", dir.resolve("entrypoint.sh").toString(), "jobmanager")
                        .redirectErrorStream(true)
                        .redirectOutput(dir.resolve("out").toFile());
        pb.environment().put("PATH", dir + ":" + System.getenv("PATH"));
        pb.environment().put("LOG", log.toString());
        pb.environment().put("PIDS", pids.toString());
        pb.environment().put("SUBMIT", submit);
        if (script) {
            pb.environment()
                    .put(
                            "SNAPSHOTS_SQL",
                            "CREATE TABLE t (x STRING);\nINSERT INTO t SELECT 'it''s';");
        } else {
            pb.environment().put("SNAPSHOTS_JOB_ARGS", "--store s3://b/p");
        }
        if (asked.endsWith("TLS")) {
            pb.environment().put("SNAPSHOTS_REST_TRUSTSTORE", dir.resolve("truststore").toString());
        }
        // The moment of the SIGTERM: in the quiet wait, after submit returned, or while the
        // entrypoint handles the failure (its release runs).
        String sigtermOnceLogged =
                Map.of("waits", "cli submit", "runs", "submit returned", "fails", "cli release")
                        .get(submit);
        Process container = pb.start();
        List<Long> leftBehind;
        try {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            while (container.isAlive()
                    && !(Files.exists(log) && Files.readString(log).contains(sigtermOnceLogged))
                    && System.nanoTime() < deadline) {
                Thread.sleep(50);
            }
            Thread.sleep(200);
            container.destroy(); // SIGTERM
            assertThat(container.waitFor(30, TimeUnit.SECONDS))
                    .as("the container stopped")
                    .isTrue();
            leftBehind = awaitEnded(pids);
        } finally {
            container.destroyForcibly();
            for (long pid : standIns(pids)) {
                ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly);
            }
        }
        List<String> lines = Files.readAllLines(log);
        String described =
                "exit "
                        + container.exitValue()
                        + ", "
                        + lines
                        + "\n"
                        + Files.readString(dir.resolve("out"));
        assertThat(lines)
                .as(described)
                .contains(
                        "flink jobmanager",
                        "cli release --rest " + rest,
                        "release done",
                        "jobmanager TERM");
        assertThat(lines.indexOf("release done"))
                .as("released before the JobManager is stopped: %s", described)
                .isLessThan(lines.indexOf("jobmanager TERM"));
        assertThat(container.exitValue()).as("a stop as designed: %s", described).isZero();
        assertThat(leftBehind).as("processes still running after the container stopped").isEmpty();
        String submitted =
                lines.stream().filter(l -> l.startsWith("cli submit")).findFirst().orElseThrow();
        assertThat(submitted)
                .startsWith(
                        "cli submit --rest "
                                + rest
                                + " --jar /opt/flink/usrlib/snapshots-job.jar ");
        if (script) {
            assertThat(submitted).contains(" --sql ");
            assertThat(lines)
                    .as("the script, as submit read it")
                    .containsSubsequence(
                            "CREATE TABLE t (x STRING);", "INSERT INTO t SELECT 'it''s';");
        } else {
            assertThat(submitted).endsWith(" --store s3://b/p");
        }
    }

    @Test
    void theBuildContextLeavesOutBuildOutputButNotTheJarsTheImageCopies() throws Exception {
        List<String> ignore = Files.readAllLines(ROOT.resolve(".dockerignore"));
        for (String excluded :
                List.of(
                        ".git",
                        "node_modules",
                        "deploy/kinesalite/node_modules",
                        "target",
                        "job/harness/target/classes",
                        "deploy/flink-local/target/lib/flink-dist.jar")) {
            assertThat(dockerIgnores(ignore, excluded)).as("%s is left out", excluded).isTrue();
        }
        for (String line : Files.readAllLines(ROOT.resolve("deploy/docker/Dockerfile"))) {
            if (line.startsWith("COPY ")) {
                String source = copySource(line);
                assertThat(dockerIgnores(ignore, source))
                        .as("%s is in the context", source)
                        .isFalse();
            }
        }
    }

    // --- the services ------------------------------------------------------------------------

    @Test
    void theJobManagerNeverOverlapsAndTaskManagersDeployWithoutGaps() {
        JsonNode tasks = local("tasks");
        assertThat(tasks.path("jobmanager").path("count").asInt()).isEqualTo(1);
        assertThat(
                        tasks.path("jobmanager")
                                .path("deployment")
                                .path("minimum_healthy_percent")
                                .asInt())
                .as("the old JobManager stops before the new one starts")
                .isZero();
        assertThat(tasks.path("jobmanager").path("deployment").path("maximum_percent").asInt())
                .isEqualTo(100);
        assertThat(
                        tasks.path("taskmanager")
                                .path("deployment")
                                .path("minimum_healthy_percent")
                                .asInt())
                .isEqualTo(100);
        assertThat(tasks.path("taskmanager").path("deployment").path("maximum_percent").asInt())
                .isEqualTo(200);

        JsonNode s = resource("aws_ecs_service", "flink");
        assertThat(s.path("for_each").asText())
                .as("one service per task kind")
                .isEqualTo("${local.tasks}");
        assertThat(s.path("deployment_minimum_healthy_percent").asText())
                .isEqualTo("${each.value.deployment.minimum_healthy_percent}");
        assertThat(s.path("deployment_maximum_percent").asText())
                .isEqualTo("${each.value.deployment.maximum_percent}");
        assertThat(s.path("desired_count").asText()).isEqualTo("${each.value.count}");
        assertThat(s.path("deployment_circuit_breaker").get(0).path("enable").asBoolean()).isTrue();
        assertThat(s.path("deployment_circuit_breaker").get(0).path("rollback").asBoolean())
                .isTrue();
        assertThat(s.path("launch_type").asText()).isEqualTo("FARGATE");
        assertThat(s.path("network_configuration").get(0).path("assign_public_ip").asBoolean())
                .isFalse();
        assertThat(s.path("dynamic").path("service_registries").get(0).path("for_each").asText())
                .as("TaskManagers find the JobManager through Cloud Map")
                .contains("aws_service_discovery_service.jobmanager.arn");
        assertThat(
                        resource("aws_ecs_task_definition", "flink")
                                .path("container_definitions")
                                .asText())
                .isEqualTo("${jsonencode(local.containers[each.key])}");
    }

    @Test
    void aSpareTaskManagerWaitsOutsideTheJobsParallelism() {
        assertThat(local("tasks").path("taskmanager").path("count").asText())
                .isEqualTo("${var.taskmanager_count + var.spare_taskmanagers}");
        assertThat(variable("spare_taskmanagers").path("default").asInt()).isEqualTo(1);
        assertThat(local("job_parallelism").asText())
                .isEqualTo("${var.taskmanager_count * var.taskmanager_slots}");
        assertThat(local("flink_common_properties"))
                .extracting(JsonNode::asText)
                .contains("parallelism.default: ${local.job_parallelism}");
    }

    @Test
    void eachJobManagerIncarnationCheckpointsUnderTheBase() {
        assertThat(local("checkpoint_base").asText())
                .isEqualTo("s3://${local.bucket}/${var.checkpoint_prefix}checkpoints");
        assertThat(environment(local("jobmanager_container")))
                .containsEntry("SNAPSHOTS_CHECKPOINT_BASE", "${local.checkpoint_base}")
                .containsEntry("FLINK_PROPERTIES", "${local.flink_properties.jobmanager}");
        assertThat(texts(local("flink_common_properties")))
                .contains(
                        "state.checkpoints.num-retained: ${var.retained_checkpoints}",
                        "state.savepoints.dir: s3://${local.bucket}/${var.checkpoint_prefix}savepoints")
                .noneMatch(p -> p.startsWith("state.checkpoints.dir"));
        assertThat(texts(local("flink_jobmanager_properties")))
                .noneMatch(p -> p.startsWith("state.checkpoints.dir"));
        assertThat(texts(local("flink_taskmanager_properties")))
                .as("the TaskManagers' fallback, never the JobManager's memory")
                .contains("state.checkpoints.dir: ${local.checkpoint_base}");
        assertThat(variable("retained_checkpoints").path("default").asInt()).isEqualTo(3);
        assertThat(local("flink_properties").path("jobmanager").asText())
                .contains("local.flink_common_properties", "local.flink_jobmanager_properties");
        assertThat(local("flink_properties").path("taskmanager").asText())
                .contains("local.flink_common_properties", "local.flink_taskmanager_properties");
        for (String role : List.of("common", "jobmanager", "taskmanager")) {
            assertFlinkPropertiesSurviveTheEntrypoint(
                    texts(local("flink_" + role + "_properties")));
        }
    }

    @Test
    void fargateTasksReadTheTaskRoleAndSizeFlinkToTheirMemory() {
        assertThat(texts(local("flink_common_properties")))
                .as("the Presto S3 filesystem's default is EC2 instance credentials")
                .contains("s3.use-instance-credentials: false");
        assertThat(texts(local("flink_jobmanager_properties")))
                .contains(
                        "jobmanager.memory.process.size: ${local.flink_process_memory.jobmanager}m");
        assertThat(texts(local("flink_taskmanager_properties")))
                .contains(
                        "taskmanager.memory.process.size: ${local.flink_process_memory.taskmanager}m",
                        "taskmanager.memory.managed.size: 0");
        JsonNode process = local("flink_process_memory");
        assertThat(process.path("jobmanager").asText())
                .startsWith("${var.jobmanager_memory - local.sidecar_memory.jobmanager");
        assertThat(process.path("taskmanager").asText())
                .startsWith("${var.taskmanager_memory - local.sidecar_memory.taskmanager");
        JsonNode sidecars = local("sidecar_memory");
        assertThat(sidecars.path("jobmanager").asText())
                .contains("var.cli_memory", "var.metrics_agent_memory");
        assertThat(sidecars.path("taskmanager").asText())
                .contains("var.scale_in_protection ? var.cli_memory", "var.metrics_agent_memory");
        JsonNode definition = resource("aws_ecs_task_definition", "flink");
        assertThat(
                        definition
                                .path("lifecycle")
                                .get(0)
                                .path("precondition")
                                .get(0)
                                .path("condition")
                                .asText())
                .isEqualTo("${local.flink_process_memory[each.key] >= 1024}");
    }

    @Test
    void tasksGetUpTo120SecondsToStopAndHaveHealthChecks() {
        JsonNode timeout = variable("stop_timeout_seconds");
        assertThat(timeout.path("default").asInt()).isEqualTo(120);
        assertThat(timeout.path("validation").get(0).path("condition").asText()).contains("<= 120");
        for (String container : List.of("jobmanager_container", "taskmanager_container")) {
            JsonNode c = local(container);
            assertThat(c.path("essential").asBoolean()).isTrue();
            assertThat(c.path("stopTimeout").asText()).isEqualTo("${var.stop_timeout_seconds}");
        }
        assertThat(local("jobmanager_container").path("healthCheck").asText())
                .contains("curl -sf http://localhost:8081/overview");
        assertThat(local("taskmanager_container").path("healthCheck").asText())
                .contains("/dev/tcp/127.0.0.1/6122");
        assertThat(local("protect_container").path("stopTimeout").asText())
                .isEqualTo("${var.stop_timeout_seconds}");
        // ECS stops a container before those it depends on: the sidecar's checkpoint on SIGTERM
        // completes before the TaskManager gets its SIGTERM.
        JsonNode dependsOn = local("protect_container").path("dependsOn");
        assertThat(dependsOn.size()).isOne();
        assertThat(dependsOn.get(0).path("containerName").asText())
                .isEqualTo("${local.taskmanager_container.name}");
        assertThat(local("taskmanager_container").path("name").asText()).isEqualTo("taskmanager");
        assertThat(dependsOn.get(0).path("condition").asText()).isEqualTo("START");
        assertThat(local("taskmanager_container").has("dependsOn"))
                .as("no cycle: the TaskManager depends on nothing")
                .isFalse();
    }

    @Test
    void sidecarsAreRestartedInPlaceAndTheCommandLineHasASmallHeap() {
        assertThat(local("containers").path("taskmanager").asText())
                .contains(
                        "var.scale_in_protection ? [merge(local.protect_container, local.protect_extras)]",
                        "var.metrics ? [local.metrics_container]");
        assertThat(local("containers").path("jobmanager").asText())
                .contains("var.metrics ? [local.metrics_container]");
        JsonNode protect = local("protect_container");
        assertThat(protect.path("entryPoint").toString()).contains("local.protect_command");
        assertThat(local("protect_command").asText())
                .contains("protect --rest", "--max-protected-minutes $((6 + RANDOM % 5))");
        assertThat(protect.path("essential").asBoolean())
                .as("the TaskManager does not die with it")
                .isFalse();
        assertThat(protect.path("restartPolicy").asText())
                .as("restarted after a let-go too: a task ECS keeps must not run unprotected")
                .isEqualTo("${local.sidecar_restart_policy}");
        assertThat(protect.path("memory").asText()).isEqualTo("${var.cli_memory}");
        JsonNode policy = local("sidecar_restart_policy");
        assertThat(policy.path("enabled").asBoolean()).isTrue();
        assertThat(policy.path("restartAttemptPeriod").asInt()).isBetween(60, 1800);
        JsonNode metrics = local("metrics_container");
        assertThat(metrics.path("essential").asBoolean()).isFalse();
        assertThat(metrics.path("restartPolicy").asText())
                .isEqualTo("${local.sidecar_restart_policy}");
        assertThat(resource("aws_ecs_service", "flink").path("platform_version").asText())
                .as("container restart policies need Fargate 1.4.0 or later")
                .isEqualTo("LATEST");

        // JAVA_TOOL_OPTIONS: HotSpot reads it without help from the image.
        assertThat(local("cli_java_options").asText()).isEqualTo("-Xmx${var.cli_heap_mb}m");
        for (String container : List.of("protect_container", "jobmanager_container")) {
            assertThat(environment(local(container)))
                    .as(container)
                    .containsEntry("JAVA_TOOL_OPTIONS", "${local.cli_java_options}");
        }
        assertThat(variable("cli_memory").path("validation").get(0).path("condition").asText())
                .isEqualTo("${var.cli_memory >= 2 * var.cli_heap_mb}");
    }

    // --- metrics and alarms ------------------------------------------------------------------

    @Test
    void flinksPrometheusReporterFeedsTheSidecarUnderFlinksOwnNames() throws Exception {
        assertThat(texts(local("flink_common_properties")))
                .contains(
                        "metrics.reporter.prom.factory.class: org.apache.flink.metrics.prometheus.PrometheusReporterFactory",
                        "metrics.reporter.prom.port: 9249");
        assertThat(local("prometheus_scrape_config").asText())
                .contains(
                        "localhost:9249",
                        "cluster = var.name",
                        "join(\"|\", local.exported_metrics)");
        assertThat(local("cloudwatch_agent_config").asText())
                .contains(
                        "prometheus_config_path = \"env:PROMETHEUS_CONFIG_CONTENT\"",
                        "dimensions       = [[\"cluster\"]]",
                        "for m in local.exported_metrics");
        assertThat(environment(local("metrics_container")))
                .containsEntry("CW_CONFIG_CONTENT", "${local.cloudwatch_agent_config}")
                .containsEntry("PROMETHEUS_CONFIG_CONTENT", "${local.prometheus_scrape_config}");
        assertThat(local("exported_metrics").asText())
                .isEqualTo(
                        "${concat(values(local.flink_metrics), [local.dead_letter_rate_metric])}");

        // The reporter's rule: "flink_" + the group's logical scope joined with "_" + the name.
        AbstractMetricGroup<?> jobOnJobManager =
                UnregisteredMetricGroups.createUnregisteredJobManagerJobMetricGroup();
        AbstractMetricGroup<?> operator =
                UnregisteredMetricGroups.createUnregisteredOperatorMetricGroup();
        JsonNode names = local("flink_metrics");
        assertThat(names.path("running_time").asText())
                .isEqualTo(prometheusName(jobOnJobManager, runningTimeMetric()));
        assertThat(names.path("restarts").asText())
                .isEqualTo(prometheusName(jobOnJobManager, MetricNames.NUM_RESTARTS));
        assertThat(names.path("last_checkpoint_id").asText())
                .isEqualTo(prometheusName(jobOnJobManager, lastCheckpointIdMetric()));
        assertThat(names.path("millis_behind_latest").asText())
                .as("the Kinesis source reader's gauge")
                .isEqualTo(prometheusName(operator, KinesisShardSource.MILLIS_BEHIND_LATEST));
        assertThat(names.path("parts_collapsed").asText())
                .as("the committer's counter")
                .isEqualTo(prometheusName(operator, "partsCollapsed"));
        assertThat(Files.readString(sinkSource("SnapshotCommitter.java")))
                .contains("counter(\"partsCollapsed\")", "counter(\"partsCreated\")");
        assertThat(names.path("complete_through").asText())
                .as("the completion pointer's gauge")
                .isEqualTo(prometheusName(operator, "completeThroughMillis"));
        assertThat(Files.readString(sinkSource("PointerRecorder.java")))
                .contains("gauge(\"completeThroughMillis\"");
        // The dead-letter rate: the input rate of the operator the dead letters' sink assembles
        // them in, renamed by the scrape.
        assertThat(local("prometheus_scrape_config").asText())
                .contains(
                        prometheusName(operator, MetricNames.IO_NUM_RECORDS_IN_RATE)
                                + ";${local.dead_letter_assembler}");
        assertThat(Files.readString(sinkSource("CanonicalSnapshotSinkBuilder.java")))
                .contains("\"" + local("dead_letter_assembler").asText() + "\"");
    }

    @Test
    void alarmsCoverTheJobTheStreamTheOutputAndTheDeployments() throws Exception {
        JsonNode rules = resource("aws_cloudwatch_event_rule", "deployment").path("for_each");
        assertThat(rules.path("failed").asText()).isEqualTo("SERVICE_DEPLOYMENT_FAILED");
        assertThat(rules.path("started").asText()).isEqualTo("SERVICE_DEPLOYMENT_IN_PROGRESS");
        assertThat(
                        resource("aws_cloudwatch_event_target", "deployment_failed")
                                .path("arn")
                                .asText())
                .contains("alarm_topic_arn");
        assertThat(
                        resource("aws_cloudwatch_event_target", "deployment_started")
                                .path("arn")
                                .asText())
                .contains("aws_sfn_state_machine.deployment_watch");
        assertThat(
                        resource("aws_sfn_state_machine", "deployment_watch")
                                .path("definition")
                                .asText())
                .contains("var.deployment_alarm_minutes * 60", "IN_PROGRESS", "sns:publish");

        JsonNode notRunning = resource("aws_cloudwatch_metric_alarm", "job_not_running");
        assertThat(notRunning.path("metric_name").asText())
                .isEqualTo("${local.flink_metrics.running_time}");
        assertThat(notRunning.path("comparison_operator").asText()).isEqualTo("LessThanThreshold");
        assertThat(notRunning.path("treat_missing_data").asText())
                .as("a first deploy pages nobody; a JobManager gone silent does (below)")
                .isEqualTo("missing");
        assertThat(notRunning.path("insufficient_data_actions").toString())
                .contains("${local.alarm_topic_arn}");
        assertThat(notRunning.path("evaluation_periods").asText())
                .as("derived from the JobManager replacement's worst case unless given")
                .isEqualTo("${local.job_down_alarm_minutes}");

        JsonNode restarting = resource("aws_cloudwatch_metric_alarm", "job_restarting");
        assertThat(queries(restarting))
                .containsEntry("restarts", "${local.flink_metrics.restarts}")
                .containsEntry("new_restarts", "DIFF(restarts)");
        assertThat(restarting.path("datapoints_to_alarm").asText())
                .isEqualTo("${var.restart_alarm_count}");
        assertThat(restarting.path("evaluation_periods").asText())
                .isEqualTo("${var.restart_alarm_minutes}");

        // Values that must keep moving: the newest checkpoint's id, the completion pointer.
        JsonNode stalled = resource("aws_cloudwatch_metric_alarm", "stalled");
        assertThat(queries(stalled))
                .containsEntry("value", "${each.value.metric}")
                .containsEntry("moved", "DIFF(value)");
        assertThat(stalled.path("comparison_operator").asText())
                .isEqualTo("LessThanOrEqualToThreshold");
        assertThat(stalled.path("evaluation_periods").asText()).isEqualTo("${each.value.minutes}");
        JsonNode stalls = local("stalls");
        assertThat(stalls.path("checkpoints").path("metric").asText())
                .isEqualTo("${local.flink_metrics.last_checkpoint_id}");
        assertThat(stalls.path("checkpoints").path("minutes").asText())
                .isEqualTo("${var.checkpoint_alarm_minutes}");
        assertThat(stalls.path("pointer").path("metric").asText())
                .isEqualTo("${local.flink_metrics.complete_through}");
        JsonNode deadLetters = resource("aws_cloudwatch_metric_alarm", "dead_letters");
        assertThat(deadLetters.path("metric_name").asText())
                .isEqualTo("${local.dead_letter_rate_metric}");
        for (JsonNode alarm : List.of(restarting, stalled, deadLetters)) {
            assertThat(alarm.path("treat_missing_data").asText())
                    .as("a silent JobManager is the job-not-running alarm's page alone")
                    .isEqualTo("notBreaching");
        }
        assertThat(stalled.path("for_each").asText())
                .isEqualTo("${var.metrics ? local.stalls : {}}");
        for (JsonNode alarm : List.of(notRunning, restarting, deadLetters)) {
            assertThat(alarm.path("count").asText()).isEqualTo("${var.metrics ? 1 : 0}");
        }
        for (JsonNode alarm : List.of(notRunning, restarting, stalled, deadLetters)) {
            assertThat(alarm.toString()).contains("\"cluster\":\"${var.name}\"");
        }

        // This job's own readers, not the stream's oldest consumer (a replay beside it would hide
        // it).
        JsonNode lag = resource("aws_cloudwatch_metric_alarm", "stream_lag");
        assertThat(lag.path("namespace").asText()).isEqualTo("${local.metric_namespace}");
        assertThat(lag.path("metric_name").asText())
                .isEqualTo("${local.flink_metrics.millis_behind_latest}");
        assertThat(lag.path("dimensions").path("cluster").asText()).isEqualTo("${var.name}");
        assertThat(lag.path("threshold").asText())
                .isEqualTo("${var.iterator_age_alarm_minutes * 60 * 1000}");
        assertThat(
                        resource("aws_cloudwatch_metric_alarm", "read_throttled")
                                .path("metric_name")
                                .asText())
                .isEqualTo("ReadProvisionedThroughputExceeded");

        // One committer log line per increment of partsCollapsed.
        JsonNode collapsedFilter = resource("aws_cloudwatch_log_metric_filter", "collapsed");
        assertThat(collapsedFilter.path("pattern").asText())
                .isEqualTo("\"Collapsed\" \"into the existing object\"");
        assertThat(collapsedFilter.path("log_group_name").asText()).contains("[\"taskmanager\"]");
        assertThat(Files.readString(sinkSource("SnapshotCommitter.java")))
                .contains("\"Collapsed {} into the existing object");
        // Counted and charted, never paged: a restart's recomputed windows collapse by design.
        String collapsedMetric =
                collapsedFilter.path("metric_transformation").get(0).path("name").asText();
        assertThat(resources("aws_cloudwatch_metric_alarm").toString())
                .doesNotContain(collapsedMetric);
        assertThat(local("dashboard_widgets").toString()).contains(collapsedMetric);

        assertThat(
                        resource("aws_cloudwatch_log_metric_filter", "divergence")
                                .path("pattern")
                                .asText())
                .contains("DIVERGENCE at");
        JsonNode divergence = resource("aws_cloudwatch_metric_alarm", "divergence");
        assertThat(divergence.path("comparison_operator").asText())
                .isEqualTo("GreaterThanThreshold");
        assertThat(divergence.path("threshold").asInt()).isZero();

        for (JsonNode alarm : resources("aws_cloudwatch_metric_alarm")) {
            assertThat(alarm.get(0).path("alarm_actions").toString())
                    .contains("${local.alarm_topic_arn}");
        }
        for (String kind :
                List.of(
                        "aws_kinesis_stream",
                        "aws_cloudwatch_log_group",
                        "aws_service_discovery_private_dns_namespace",
                        "aws_ecs_cluster")) {
            assertThat(resources(kind).size()).as(kind).isPositive();
        }
    }

    // --- IAM and the bucket ------------------------------------------------------------------

    /**
     * The roles' documents and the bucket policy, as rendered, are the module's Terraform test
     * (tests/security.tftest.hcl, tests/plan.tftest.hcl); what is checked here is that the keys
     * they name are the ones the sink and the command line write.
     */
    @Test
    void thePoliciesNameTheKeysTheSinkAndTheCommandLineWrite() throws IOException {
        String iam = Files.readString(ROOT.resolve("deploy/terraform/" + MODULE + "iam.tf"));
        String snapshots = "${local.bucket_arn}/${var.snapshot_prefix}";
        assertThat(iam)
                .as("the job deletes staged copies and old progress entries, nothing else there")
                .contains(snapshots + ObjectKeys.STAGING_PREFIX + "*", snapshots + "*/_progress/*")
                .as("the lifecycle role: promote, an audit's acknowledgement, the store probe")
                .contains(
                        snapshots + "*/" + ObjectKeys.CURRENT_FILE,
                        snapshots + "*/" + ObjectKeys.PROMOTED_DIRECTORY + "*",
                        snapshots + ObjectKeys.AUDIT_PREFIX + "acknowledged/*",
                        snapshots + ObjectKeys.CONFORMANCE_PREFIX + "*");

        // The exempt keys of the write-once rule are the sink's own: staged copies, the
        // completion and current pointers.
        assertThat(local("staged_copies").asText())
                .endsWith("/${var.snapshot_prefix}" + ObjectKeys.STAGING_PREFIX + "*");
        assertThat(texts(local("pointers")))
                .containsExactlyInAnyOrder(
                        "${local.bucket_arn}/${var.snapshot_prefix}*/" + ObjectKeys.PROGRESS_FILE,
                        "${local.bucket_arn}/${var.snapshot_prefix}*/" + ObjectKeys.CURRENT_FILE);
        assertThat(local("flink_state").asText()).endsWith("/${var.checkpoint_prefix}*");
        assertThat(variable("snapshot_prefix").path("default").asText())
                .isNotEqualTo(variable("checkpoint_prefix").path("default").asText());
    }

    @Test
    void theBucketIsPrivateEncryptedTlsOnlyAndCleansUpUploadsAndCheckpoints() {
        JsonNode block = resource("aws_s3_bucket_public_access_block", "snapshots");
        for (String flag :
                List.of(
                        "block_public_acls",
                        "block_public_policy",
                        "ignore_public_acls",
                        "restrict_public_buckets")) {
            assertThat(block.path(flag).asBoolean()).as(flag).isTrue();
        }
        assertThat(
                        resource("aws_s3_bucket_versioning", "snapshots")
                                .path("versioning_configuration")
                                .get(0)
                                .path("status")
                                .asText())
                .isEqualTo("Enabled");
        assertThat(
                        resource("aws_s3_bucket_server_side_encryption_configuration", "snapshots")
                                .toString())
                .contains("aws:kms");

        // The rules in the S3 API's shape: the resource renders them, and so does bucket_setup.
        JsonNode rules = local("lifecycle_rules_always");
        assertThat(rules.findValues("DaysAfterInitiation"))
                .extracting(JsonNode::asInt)
                .containsExactly(1);
        // Staged copies outlive the longest outage the job recovers from: the stream's retention,
        // plus a day.
        JsonNode staging = rule(rules, "expire-staged-copies");
        assertThat(staging.path("Filter").path("Prefix").asText())
                .isEqualTo("${var.snapshot_prefix}_staging/");
        assertThat(staging.path("Expiration").path("Days").asText())
                .isEqualTo("${local.staging_retention_days}");
        assertThat(local("staging_retention_days").asText())
                .isEqualTo("${ceil(var.kinesis_retention_hours / 24) + 1}");
        // Subsumed checkpoints leave noncurrent versions and delete markers in a versioned bucket.
        JsonNode churn = rule(rules, "expire-checkpoint-churn");
        assertThat(churn.path("Filter").path("Prefix").asText())
                .isEqualTo("${var.checkpoint_prefix}");
        assertThat(churn.path("NoncurrentVersionExpiration").path("NoncurrentDays").asText())
                .isEqualTo("${var.checkpoint_noncurrent_days}");
        assertThat(churn.path("Expiration").path("ExpiredObjectDeleteMarker").asBoolean()).isTrue();
        // The pointer log's trimming and the probes' cleanup leave delete markers: they expire.
        JsonNode noncurrent = rule(rules, "expire-noncurrent-versions");
        assertThat(noncurrent.path("Filter").size()).as("the whole bucket").isZero();
        assertThat(noncurrent.path("Expiration").path("ExpiredObjectDeleteMarker").asBoolean())
                .isTrue();
        JsonNode probes = rule(rules, "expire-conformance-probes");
        assertThat(probes.path("Filter").path("Prefix").asText())
                .isEqualTo("${var.snapshot_prefix}_conformance/");
        JsonNode collapses = rule(rules, "expire-collapse-records");
        assertThat(collapses.path("Filter").path("Prefix").asText())
                .isEqualTo("${var.snapshot_prefix}_collapsed/");
        assertThat(rules.findValues("Days"))
                .as(
                        "no other expiry of current objects than staged copies, probes, collapse records")
                .hasSize(3);
        assertThat(variable("expire_prefix").path("default").asText())
                .as("nothing expires by default")
                .isEmpty();
        assertThat(variable("allow_snapshot_expiry").path("default").asBoolean()).isFalse();
    }

    // --- the example's network ---------------------------------------------------------------

    @Test
    void theExampleReachesAwsWithoutPublicAddresses() {
        JsonNode example = terraform.path(EXAMPLE);
        JsonNode egress = example.path("variable").path("egress").get(0);
        assertThat(egress.path("default").asText()).isEqualTo("endpoints");
        assertThat(egress.path("validation").get(0).path("condition").asText())
                .isEqualTo("${contains([\"endpoints\", \"nat\"], var.egress)}");
        JsonNode locals = example.path("locals").get(0);
        assertThat(texts(locals.path("endpoint_services")))
                .contains("ecr.api", "ecr.dkr", "kinesis-streams", "logs", "monitoring", "sts");
        assertThat(locals.path("interface_endpoints").asText())
                .isEqualTo("${local.nat ? [] : local.endpoint_services}");

        JsonNode endpoints = example.path("resource").path("aws_vpc_endpoint");
        assertThat(endpoints.path("s3").get(0).path("vpc_endpoint_type").asText())
                .isEqualTo("Gateway");
        JsonNode interfaces = endpoints.path("interface").get(0);
        assertThat(interfaces.path("vpc_endpoint_type").asText()).isEqualTo("Interface");
        assertThat(interfaces.path("private_dns_enabled").asBoolean()).isTrue();
        assertThat(interfaces.path("security_group_ids").toString())
                .contains("aws_security_group.endpoints");
        JsonNode https =
                example.path("resource")
                        .path("aws_vpc_security_group_ingress_rule")
                        .path("endpoints")
                        .get(0);
        assertThat(https.path("from_port").asInt()).isEqualTo(443);
        assertThat(https.path("to_port").asInt()).isEqualTo(443);

        assertThat(
                        example.path("resource")
                                .path("aws_nat_gateway")
                                .path("this")
                                .get(0)
                                .path("count")
                                .asText())
                .isEqualTo("${local.nat ? 1 : 0}");
        assertThat(
                        example.path("resource")
                                .path("aws_route")
                                .path("private_to_nat")
                                .get(0)
                                .path("nat_gateway_id")
                                .asText())
                .contains("aws_nat_gateway.this");
        assertThat(
                        example.path("resource")
                                .path("aws_ecr_pull_through_cache_rule")
                                .path("ecr_public")
                                .get(0)
                                .path("upstream_registry_url")
                                .asText())
                .as("ECR Public has no VPC endpoint")
                .isEqualTo("public.ecr.aws");

        JsonNode module = example.path("module").path("snapshots").get(0);
        assertThat(module.path("subnet_ids").asText()).isEqualTo("${aws_subnet.private[*].id}");
        assertThat(module.path("spare_taskmanagers").asInt()).isEqualTo(1);
        assertThat(module.path("network_ready").asText()).isEqualTo("${local.network_ready}");
        assertThat(example.path("locals").findValue("network_ready").asText())
                .contains("aws_route.private_to_nat", "aws_vpc_endpoint.interface");
        assertThat(resource("aws_ecs_service", "flink").path("depends_on").toString())
                .as("the services wait for the way out and for the execution role's policies")
                .contains("terraform_data.network_ready", "aws_iam_role_policy.execution");
    }

    @Test
    void everyInputAndOutputIsDocumented() throws IOException {
        String readme = Files.readString(ROOT.resolve("deploy/terraform/README.md"));
        JsonNode module = terraform.path(MODULE + "variables.tf").path("variable");
        module.fieldNames()
                .forEachRemaining(
                        name ->
                                assertThat(readme)
                                        .as("input %s in the README", name)
                                        .contains("`" + name + "`"));
        terraform
                .path(MODULE + "outputs.tf")
                .path("output")
                .fieldNames()
                .forEachRemaining(
                        name ->
                                assertThat(readme)
                                        .as("output %s in the README", name)
                                        .contains("`" + name + "`"));
    }

    // --- helpers -----------------------------------------------------------------------------

    /**
     * The official image's entrypoint strips every space from each line of FLINK_PROPERTIES, makes
     * every line a setting, and nests the dotted keys into config.yaml, where a key that is a
     * prefix of another breaks the file.
     */
    private static void assertFlinkPropertiesSurviveTheEntrypoint(List<String> properties) {
        List<String> keys = new ArrayList<>();
        for (String line : properties) {
            assertThat(line).as("one 'key: value' per line").matches("[a-zA-Z0-9._-]+: \\S+");
            keys.add(line.substring(0, line.indexOf(':')));
        }
        for (String key : keys) {
            assertThat(keys).as("a key under %s", key).noneMatch(k -> k.startsWith(key + "."));
        }
    }

    /** Docker's .dockerignore rule: the last pattern that matches the path or a parent decides. */
    private static boolean dockerIgnores(List<String> patterns, String path) {
        boolean ignored = false;
        for (String raw : patterns) {
            String line = raw.trim();
            if (line.isEmpty() || line.startsWith("#")) {
                continue;
            }
            boolean exception = line.startsWith("!");
            Pattern pattern = dockerPattern(exception ? line.substring(1) : line);
            for (String p = path;
                    p != null;
                    p = p.contains("/") ? p.substring(0, p.lastIndexOf('/')) : null) {
                if (pattern.matcher(p).matches()) {
                    ignored = !exception;
                    break;
                }
            }
        }
        return ignored;
    }

    private static Pattern dockerPattern(String glob) {
        StringBuilder regex = new StringBuilder();
        String g = glob.startsWith("/") ? glob.substring(1) : glob;
        for (int i = 0; i < g.length(); i++) {
            char c = g.charAt(i);
            if (g.startsWith("**/", i)) {
                regex.append("(.*/)?");
                i += 2;
            } else if (g.startsWith("**", i)) {
                regex.append(".*");
                i++;
            } else if (c == '*') {
                regex.append("[^/]*");
            } else if (c == '?') {
                regex.append("[^/]");
            } else {
                regex.append(Pattern.quote(String.valueOf(c)));
            }
        }
        return Pattern.compile(regex.toString());
    }

    private static void assertCopySourcesExist(List<String> dockerfile, Path context) {
        for (String line : dockerfile) {
            if (line.startsWith("COPY ")) {
                String[] words = withThisBuildsVersion(line).split(" +");
                for (int i = 1; i < words.length - 1; i++) {
                    if (!words[i].startsWith("--")) {
                        assertThat(context.resolve(words[i]))
                                .as("the build context has %s", words[i])
                                .exists();
                    }
                }
            }
        }
    }

    private static String copySource(String copyLine) {
        String[] words = withThisBuildsVersion(copyLine).split(" +");
        return words[words.length - 2];
    }

    /**
     * The jars' names carry the line's version, a build argument of the Dockerfile: this build's.
     */
    private static String withThisBuildsVersion(String dockerfileLine) {
        return dockerfileLine.replace("${SNAPSHOTS_VERSION}", BuildVersion.VERSION);
    }

    /**
     * As Flink's Prometheus reporter names a metric: what it does not allow in a name becomes "_".
     */
    private static String prometheusName(AbstractMetricGroup<?> group, String metric) {
        CharacterFilter prometheus = s -> s.replaceAll("[^a-zA-Z0-9:_]", "_");
        return "flink_"
                + group.getLogicalScope(prometheus, '_')
                + "_"
                + prometheus.filterCharacters(metric);
    }

    /** Flink's name of the time in RUNNING (metrics.job.status.enable's default, CURRENT_TIME). */
    private static String runningTimeMetric() throws Exception {
        Method base =
                JobStatusMetrics.class.getDeclaredMethod("getBaseMetricName", JobStatus.class);
        base.setAccessible(true);
        Method current =
                StateTimeMetric.class.getDeclaredMethod("getCurrentTimeMetricName", String.class);
        current.setAccessible(true);
        return (String) current.invoke(null, base.invoke(null, JobStatus.RUNNING));
    }

    /**
     * Flink's own name of the job's last checkpoint's gauge, where its line keeps it: Flink 2 moved
     * it from {@code CheckpointStatsTracker}, now an interface, to its default implementation.
     */
    private static String lastCheckpointIdMetric() throws Exception {
        String field = "LATEST_COMPLETED_CHECKPOINT_ID_METRIC";
        try {
            return constant(
                    Class.forName(
                            "org.apache.flink.runtime.checkpoint.DefaultCheckpointStatsTracker"),
                    field);
        } catch (ClassNotFoundException flink120) {
            return constant(
                    Class.forName("org.apache.flink.runtime.checkpoint.CheckpointStatsTracker"),
                    field);
        }
    }

    private static String constant(Class<?> type, String name) throws Exception {
        Field field = type.getDeclaredField(name);
        field.setAccessible(true);
        return (String) field.get(null);
    }

    private static Path sinkSource(String file) {
        return ROOT.resolve("sinks/core/src/main/java/dev/snapshots/sink/" + file);
    }

    /**
     * A container's environment: a list of {name, value}, or, where it is an expression (the
     * JobManager's adds SNAPSHOTS_FROM_SAVEPOINT only when set), the pairs in its source text.
     */
    private static Map<String, String> environment(JsonNode container) {
        Map<String, String> env = new LinkedHashMap<>();
        JsonNode environment = container.path("environment");
        if (environment.isTextual()) {
            Matcher pair =
                    Pattern.compile("\\{ *name *= *\"([A-Z_]+)\", *value *= *([^}]+?) *}")
                            .matcher(environment.asText());
            while (pair.find()) {
                String value = pair.group(2);
                env.put(
                        pair.group(1),
                        value.startsWith("\"")
                                ? value.substring(1, value.length() - 1)
                                : "${" + value + "}");
            }
        } else {
            environment.forEach(e -> env.put(e.path("name").asText(), e.path("value").asText()));
        }
        return env;
    }

    /** Metric queries of an alarm by id: the metric's name, or the expression. */
    private static Map<String, String> queries(JsonNode alarm) {
        Map<String, String> queries = new LinkedHashMap<>();
        alarm.path("metric_query")
                .forEach(
                        q ->
                                queries.put(
                                        q.path("id").asText(),
                                        q.has("expression")
                                                ? q.path("expression").asText()
                                                : q.path("metric")
                                                        .get(0)
                                                        .path("metric_name")
                                                        .asText()));
        return queries;
    }

    private static JsonNode rule(JsonNode rules, String id) {
        return StreamSupport.stream(rules.spliterator(), false)
                .filter(r -> r.path("ID").asText().equals(id))
                .findFirst()
                .orElseThrow(() -> new AssertionError("no lifecycle rule " + id));
    }

    private static List<String> texts(JsonNode array) {
        List<String> texts = new ArrayList<>();
        array.forEach(n -> texts.add(n.asText()));
        return texts;
    }

    private static List<String> lines(String text) {
        return text.lines().map(String::strip).filter(l -> !l.isEmpty()).toList();
    }

    private static List<String> fieldNames(JsonNode node) {
        List<String> names = new ArrayList<>();
        node.fieldNames().forEachRemaining(names::add);
        return names;
    }

    private static JsonNode resources(String type) {
        for (JsonNode file : terraform) {
            if (file.path("resource").has(type)) {
                return file.path("resource").path(type);
            }
        }
        return new ObjectMapper().createObjectNode();
    }

    private static JsonNode resource(String type, String name) {
        JsonNode r = resources(type).path(name);
        assertThat(r.isArray()).as("resource %s.%s exists", type, name).isTrue();
        return r.get(0);
    }

    /** A local of the module (the example's are read from its file). */
    private static JsonNode local(String name) {
        for (JsonNode file : moduleFiles()) {
            for (JsonNode block : file.path("locals")) {
                if (block.has(name)) {
                    return block.path(name);
                }
            }
        }
        throw new AssertionError("no local " + name);
    }

    private static List<JsonNode> moduleFiles() {
        List<JsonNode> files = new ArrayList<>();
        terraform
                .fieldNames()
                .forEachRemaining(
                        f -> {
                            if (f.startsWith(MODULE)) {
                                files.add(terraform.path(f));
                            }
                        });
        return files;
    }

    private static JsonNode variable(String name) {
        return terraform.path(MODULE + "variables.tf").path("variable").path(name).get(0);
    }

    private static int lastIndexStartingWith(List<String> lines, String prefix) {
        int last = -1;
        for (int i = 0; i < lines.size(); i++) {
            if (lines.get(i).startsWith(prefix)) {
                last = i;
            }
        }
        return last;
    }

    /** The stand-ins' processes still running, after a grace of 2 s for them to end. */
    private static List<Long> awaitEnded(Path pids) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(2);
        List<Long> running;
        do {
            running =
                    standIns(pids).stream()
                            .filter(
                                    pid ->
                                            ProcessHandle.of(pid)
                                                    .map(ProcessHandle::isAlive)
                                                    .orElse(false))
                            .toList();
            Thread.sleep(50);
        } while (!running.isEmpty() && System.nanoTime() < deadline);
        return running;
    }

    private static List<Long> standIns(Path pids) throws IOException {
        return Files.exists(pids)
                ? lines(Files.readString(pids)).stream().map(Long::valueOf).toList()
                : List.of();
    }

    private static String run(Path dir, String... command) throws Exception {
        Path log = Files.createTempFile("deploy-check", ".out");
        Path err = Files.createTempFile("deploy-check", ".err");
        Process p;
        try {
            p =
                    new ProcessBuilder(command)
                            .directory(dir.toFile())
                            .redirectOutput(log.toFile())
                            .redirectError(err.toFile())
                            .start();
        } catch (IOException e) {
            throw new AssertionError(
                    "'" + command[0] + "' is needed for this check (.ci/run installs it)", e);
        }
        assertThat(p.waitFor(5, TimeUnit.MINUTES))
                .as("%s finished", String.join(" ", command))
                .isTrue();
        String out = Files.readString(log, StandardCharsets.UTF_8);
        assertThat(p.exitValue())
                .as(
                        "%s: %s%s",
                        String.join(" ", command),
                        out,
                        Files.readString(err, StandardCharsets.UTF_8))
                .isZero();
        return out;
    }
}
