package dev.snapshots.harness;

import static java.util.Map.entry;
import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Every command and query in the README is run by a test: each line of a {@code bash} block, and
 * each {@code sql} block (by its first line), must be listed here with the tests that run it. A
 * command added to the README without a test fails this one; so does an entry whose command left
 * the README, or whose test is gone.
 */
class ReadmeCommandsTest {
    private static final Path ROOT = Path.of(System.getProperty("snapshots.root"));

    /** A README command or query, and what runs it (test classes, or .ci/run). */
    private static final Map<String, List<String>> RUN_BY =
            Map.ofEntries(
                    entry("./snapshots demo", List.of(".ci/run", "SnapshotJobITCase")),
                    entry("./mvnw -B verify", List.of(".ci/run")),
                    // with the script's events and store pointed at the test's
                    entry(
                            "./snapshots run --sql examples/orders/orders.sql",
                            List.of("OrdersPipelineITCase")),
                    // LocalCluster.up and down, which the command calls
                    entry("./snapshots cluster up", List.of("ClusterITCase")),
                    entry(
                            "./snapshots submit --rest REST_URL --jar"
                                    + " job/pipeline/target/snapshots-pipeline-0.3.0-1.20-SNAPSHOT-job.jar"
                                    + " --store s3://snapshots/out --endpoint S3_URL",
                            List.of("ClusterITCase")),
                    entry("./snapshots cluster down", List.of("ClusterITCase")),
                    entry(
                            "./snapshots submit --rest REST_URL --jar"
                                    + " job/pipeline/target/snapshots-pipeline-0.3.0-1.20-SNAPSHOT-job.jar"
                                    + " --sql orders.sql",
                            List.of("SqlOnClusterITCase")),
                    // the job jar as "your own", with its flags as its own arguments
                    entry(
                            "./snapshots submit --rest REST_URL --jar my-job.jar --pipeline orders"
                                    + " --job-version 1 --store s3://bucket/out -- --my-flag value",
                            List.of("SqlOnClusterITCase")),
                    // as root, through DockerEngine; skipped without root and Debian's packages
                    entry(
                            "deploy/local-images/build.sh",
                            List.of("ComposeStackITCase", "ImageBasesITCase")),
                    // with -d, and an override file that puts every container on the host network
                    entry(
                            "docker-compose --env-file deploy/local-images/images.env up --build",
                            List.of("ComposeStackITCase")),
                    // the Terraform runbook's step 1 (tagged long: -Plong)
                    entry(
                            "./snapshots savepoint --rest REST_URL --job-version 1",
                            List.of("TerraformRunbookITCase")),
                    entry(
                            "./snapshots upgrade --rest REST_URL --jar JOB_JAR --store STORE_URI"
                                    + " --roll local",
                            List.of("ClusterITCase")),
                    entry(
                            "./snapshots replay --rest REST_URL --jar JOB_JAR --store STORE_URI"
                                    + " --from-savepoint SAVEPOINT --job-version 2",
                            List.of("ClusterITCase")),
                    entry(
                            "./snapshots promote STORE_URI --job-version 2",
                            List.of("ClusterITCase", "TerraformRunbookITCase")),
                    entry(
                            "./snapshots audit STORE_URI --since 7d",
                            List.of("AuditITCase", "TerraformRunbookITCase")),
                    entry(
                            "./snapshots inspect STORE_URI --html store.html",
                            List.of("StorePageBrowserITCase")),
                    entry(
                            "./snapshots ddl s3://my-bucket/snapshots --pipeline telemetry"
                                    + " --job-version 1",
                            List.of("DdlITCase")),
                    entry(
                            "./snapshots ddl s3://my-bucket/snapshots --pipeline telemetry"
                                    + " --job-version 1 --engine spark",
                            List.of("DdlITCase")),
                    entry(
                            "./snapshots ddl s3://my-bucket/snapshots --pipeline telemetry"
                                    + " --job-version 1 --engine trino",
                            List.of("DdlITCase")),
                    // an excerpt of examples/orders/orders.sql (checked below), which the test runs
                    entry("CREATE TABLE customer_hourly (", List.of("OrdersPipelineITCase")),
                    // an excerpt of examples/orders/orders-kinesis.sql, which the test runs
                    entry(
                            "CREATE TABLE orders (customer STRING, amount DECIMAL(10, 2),"
                                    + " order_time TIMESTAMP(3),",
                            List.of("KinesisTableITCase")),
                    // Flink's script starts SqlClient with the jar's flags; the test starts it
                    // so, on deploy/flink-local's lib/ and opt/ (tagged long: -Plong)
                    entry(
                            "$FLINK_HOME/bin/sql-client.sh --jar snapshots-sql-0.3.0-1.20-SNAPSHOT.jar"
                                    + " -f payments.sql",
                            List.of("SqlClientITCase")),
                    // examples/payments/payments.sql whole, which the test runs
                    entry(
                            "-- Payments per merchant and minute, for Flink's own SQL Client, run"
                                    + " where payments.jsonl is:",
                            List.of("SqlClientITCase")),
                    // the whole block, as written, over the job's output
                    entry(
                            "-- DuckDB: the complete windows of the promoted job version",
                            List.of("ReadmeQueryITCase")));

    private static final List<String> SCRIPTS =
            List.of(
                    "examples/orders/orders.sql",
                    "examples/orders/orders-kinesis.sql",
                    "examples/payments/payments.sql");

    private static final Pattern BLOCK = Pattern.compile("(?ms)^```(\\w*)\\n(.*?)^```");

    @Test
    void everyCommandAndQueryInTheReadmeIsRunByATest() throws IOException {
        List<String> found = new ArrayList<>();
        for (String[] block : blocks()) {
            assertThat(block[0])
                    .as(
                            "a fenced block says its language (bash, sql, java or xml, the last two"
                                    + " built by ReleaseITCase):%n%s",
                            block[1])
                    .isIn("bash", "sql", "java", "xml");
            if (block[0].equals("bash")) {
                for (String line : block[1].split("\n")) {
                    String command = line.replaceFirst("\\s+#.*$", "").strip();
                    if (!command.isEmpty()) {
                        found.add(command);
                    }
                }
            } else if (block[0].equals("sql")) {
                found.add(block[1].lines().findFirst().orElseThrow().strip());
            }
        }
        assertThat(found.subList(0, 2))
                .as("the README's first two commands, which .ci/run runs")
                .containsExactly("./snapshots demo", "./mvnw -B verify");
        assertThat(found)
                .as("README commands without a test: add one, and list it in ReadmeCommandsTest")
                .allSatisfy(c -> assertThat(RUN_BY).containsKey(c));
        assertThat(RUN_BY.keySet())
                .as("commands listed here that left the README")
                .allSatisfy(c -> assertThat(found).contains(c));
    }

    @Test
    void theTestsNamedExist() throws IOException {
        List<String> tests;
        try (Stream<Path> files = Files.walk(ROOT)) {
            tests =
                    files.filter(p -> p.toString().contains("/src/test/java/"))
                            .map(p -> p.getFileName().toString().replace(".java", ""))
                            .toList();
        }
        RUN_BY.values().stream()
                .flatMap(List::stream)
                .forEach(
                        t ->
                                assertThat(
                                                t.startsWith(".")
                                                        ? Files.exists(ROOT.resolve(t))
                                                        : tests.contains(t))
                                        .as("%s exists", t)
                                        .isTrue());
    }

    /** The README's SQL, but for the DuckDB query, is shown as the example scripts have it. */
    @Test
    void theReadmesSqlIsTakenFromTheScriptsTheTestsRun() throws IOException {
        List<String> scripts = new ArrayList<>();
        for (String script : SCRIPTS) {
            scripts.add(Files.readString(ROOT.resolve(script)));
        }
        for (String[] block : blocks()) {
            if (block[0].equals("sql") && !block[1].startsWith("-- DuckDB")) {
                assertThat(scripts)
                        .as("the README's SQL block is a part of %s:%n%s", SCRIPTS, block[1])
                        .anyMatch(s -> s.contains(block[1]));
            }
        }
    }

    private static List<String[]> blocks() throws IOException {
        Matcher m = BLOCK.matcher(Files.readString(ROOT.resolve("README.md")));
        List<String[]> blocks = new ArrayList<>();
        while (m.find()) {
            blocks.add(new String[] {m.group(1), m.group(2)});
        }
        return blocks;
    }
}
