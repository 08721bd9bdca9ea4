package dev.snapshots.harness.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import dev.snapshots.cli.deploy.FlinkRest;
import dev.snapshots.cli.deploy.JobLifecycle;
import dev.snapshots.harness.Snapshots;
import dev.snapshots.harness.chaos.Chaos;
import dev.snapshots.store.StoreSpec;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The version-bump runbook of deploy/terraform/README.md, run step by step against the local
 * multi-process cluster: its {@code snapshots} lines as written (the operator task runs the same
 * command line), its {@code terraform apply} as what that apply does to the cluster (the JobManager
 * task replaced at minimum 0 %: the old one releases version N, the new one's entrypoint runs
 * {@code snapshots submit} with {@code SNAPSHOTS_FROM_SAVEPOINT} and the new job version, which the
 * module's Terraform test shows the variables become).
 *
 * <p>Two minutes of a cluster's life: {@code ./mvnw verify -Plong} runs it (tag {@code long});
 * ClusterITCase runs the same commands on the cluster in every build.
 */
@Tag("long")
class TerraformRunbookITCase {
    private static final Path ROOT = Path.of(System.getProperty("snapshots.root"));
    private static final Pattern SNAPSHOTS = Pattern.compile("^snapshots (.+?)\\s*(#.*)?$");
    private static final Pattern APPLY = Pattern.compile("^terraform apply (.+?)\\s*(#.*)?$");

    private static LocalCluster cluster;

    @BeforeAll
    static void up() throws Exception {
        cluster = new LocalCluster(ROOT);
        cluster.down(new PrintStream(new ByteArrayOutputStream()));
        cluster.up(2, System.out);
    }

    @AfterAll
    static void down() throws Exception {
        cluster.down(System.out);
    }

    @Test
    void savepointBumpApplyAuditGateAndPromoteRunAsTheReadmeSays() throws Exception {
        List<String> steps = runbook();
        assertThat(steps)
                .as("the runbook's steps, in order")
                .extracting(
                        s ->
                                s.startsWith("SAVEPOINT=")
                                        ? "SAVEPOINT="
                                        : s.split(" +")[0] + " " + s.split(" +")[1])
                .containsExactly(
                        "snapshots savepoint",
                        "SAVEPOINT=",
                        "terraform apply",
                        "snapshots inspect",
                        "snapshots audit",
                        "snapshots promote",
                        "snapshots promote");

        Map<String, String> endpoints = cluster.endpoints();
        StoreSpec store =
                StoreSpec.parse("s3://" + LocalCluster.BUCKET + "/runbook-" + UUID.randomUUID())
                        .withEndpoint(endpoints.get("s3"));
        // What the module puts in SNAPSHOTS_JOB_ARGS, for the local cluster's generator and S3.
        List<String> job =
                List.of(
                        "--pipeline",
                        "telemetry",
                        "--store",
                        store.uri().toString(),
                        "--endpoint",
                        endpoints.get("s3"),
                        "--windows",
                        "24",
                        "--events-per-window",
                        "200",
                        "--events-per-second",
                        "100",
                        "--checkpoint-interval",
                        "1s");
        String jar = ROOT.resolve(Chaos.JOB_JAR).toString();
        Map<String, String> vars = new HashMap<>();
        vars.put("REST", endpoints.get("rest"));
        vars.put("STORE", store.uri().toString());

        // Version 1 runs, as its JobManager's entrypoint started it.
        cli(List.of("submit", "--rest", endpoints.get("rest"), "--jar", jar), job);
        String v1 = JobLifecycle.jobId("telemetry", 1);
        FlinkRest rest = new FlinkRest(endpoints.get("rest"));
        awaitAllTasksRunning(rest, v1);
        Thread.sleep(8_000); // a few windows published, a few checkpoints

        String said = "";
        for (String step : steps) {
            String line = substitute(step, vars);
            Matcher snapshots = SNAPSHOTS.matcher(line);
            Matcher apply = APPLY.matcher(line);
            if (line.startsWith("SAVEPOINT=")) {
                Matcher path =
                        Pattern.compile("savepoint of job \\S+ \\(\\S+ v\\d+\\): (\\S+)")
                                .matcher(said);
                assertThat(path.find()).as("the savepoint's path in: %s", said).isTrue();
                vars.put("SAVEPOINT", path.group(1));
                assertThat(rest.state(v1)).as("version 1 runs on").isEqualTo("RUNNING");
            } else if (apply.matches()) {
                Map<String, String> tfvars = tfvars(apply.group(1));
                assertThat(tfvars).containsOnlyKeys("image", "job_version", "from_savepoint");
                // The JobManager service's deployment: the old task released and stopped, then the
                // new.
                long rollStarted = System.nanoTime();
                ByteArrayOutputStream rolled = new ByteArrayOutputStream();
                cluster.rollJobManager(new PrintStream(rolled, true, StandardCharsets.UTF_8));
                System.out.print(rolled.toString(StandardCharsets.UTF_8));
                long submitStarted = System.nanoTime();
                List<String> next = new ArrayList<>(job);
                next.addAll(List.of("--job-version", tfvars.get("job_version")));
                said =
                        cli(
                                List.of(
                                        "submit",
                                        "--rest",
                                        endpoints.get("rest"),
                                        "--jar",
                                        jar,
                                        "--from-savepoint",
                                        tfvars.get("from_savepoint")),
                                next);
                assertThat(said)
                        .contains(
                                "from savepoint " + vars.get("SAVEPOINT"),
                                "no checkpoint of its own");
                String v2 =
                        JobLifecycle.jobId(
                                "telemetry", Integer.parseInt(tfvars.get("job_version")));
                long submitted = System.nanoTime();
                awaitAllTasksRunning(rest, v2);
                System.out.printf(
                        "FIGURES runbook: JobManager replaced (release, stop, start, TaskManagers registered) %.1f s,"
                                + " submit (no checkpoint to wait on, jar upload) %.1f s, submitted to all tasks running %.1f s%n",
                        (submitStarted - rollStarted) / 1e9,
                        (submitted - submitStarted) / 1e9,
                        (System.nanoTime() - submitted) / 1e9);
                // 'Once it has caught up': the bounded generator's version 2 has read to its end.
                assertThat(rest.awaitTerminal(v2, Duration.ofMinutes(4))).isEqualTo("FINISHED");
                assertThat(rolled.toString(StandardCharsets.UTF_8))
                        .as("the old JobManager released version 1 before it stopped")
                        .contains(
                                "job " + v1 + " cancelled before this JobManager stops: CANCELED");
                assertThat(rest.jobStates())
                        .as("the new JobManager runs version 2 only")
                        .containsOnlyKeys(v2);
            } else {
                assertThat(snapshots.matches()).as("a step the test knows: %s", line).isTrue();
                List<String> args =
                        new ArrayList<>(List.of(snapshots.group(1).trim().split("\\s+")));
                if (List.of("inspect", "audit", "promote").contains(args.get(0))) {
                    args.addAll(List.of("--endpoint", endpoints.get("s3"))); // S3Proxy, not AWS
                }
                said = cli(args);
            }
        }
        assertThat(said).contains("promoted: v=2 is current");
    }

    /** The runbook's steps: the lines of the README's block marked {@code <!-- runbook -->}. */
    private static List<String> runbook() throws Exception {
        String readme = Files.readString(ROOT.resolve("deploy/terraform/README.md"));
        int marker = readme.indexOf("<!-- runbook -->");
        assertThat(marker).as("the README's runbook").isNotNegative();
        int start = readme.indexOf("```bash\n", marker) + "```bash\n".length();
        String block = readme.substring(start, readme.indexOf("```", start));
        return block.lines()
                .map(String::strip)
                .filter(
                        l ->
                                l.startsWith("snapshots ")
                                        || l.startsWith("terraform apply ")
                                        || l.startsWith("SAVEPOINT="))
                .toList();
    }

    private static String substitute(String line, Map<String, String> vars) {
        String out = line;
        for (Map.Entry<String, String> v : vars.entrySet()) {
            out = out.replace("$" + v.getKey(), v.getValue());
        }
        return out;
    }

    /** {@code -var name=value} pairs of a terraform command line. */
    private static Map<String, String> tfvars(String args) {
        Map<String, String> vars = new HashMap<>();
        Matcher m = Pattern.compile("-var (\\w+)=(\\S+)").matcher(args);
        while (m.find()) {
            vars.put(m.group(1), m.group(2));
        }
        return vars;
    }

    @SafeVarargs
    private static String cli(List<String>... args) {
        List<String> all = new ArrayList<>();
        for (List<String> a : args) {
            all.addAll(a);
        }
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        int code =
                Snapshots.run(
                        all.toArray(new String[0]),
                        new PrintStream(out, true, StandardCharsets.UTF_8),
                        System.err);
        String said = out.toString(StandardCharsets.UTF_8);
        System.out.print("snapshots " + String.join(" ", all) + ":\n" + said);
        assertThat(code)
                .as("snapshots %s exit code; it said: %s", all.get(0), said)
                .isEqualTo(said.contains("refused") ? 1 : 0);
        return said;
    }

    private static void awaitAllTasksRunning(FlinkRest rest, String id) throws Exception {
        long deadline = System.nanoTime() + Duration.ofMinutes(2).toNanos();
        while (!rest.allTasksRunning(id)) {
            assertThat(System.nanoTime()).as("job %s runs", id).isLessThan(deadline);
            Thread.sleep(200);
        }
    }
}
