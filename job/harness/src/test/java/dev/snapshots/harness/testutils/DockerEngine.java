package dev.snapshots.harness.testutils;

import static org.assertj.core.api.Assertions.assertThat;

import dev.snapshots.harness.BuildVersion;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.apache.flink.runtime.util.EnvironmentInformation;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * A Docker engine of the test run's own: Debian's {@code dockerd}, started as root with no iptables
 * changes and no default bridge (the tests' containers all run on the host's network and bind to
 * 127.0.0.1), its data root under {@code target/docker}, its socket, exec root and PID file in a
 * short directory of its own (a unix socket's path is limited). One per test JVM, through {@link
 * Extension}: when the run ends its containers are removed, it is stopped by its PID, and its data
 * root, with every image, is deleted. Where it cannot start, the tests that need it are skipped,
 * saying why.
 *
 * <p>The client is Debian's, of the engine's version; docker-compose is Debian's 1.29. The local
 * images (deploy/local-images/build.sh) are built once per engine; the Debian root filesystem that
 * build starts from stays cached outside the engine, so a second run skips debootstrap.
 */
public final class DockerEngine implements ExtensionContext.Store.CloseableResource {
    public static final String CLIENT = "/usr/bin/docker";
    public static final String COMPOSE = "/usr/bin/docker-compose";

    /**
     * The local Flink base {@link #buildLocalImages} builds, of this build's line: build.sh tags it
     * by the Flink deploy/flink-local was built with, the one on this classpath.
     */
    public static final String LOCAL_FLINK_BASE =
            "snapshots-local/flink:" + EnvironmentInformation.getVersion() + "-java17";

    /**
     * The job image's build arguments for this build's line on the local base: the base, and the
     * version in the jars' names.
     */
    public static final Map<String, String> JOB_IMAGE_ARGS =
            Map.of("FLINK_IMAGE", LOCAL_FLINK_BASE, "SNAPSHOTS_VERSION", BuildVersion.VERSION);

    /** What the engine and the local images need, each with the Debian package that has it. */
    private static final Map<String, String> NEEDED =
            Map.of(
                    "/usr/sbin/dockerd",
                    "docker.io",
                    CLIENT,
                    "docker.io",
                    COMPOSE,
                    "docker-compose",
                    "/usr/sbin/debootstrap",
                    "debootstrap");

    private final Path root;
    private final Path dataRoot;
    private final Path runDir;
    private final Process dockerd;
    private final Map<String, Duration> timings = new LinkedHashMap<>();
    private boolean localImages;

    private DockerEngine(Path root, Path dataRoot, Path runDir, Process dockerd) {
        this.root = root;
        this.dataRoot = dataRoot;
        this.runDir = runDir;
        this.dockerd = dockerd;
    }

    /** JUnit: resolves a {@link DockerEngine} parameter with the run's engine, started once. */
    public static final class Extension implements ParameterResolver {
        @Override
        public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
            return parameter.getParameter().getType() == DockerEngine.class;
        }

        @Override
        public Object resolveParameter(ParameterContext parameter, ExtensionContext context) {
            return context.getRoot()
                    .getStore(ExtensionContext.Namespace.create(DockerEngine.class))
                    .getOrComputeIfAbsent(
                            DockerEngine.class,
                            k -> {
                                try {
                                    return start(
                                            Path.of(System.getProperty("snapshots.root"))
                                                    .toAbsolutePath()
                                                    .normalize());
                                } catch (IOException | InterruptedException e) {
                                    throw new IllegalStateException(e);
                                }
                            },
                            DockerEngine.class);
        }
    }

    static DockerEngine start(Path root) throws IOException, InterruptedException {
        String uid =
                new String(
                                new ProcessBuilder("id", "-u")
                                        .start()
                                        .getInputStream()
                                        .readAllBytes(),
                                StandardCharsets.UTF_8)
                        .trim();
        Assumptions.assumeTrue(
                uid.equals("0"),
                "skipped: a Docker engine needs root, and these tests run as uid " + uid);
        DebianPackages.require(NEEDED);
        Path dir = Files.createDirectories(root.resolve("target/docker"));
        // What an aborted run left: its engine, its short directory in /tmp, its data root.
        stopLeftover(dir.resolve("dockerd.pid"));
        if (Files.exists(dir.resolve("run-dir"))) {
            removeTree(Path.of(Files.readString(dir.resolve("run-dir")).trim()));
        }
        Path dataRoot = dir.resolve("data");
        removeTree(dataRoot);
        Path runDir = Files.createTempDirectory("sd");
        Files.writeString(dir.resolve("run-dir"), runDir.toString());
        long started = System.nanoTime();
        Process dockerd =
                new ProcessBuilder(
                                "/usr/sbin/dockerd",
                                "--iptables=false",
                                "--ip-masq=false",
                                "--bridge=none",
                                "--storage-driver=overlay2",
                                "--data-root=" + dataRoot,
                                "--exec-root=" + runDir.resolve("x"),
                                "--pidfile=" + runDir.resolve("docker.pid"),
                                "--host=unix://" + runDir.resolve("docker.sock"))
                        .redirectErrorStream(true)
                        .redirectOutput(dir.resolve("dockerd.log").toFile())
                        .start();
        Files.writeString(dir.resolve("dockerd.pid"), Long.toString(dockerd.pid()));
        DockerEngine engine = new DockerEngine(root, dataRoot, runDir, dockerd);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
        while (engine.run(root, Duration.ofSeconds(30), List.of(CLIENT, "info")).exit() != 0) {
            if (!dockerd.isAlive() || System.nanoTime() > deadline) {
                String log = Files.readString(dir.resolve("dockerd.log"));
                engine.close();
                Assumptions.abort(
                        "skipped: the Docker engine did not start here: "
                                + log.substring(Math.max(0, log.length() - 2000)));
            }
            Thread.sleep(500);
        }
        engine.timings.put("engine start", Duration.ofNanos(System.nanoTime() - started));
        System.out.printf(
                "docker: engine up (pid %d, %s) in %d s%n",
                dockerd.pid(), engine.host(), engine.timings.get("engine start").toSeconds());
        return engine;
    }

    /** The address clients reach this engine at (DOCKER_HOST). */
    public String host() {
        return "unix://" + runDir.resolve("docker.sock");
    }

    /**
     * Builds the images docker-compose.yml starts from, as a user without a registry does
     * (deploy/local-images/build.sh), once per engine.
     */
    public synchronized void buildLocalImages() throws Exception {
        if (localImages) {
            return;
        }
        long started = System.nanoTime();
        Result built =
                run(
                        root,
                        Duration.ofMinutes(30),
                        List.of("deploy/local-images/build.sh"),
                        Map.of("DOCKER", CLIENT));
        assertThat(built.exit()).as("deploy/local-images/build.sh: %s", built.out()).isZero();
        System.out.print(built.out());
        timings.put("local images", Duration.ofNanos(System.nanoTime() - started));
        localImages = true;
    }

    /** Runs the Docker client; fails unless it exits 0. */
    public String docker(String... args) throws Exception {
        List<String> command = new ArrayList<>(List.of(CLIENT));
        command.addAll(List.of(args));
        Result r = run(root, Duration.ofMinutes(20), command);
        assertThat(r.exit()).as("docker %s: %s", String.join(" ", args), r.out()).isZero();
        return r.out();
    }

    /** A command's exit status and what it printed, standard error included. */
    public record Result(int exit, String out) {}

    public Result run(Path dir, Duration timeout, List<String> command) throws IOException {
        return run(dir, timeout, command, Map.of());
    }

    /** Runs {@code command} in {@code dir} as a client of this engine. */
    public Result run(Path dir, Duration timeout, List<String> command, Map<String, String> env)
            throws IOException {
        Path out = Files.createTempFile(runDir, "out", ".txt");
        try {
            ProcessBuilder pb =
                    new ProcessBuilder(command)
                            .directory(dir.toFile())
                            .redirectErrorStream(true)
                            .redirectOutput(out.toFile());
            pb.environment().put("DOCKER_HOST", host());
            pb.environment().putAll(env);
            Process p = pb.start();
            try {
                if (!p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                    p.destroyForcibly().waitFor();
                    throw new IOException(
                            String.join(" ", command)
                                    + " did not finish within "
                                    + timeout
                                    + ": "
                                    + Files.readString(out));
                }
            } catch (InterruptedException e) {
                p.destroyForcibly();
                Thread.currentThread().interrupt();
                throw new IOException("interrupted: " + String.join(" ", command), e);
            }
            return new Result(p.exitValue(), Files.readString(out));
        } finally {
            Files.deleteIfExists(out);
        }
    }

    /**
     * How long each stage took so far: the engine's start, the local images, and what tests add.
     */
    public Map<String, Duration> timings() {
        return timings;
    }

    /** Every container left (running or not), for the check that a stack left nothing. */
    public List<String> containers() throws Exception {
        return docker("ps", "-aq").lines().filter(l -> !l.isBlank()).toList();
    }

    @Override
    public void close() throws IOException {
        long started = System.nanoTime();
        try {
            if (dockerd.isAlive()) {
                List<String> left = new ArrayList<>(List.of(CLIENT, "rm", "-f", "-v"));
                run(root, Duration.ofMinutes(2), List.of(CLIENT, "ps", "-aq"))
                        .out()
                        .lines()
                        .filter(l -> !l.isBlank())
                        .forEach(left::add);
                if (left.size() > 4) {
                    run(root, Duration.ofMinutes(2), left);
                }
            }
        } finally {
            stop(dockerd.toHandle(), Duration.ofSeconds(60));
            // dockerd stops the containerd it started; one left by a SIGKILLed dockerd is ours too.
            pidIn(runDir.resolve("x/containerd/containerd.pid"))
                    .flatMap(ProcessHandle::of)
                    .ifPresent(h -> stop(h, Duration.ofSeconds(10)));
            removeTree(dataRoot);
            removeTree(runDir);
            Files.deleteIfExists(root.resolve("target/docker/dockerd.pid"));
            Files.deleteIfExists(root.resolve("target/docker/run-dir"));
            System.out.printf(
                    "docker: engine (pid %d) stopped, its data root removed, in %d s; stages: %s%n",
                    dockerd.pid(),
                    Duration.ofNanos(System.nanoTime() - started).toSeconds(),
                    timings);
        }
    }

    /** A dockerd an aborted run left, found by the PID that run recorded. */
    private static void stopLeftover(Path pidFile) {
        pidIn(pidFile)
                .flatMap(ProcessHandle::of)
                .filter(h -> h.info().command().orElse("").endsWith("dockerd"))
                .ifPresent(
                        h -> {
                            System.out.println(
                                    "docker: stopping the engine an earlier run left, pid "
                                            + h.pid());
                            stop(h, Duration.ofSeconds(60));
                        });
    }

    private static Optional<Long> pidIn(Path file) {
        try {
            return Optional.of(Long.parseLong(Files.readString(file).trim()));
        } catch (IOException | NumberFormatException e) {
            return Optional.empty();
        }
    }

    /** SIGTERM, then SIGKILL after {@code grace}. */
    private static void stop(ProcessHandle process, Duration grace) {
        process.destroy();
        try {
            process.onExit().get(grace.toMillis(), TimeUnit.MILLISECONDS);
        } catch (Exception timeout) {
            process.destroyForcibly();
            process.onExit().join();
        }
    }

    /**
     * Deletes a directory of the engine's, first unmounting what the engine left mounted in it
     * (overlay layers of a SIGKILLed engine's containers).
     */
    private static void removeTree(Path dir) throws IOException {
        if (!Files.exists(dir)) {
            return;
        }
        List<String> mounts = new ArrayList<>();
        for (String line : Files.readAllLines(Path.of("/proc/self/mounts"))) {
            String point = line.split(" ")[1];
            if (point.equals(dir.toString()) || point.startsWith(dir + "/")) {
                mounts.add(point);
            }
        }
        Collections.reverse(mounts); // the innermost first
        for (String point : mounts) {
            command("umount", "-l", point);
        }
        // Faster than a walk from Java over the images' hundreds of thousands of files.
        command("rm", "-rf", "--one-file-system", dir.toString());
    }

    private static void command(String... command) throws IOException {
        try {
            Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
            String said = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (p.waitFor() != 0) {
                throw new IOException(String.join(" ", command) + ": " + said);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted: " + String.join(" ", command), e);
        }
    }
}
