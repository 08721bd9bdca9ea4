package dev.snapshots.harness;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.StreamSupport;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * What can be checked of the deployment here, where there is no Docker engine and no AWS account:
 * docker-compose.yml validates with docker-compose itself, the image's files are consistent, and
 * the Terraform parses (with @cdktf/hcl2json) into resources that have the properties the
 * deployment depends on.
 */
class DeployFilesITCase {
    private static final Path ROOT =
            Path.of(System.getProperty("snapshots.root")).toAbsolutePath().normalize();
    private static JsonNode terraform;

    @BeforeAll
    static void parseTerraform() throws Exception {
        Path parse = ROOT.resolve("deploy/terraform/parse");
        if (!Files.isDirectory(parse.resolve("node_modules/@cdktf/hcl2json"))) {
            run(parse, "npm", "ci", "--no-audit", "--no-fund");
        }
        terraform = new ObjectMapper().readTree(run(parse, "node", "parse.js", ".."));
    }

    @Test
    void composeFileValidates() throws Exception {
        run(ROOT, "docker-compose", "-f", "docker-compose.yml", "config", "-q");
        String compose = Files.readString(ROOT.resolve("docker-compose.yml"));
        assertThat(compose)
                .contains(
                        "jobmanager:",
                        "taskmanager-1:",
                        "taskmanager-2:",
                        "minio:",
                        "create-bucket:",
                        "kinesis:",
                        "producer:",
                        "SNAPSHOTS_JOB_ARGS");
    }

    @Test
    void theImageRunsAsFlinkWithThePluginAndTheJob() throws Exception {
        List<String> lines = Files.readAllLines(ROOT.resolve("deploy/docker/Dockerfile"));
        assertThat(lines).contains("FROM flink:1.20.1-java17", "USER flink");
        assertThat(String.join("\n", lines))
                .contains("/opt/flink/plugins/s3-fs-presto", "/opt/flink/usrlib/snapshots-job.jar");
        for (String line : lines) {
            if (line.startsWith("COPY ")) {
                String[] words = line.split(" +");
                assertThat(ROOT.resolve(words[words.length - 2]))
                        .as("the build context has %s", line)
                        .exists();
            }
        }
        assertThat(lines.indexOf("USER flink"))
                .as("no root after the last COPY")
                .isGreaterThan(lastIndexStartingWith(lines, "COPY"));
        run(ROOT, "bash", "-n", "deploy/docker/snapshots-entrypoint.sh");
    }

    @Test
    void servicesDeployWithoutGapsAndRollBack() {
        assertThat(local("tasks").path("jobmanager").path("count").asInt()).isEqualTo(1);
        assertThat(local("tasks").path("taskmanager").path("count").asText())
                .isEqualTo("${var.taskmanager_count}");
        JsonNode s = resource("aws_ecs_service", "flink");
        assertThat(s.path("for_each").asText())
                .as("one service per task kind")
                .isEqualTo("${local.tasks}");
        assertThat(s.path("deployment_minimum_healthy_percent").asInt()).isEqualTo(100);
        assertThat(s.path("deployment_maximum_percent").asInt()).isEqualTo(200);
        assertThat(s.path("deployment_circuit_breaker").get(0).path("enable").asBoolean()).isTrue();
        assertThat(s.path("deployment_circuit_breaker").get(0).path("rollback").asBoolean())
                .isTrue();
        assertThat(s.path("launch_type").asText()).isEqualTo("FARGATE");
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
    void tasksGetUpTo120SecondsToStopAndHaveHealthChecks() {
        JsonNode timeout = variable("stop_timeout_seconds");
        assertThat(timeout.path("default").asInt()).isEqualTo(120);
        assertThat(timeout.path("validation").get(0).path("condition").asText()).contains("<= 120");
        JsonNode jobmanager = local("containers").path("jobmanager").get(0);
        assertThat(jobmanager.path("stopTimeout").asText())
                .isEqualTo("${var.stop_timeout_seconds}");
        assertThat(jobmanager.path("healthCheck").asText())
                .contains("curl -sf http://localhost:8081/overview");
        String taskmanager = local("containers").path("taskmanager").asText();
        assertThat(taskmanager)
                .contains(
                        "stopTimeout      = var.stop_timeout_seconds", "healthCheck      = merge(");
        assertThat(taskmanager)
                .as("the scale-in protection sidecar")
                .contains("command          = [\"protect\"]", "essential        = false");
    }

    @Test
    void theBucketIsPrivateEncryptedTlsOnlyAndCleansUpUploads() {
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

        JsonNode tls = policy("tls_only").get(0);
        assertThat(tls.path("effect").asText()).isEqualTo("Deny");
        assertThat(tls.path("condition").get(0).path("variable").asText())
                .isEqualTo("aws:SecureTransport");
        assertThat(tls.path("condition").get(0).path("values").get(0).asText()).isEqualTo("false");

        JsonNode rules =
                resource("aws_s3_bucket_lifecycle_configuration", "snapshots").path("rule");
        assertThat(rules.findValues("days_after_initiation"))
                .extracting(JsonNode::asInt)
                .containsExactly(1);
        // Staged copies outlive the longest outage the job recovers from: the stream's retention,
        // plus a day.
        JsonNode staging =
                StreamSupport.stream(rules.spliterator(), false)
                        .filter(r -> r.path("id").asText().equals("expire-staged-copies"))
                        .findFirst()
                        .orElseThrow();
        assertThat(staging.path("filter").get(0).path("prefix").asText())
                .isEqualTo("${var.snapshot_prefix}_staging/");
        assertThat(staging.path("expiration").get(0).path("days").asText())
                .isEqualTo("${local.staging_retention_days}");
        assertThat(local("staging_retention_days").asText())
                .isEqualTo("${ceil(var.kinesis_retention_hours / 24) + 1}");
        assertThat(rules.findValues("expiration")).as("no other expiry").hasSize(1);
        assertThat(variable("expire_prefix").path("default").asText())
                .as("nothing expires by default")
                .isEmpty();
        assertThat(variable("allow_snapshot_expiry").path("default").asBoolean()).isFalse();
    }

    @Test
    void theJobsRoleIsLeastPrivilegeAndCannotDeleteSnapshots() {
        List<JsonNode> allowed = new ArrayList<>();
        for (JsonNode file : terraform) {
            file.path("data")
                    .path("aws_iam_policy_document")
                    .forEach(
                            doc ->
                                    doc.forEach(
                                            d ->
                                                    d.path("statement")
                                                            .forEach(
                                                                    st -> {
                                                                        if (!st.path("effect")
                                                                                .asText("Allow")
                                                                                .equals("Deny")) {
                                                                            allowed.add(st);
                                                                        }
                                                                    })));
        }
        assertThat(allowed).hasSizeGreaterThan(5);
        for (JsonNode st : allowed) {
            for (JsonNode action : st.path("actions")) {
                assertThat(action.asText())
                        .as("statement %s", st.path("sid"))
                        .isNotIn("*", "s3:*")
                        .doesNotEndWith(":*");
            }
        }
        for (JsonNode st : policy("task")) {
            List<String> actions = new ArrayList<>();
            st.path("actions").forEach(a -> actions.add(a.asText()));
            if (actions.contains("s3:DeleteObject")) {
                st.path("resources")
                        .forEach(
                                r ->
                                        assertThat(r.asText())
                                                .as("DeleteObject in %s", st.path("sid"))
                                                .satisfiesAnyOf(
                                                        arn ->
                                                                assertThat(arn)
                                                                        .contains(
                                                                                "${var.checkpoint_prefix}*"),
                                                        arn ->
                                                                assertThat(arn)
                                                                        .endsWith(
                                                                                "${var.snapshot_prefix}_staging/*"),
                                                        arn ->
                                                                assertThat(arn)
                                                                        .endsWith(
                                                                                "${var.snapshot_prefix}*/_progress/*")));
            }
        }
        assertThat(variable("snapshot_prefix").path("default").asText())
                .isNotEqualTo(variable("checkpoint_prefix").path("default").asText());
    }

    @Test
    void alarmsCoverFailedAndHangingDeploymentsAndDivergence() {
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
        assertThat(
                        resource("aws_cloudwatch_log_metric_filter", "divergence")
                                .path("pattern")
                                .asText())
                .contains("DIVERGENCE at");
        JsonNode alarm = resource("aws_cloudwatch_metric_alarm", "divergence");
        assertThat(alarm.path("comparison_operator").asText()).isEqualTo("GreaterThanThreshold");
        assertThat(alarm.path("threshold").asInt()).isZero();
        for (String kind :
                List.of(
                        "aws_kinesis_stream",
                        "aws_cloudwatch_log_group",
                        "aws_service_discovery_private_dns_namespace",
                        "aws_ecs_cluster")) {
            assertThat(resources(kind).size()).as(kind).isPositive();
        }
    }

    @Test
    void everyInputAndOutputIsDocumented() throws IOException {
        String readme = Files.readString(ROOT.resolve("deploy/terraform/README.md"));
        JsonNode module = terraform.path("modules/flink-ecs/variables.tf").path("variable");
        module.fieldNames()
                .forEachRemaining(
                        name ->
                                assertThat(readme)
                                        .as("input %s in the README", name)
                                        .contains("`" + name + "`"));
        terraform
                .path("modules/flink-ecs/outputs.tf")
                .path("output")
                .fieldNames()
                .forEachRemaining(
                        name ->
                                assertThat(readme)
                                        .as("output %s in the README", name)
                                        .contains("`" + name + "`"));
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

    private static JsonNode local(String name) {
        for (JsonNode file : terraform) {
            for (JsonNode block : file.path("locals")) {
                if (block.has(name)) {
                    return block.path(name);
                }
            }
        }
        throw new AssertionError("no local " + name);
    }

    private static JsonNode policy(String name) {
        for (JsonNode file : terraform) {
            JsonNode doc = file.path("data").path("aws_iam_policy_document").path(name);
            if (doc.isArray()) {
                return doc.get(0).path("statement");
            }
        }
        throw new AssertionError("no policy document " + name);
    }

    private static JsonNode variable(String name) {
        return terraform.path("modules/flink-ecs/variables.tf").path("variable").path(name).get(0);
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

    private static String run(Path dir, String... command) throws Exception {
        Path log = Files.createTempFile("deploy-check", ".out");
        Process p;
        try {
            p =
                    new ProcessBuilder(command)
                            .directory(dir.toFile())
                            .redirectErrorStream(true)
                            .redirectOutput(log.toFile())
                            .start();
        } catch (IOException e) {
            throw new AssertionError(
                    "'" + command[0] + "' is needed for this check (.ci/run installs it)", e);
        }
        assertThat(p.waitFor(5, TimeUnit.MINUTES))
                .as("%s finished", String.join(" ", command))
                .isTrue();
        String out = Files.readString(log, StandardCharsets.UTF_8);
        assertThat(p.exitValue()).as("%s: %s", String.join(" ", command), out).isZero();
        return out;
    }
}
