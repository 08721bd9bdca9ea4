package dev.snapshots.harness.docker;

import static org.assertj.core.api.Assertions.assertThat;

import dev.snapshots.cli.deploy.FlinkRest;
import dev.snapshots.harness.testutils.DockerEngine;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.flink.runtime.util.EnvironmentInformation;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The job's image (deploy/docker/Dockerfile) on either base: the official flink:1.20.3-java17, its
 * default (flink:2.3.0-java17 for the Flink 2 line), and the local one deploy/local-images builds
 * where no registry answers, of this build's line. What the Dockerfile and its entrypoint take from
 * the base is listed once, {@link #FROM_THE_BASE}: the image built on the local base is checked for
 * each by running it; the official image cannot be pulled here, so for it the list is checked
 * against what its published Dockerfile (apache/flink-docker, 1.20/scala_2.12-java17-ubuntu) and
 * Flink 1.20.3's binary distribution provide, as recorded in the list, and the job's files are
 * checked to use nothing else.
 */
@ExtendWith(DockerEngine.Extension.class)
class ImageBasesITCase {
    private static final Path ROOT =
            Path.of(System.getProperty("snapshots.root")).toAbsolutePath().normalize();

    /** docker-compose.yml's tag: the stack, if it runs later, builds on this one's layers. */
    private static final String JOB_IMAGE = "snapshots-job:local";

    /**
     * Each path under /opt/flink (and the base's entrypoint) that the job's Dockerfile or
     * entrypoint uses, and where it comes from: the base (as the official image has it), or the
     * Dockerfile itself.
     */
    private static final Map<String, String> FROM_THE_BASE =
            Map.of(
                    "/docker-entrypoint.sh",
                    "base: ENTRYPOINT [\"/docker-entrypoint.sh\"], with jobmanager, taskmanager and"
                            + " FLINK_PROPERTIES",
                    "/opt/flink/lib",
                    "base: the distribution's lib/ (FLINK_HOME=/opt/flink), Flink's runtime",
                    "/opt/flink/opt",
                    "base: the distribution's opt/, flink-s3-fs-presto-<version>.jar among it",
                    "/opt/flink/plugins",
                    "base: the distribution's plugins/; the Dockerfile adds s3-fs-presto",
                    "/opt/flink/usrlib",
                    "the Dockerfile: COPY of the job jar",
                    "/opt/flink/bin",
                    "the Dockerfile: COPY of snapshots-entrypoint.sh (the base's PATH has it)");

    @Test
    void theJobsFilesUseNothingOfTheBaseButWhatTheOfficialImageProvides() throws IOException {
        String dockerfile = Files.readString(ROOT.resolve("deploy/docker/Dockerfile"));
        String entrypoint = Files.readString(ROOT.resolve("deploy/docker/snapshots-entrypoint.sh"));
        assertThat(dockerfile)
                .as("the official image stays the default base")
                .contains("ARG FLINK_IMAGE=flink:1.20.3-java17\nFROM ${FLINK_IMAGE}")
                .contains("USER flink", "chown -R flink:flink", "apt-get install");
        Set<String> used = new TreeSet<>();
        Matcher m =
                Pattern.compile("(/opt/flink/[a-z]+|/docker-entrypoint\\.sh)")
                        .matcher(dockerfile + entrypoint);
        while (m.find()) {
            used.add(m.group(1));
        }
        assertThat(FROM_THE_BASE)
                .as("where each path the job's files use comes from")
                .containsKeys(used.toArray(new String[0]));
        assertThat(dockerfile).contains("/opt/flink/opt/flink-s3-fs-presto-*.jar");
        assertThat(entrypoint)
                .contains("/docker-entrypoint.sh jobmanager", "/docker-entrypoint.sh taskmanager")
                .as("the command line runs on the base's Flink")
                .contains("\"/opt/flink/lib/*:$cli\"");
    }

    /**
     * The job's image built on the local base has everything {@link #FROM_THE_BASE} says, as the
     * official image has it: the paths, the plugin, the user (uid 9999, as the official image's), a
     * Java 17 on the PATH that runs the command line on the base's Flink, and apt-get.
     */
    @Test
    void theJobsImageOnTheLocalBaseHasWhatTheJobUses(DockerEngine engine) throws Exception {
        engine.buildLocalImages();
        List<String> build = new ArrayList<>(List.of("build", "--network", "host"));
        DockerEngine.JOB_IMAGE_ARGS.forEach(
                (name, value) -> build.addAll(List.of("--build-arg", name + "=" + value)));
        build.addAll(List.of("-f", "deploy/docker/Dockerfile", "-t", JOB_IMAGE, "."));
        engine.docker(build.toArray(new String[0]));
        assertThat(
                        engine.docker(
                                "inspect",
                                "-f",
                                "{{.Config.User}} {{json .Config.Entrypoint}}"
                                        + " {{.Config.WorkingDir}}",
                                JOB_IMAGE))
                .isEqualToIgnoringWhitespace(
                        "flink [\"/opt/flink/bin/snapshots-entrypoint.sh\"] /opt/flink");
        String inside =
                engine.docker(
                        "run",
                        "--rm",
                        "--network",
                        "host",
                        "--entrypoint",
                        "bash",
                        JOB_IMAGE,
                        "-c",
                        String.join(
                                "; ",
                                "id",
                                "echo FLINK_HOME=$FLINK_HOME",
                                "ls /opt/flink/plugins/s3-fs-presto /opt/flink/usrlib"
                                        + " /opt/snapshots",
                                "test -x /docker-entrypoint.sh && echo base entrypoint",
                                "test -d /opt/flink/lib && echo base lib",
                                "command -v apt-get curl date od tr",
                                "java -version 2>&1 | head -1",
                                "java -cp '/opt/flink/lib/*:/opt/snapshots/snapshots-cli.jar'"
                                        + " dev.snapshots.cli.Cli --help"));
        System.out.println("docker: inside the job's image on the local base:\n" + inside);
        assertThat(inside)
                .contains(
                        "uid=9999(flink) gid=9999(flink)",
                        "FLINK_HOME=/opt/flink",
                        "snapshots-job.jar",
                        "snapshots-cli.jar",
                        "base entrypoint",
                        "base lib",
                        "/usr/bin/apt-get",
                        "/usr/bin/curl")
                .containsPattern("flink-s3-fs-presto-\\d+\\.\\d+\\.\\d+\\.jar")
                .containsPattern("openjdk version \"17\\.")
                .contains("submit", "release", "audit");
    }

    /**
     * The local base's own entrypoint: {@code jobmanager} and {@code taskmanager} start the two
     * processes of this build's Flink, each with FLINK_PROPERTIES merged into its configuration (a
     * value with spaces included), and the TaskManager registers with the JobManager.
     */
    @Test
    void theLocalEntrypointStartsAJobManagerAndATaskManagerWithFlinkProperties(DockerEngine engine)
            throws Exception {
        engine.buildLocalImages();
        int rest = freePort();
        int rpc = freePort();
        String common =
                String.join(
                        "\n",
                        "jobmanager.rpc.address: 127.0.0.1",
                        "jobmanager.rpc.port: " + rpc,
                        "jobmanager.bind-host: 127.0.0.1",
                        "taskmanager.bind-host: 127.0.0.1",
                        "taskmanager.host: 127.0.0.1",
                        "rest.port: " + rest,
                        "rest.bind-address: 127.0.0.1",
                        "rest.address: 127.0.0.1");
        String jobManager =
                startLocalBase(
                        engine,
                        "jobmanager",
                        common + "\nenv.java.opts.jobmanager: -Dsnapshots.a=1 -Dsnapshots.b=2");
        String taskManager =
                startLocalBase(
                        engine, "taskmanager", common + "\ntaskmanager.numberOfTaskSlots: 3");
        try {
            FlinkRest flink = new FlinkRest("http://127.0.0.1:" + rest);
            JsonNode taskManagers = null;
            long deadline = System.nanoTime() + Duration.ofMinutes(3).toNanos();
            while (System.nanoTime() < deadline) {
                try {
                    taskManagers = flink.get("/taskmanagers").path("taskmanagers");
                    // Registered first, its slots reported a moment later.
                    if (taskManagers.size() == 1
                            && taskManagers.get(0).path("slotsNumber").asInt() > 0) {
                        break;
                    }
                } catch (IOException notYet) {
                    // the JobManager is still starting
                }
                Thread.sleep(1000);
            }
            assertThat(taskManagers)
                    .as(
                            "TaskManagers registered; JobManager log:%n%s",
                            engine.docker("logs", jobManager))
                    .hasSize(1);
            assertThat(flink.get("/config").path("flink-version").asText())
                    .as("the base's Flink: the one this build's line is built with")
                    .isEqualTo(EnvironmentInformation.getVersion());
            assertThat(taskManagers.get(0).path("slotsNumber").asInt())
                    .as("taskmanager.numberOfTaskSlots from FLINK_PROPERTIES")
                    .isEqualTo(3);
            assertThat(flink.get("/jobmanager/environment").path("jvm").path("options").toString())
                    .as("env.java.opts.jobmanager, spaces kept")
                    .contains("-Dsnapshots.a=1", "-Dsnapshots.b=2");
        } finally {
            engine.docker("rm", "-f", jobManager, taskManager);
        }
    }

    /**
     * A container of the local base on the host's network, running {@code command} with {@code
     * properties} as FLINK_PROPERTIES; Flink looks its host's name up, which Docker leaves out.
     */
    private static String startLocalBase(DockerEngine engine, String command, String properties)
            throws Exception {
        return engine.docker(
                        "run",
                        "-d",
                        "--network",
                        "host",
                        "--add-host",
                        InetAddress.getLocalHost().getHostName() + ":127.0.0.1",
                        "-e",
                        "FLINK_PROPERTIES=" + properties,
                        DockerEngine.LOCAL_FLINK_BASE,
                        command)
                .strip();
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }
}
