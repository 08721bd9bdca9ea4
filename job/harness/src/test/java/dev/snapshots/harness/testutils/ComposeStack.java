package dev.snapshots.harness.testutils;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.math.BigInteger;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.node.ArrayNode;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import org.junit.jupiter.api.Assumptions;

/**
 * The project's docker-compose.yml, run as a user without a registry runs it ({@code docker-compose
 * --env-file deploy/local-images/images.env up --build}), on a {@link DockerEngine} whose
 * containers all live on the host's network. What that needs, and nothing else, is changed:
 *
 * <ul>
 *   <li>the file as docker-compose resolves it ({@code config}), less its published ports, which
 *       host networking has none of (docker-compose 1.29 refuses both, and an override cannot
 *       remove a list entry);
 *   <li>an override, {@code host-network.yml}: every service on the host's network; the service
 *       names and this host's own name resolve to 127.0.0.1; every listener binds to 127.0.0.1
 *       (S3Proxy's endpoint, the Kinesis shim, and Flink's RPC, REST and TaskManager addresses
 *       appended to FLINK_PROPERTIES); builds on the host's network, the engine having no bridge.
 * </ul>
 *
 * <p>Both files are written to the stack's directory under target/, for a reader to compare with
 * docker-compose.yml.
 */
public final class ComposeStack implements AutoCloseable {
    /**
     * The ports the file's services listen on, now on the host's loopback: S3Proxy, kinesalite and
     * its shim, Flink's REST API and the JobManager's RPC. A TaskManager takes any free ports.
     */
    public static final List<Integer> PORTS = List.of(80, 4566, 4567, 8081, 6123);

    public static final String REST = "http://127.0.0.1:8081";
    public static final String S3 = "http://127.0.0.1:80";
    public static final String KINESIS = "http://127.0.0.1:4567";

    private static final String LOOPBACK = "127.0.0.1";
    private static final List<String> FLINK_LISTENERS =
            List.of(
                    "jobmanager.bind-host: " + LOOPBACK,
                    "taskmanager.bind-host: " + LOOPBACK,
                    "taskmanager.host: " + LOOPBACK,
                    "rest.bind-address: " + LOOPBACK,
                    "rest.address: " + LOOPBACK);

    private final DockerEngine engine;
    private final Path dir;
    private final String project;
    private final JsonNode services;
    private final List<String> jobArgs;
    private boolean up;

    private ComposeStack(
            DockerEngine engine,
            Path dir,
            String project,
            JsonNode services,
            List<String> jobArgs) {
        this.engine = engine;
        this.dir = dir;
        this.project = project;
        this.services = services;
        this.jobArgs = jobArgs;
    }

    /**
     * Writes the stack's two files; {@code jobFlags} are appended to the JobManager's
     * SNAPSHOTS_JOB_ARGS (e.g. a shorter window for a test that must see several end).
     */
    public static ComposeStack prepare(
            DockerEngine engine, Path root, String project, List<String> jobFlags)
            throws Exception {
        for (int port : PORTS) {
            try (ServerSocket s = new ServerSocket()) {
                s.bind(new InetSocketAddress(LOOPBACK, port));
            } catch (IOException taken) {
                Assumptions.abort(
                        "skipped: port "
                                + port
                                + " on 127.0.0.1 is taken; the compose stack on the host's network"
                                + " needs it");
            }
        }
        DockerEngine.Result resolved =
                engine.run(
                        root,
                        Duration.ofMinutes(1),
                        List.of(
                                DockerEngine.COMPOSE,
                                "--env-file",
                                "deploy/local-images/images.env",
                                "-f",
                                "docker-compose.yml",
                                "config"),
                        // images.env names the 1.20 line's base; the environment wins over it.
                        DockerEngine.JOB_IMAGE_ARGS);
        assertThat(resolved.exit()).as("docker-compose config: %s", resolved.out()).isZero();
        YAMLMapper yaml = new YAMLMapper();
        ObjectNode file = (ObjectNode) yaml.readTree(resolved.out());
        ObjectNode services = (ObjectNode) file.path("services");
        ObjectNode override = yaml.createObjectNode();
        ObjectNode overridden = override.putObject("services");
        String hostName = InetAddress.getLocalHost().getHostName();
        List<String> jobArgs = new ArrayList<>();
        for (Iterator<String> names = services.fieldNames(); names.hasNext(); ) {
            String name = names.next();
            ObjectNode service = (ObjectNode) services.path(name);
            service.remove("ports");
            ObjectNode changes = overridden.putObject(name);
            changes.put("network_mode", "host");
            ArrayNode hosts = changes.putArray("extra_hosts");
            services.fieldNames().forEachRemaining(n -> hosts.add(n + ":" + LOOPBACK));
            hosts.add(hostName + ":" + LOOPBACK); // Flink looks its host up; Docker does not add it
            JsonNode env = service.path("environment");
            ObjectNode changedEnv = changes.putObject("environment");
            if (env.has("FLINK_PROPERTIES")) {
                changedEnv.put(
                        "FLINK_PROPERTIES",
                        env.path("FLINK_PROPERTIES").asText().stripTrailing()
                                + "\n"
                                + String.join("\n", FLINK_LISTENERS)
                                + "\n");
            }
            if (env.has("SNAPSHOTS_JOB_ARGS")) {
                jobArgs.addAll(
                        List.of(env.path("SNAPSHOTS_JOB_ARGS").asText().trim().split("\\s+")));
                jobArgs.addAll(jobFlags);
                if (!jobFlags.isEmpty()) {
                    changedEnv.put("SNAPSHOTS_JOB_ARGS", String.join(" ", jobArgs));
                }
            }
            if (env.has("S3PROXY_ENDPOINT")) {
                changedEnv.put(
                        "S3PROXY_ENDPOINT",
                        env.path("S3PROXY_ENDPOINT").asText().replace("0.0.0.0", LOOPBACK));
            }
            if (service.has("build")) {
                changes.putObject("build").put("network", "host");
                if (service.path("build").path("context").asText().endsWith("deploy/kinesalite")) {
                    changedEnv.put("KINESIS_HOST", LOOPBACK);
                }
            }
            if (changedEnv.isEmpty()) {
                changes.remove("environment");
            }
        }
        Path dir = Files.createDirectories(root.resolve("target/compose/" + project));
        Files.writeString(
                dir.resolve("docker-compose.resolved.yml"), yaml.writeValueAsString(file));
        Files.writeString(dir.resolve("host-network.yml"), yaml.writeValueAsString(override));
        return new ComposeStack(engine, dir, project, services, jobArgs);
    }

    /** {@code docker-compose up -d --build}: builds the job's and Kinesis's images, starts all. */
    public void up() throws Exception {
        up = true;
        compose(Duration.ofMinutes(20), "up", "-d", "--build");
    }

    /** Starts another container for {@code service} in place of the one stopped or killed. */
    public void replace(String service) throws Exception {
        compose(
                Duration.ofMinutes(5),
                "up",
                "-d",
                "--no-deps",
                "--no-build",
                "--force-recreate",
                service);
    }

    /** The id of {@code service}'s container. */
    public String container(String service) throws Exception {
        String id = compose(Duration.ofMinutes(1), "ps", "-q", service).strip();
        assertThat(id).as("a container of %s", service).isNotEmpty();
        return id;
    }

    /** The name of {@code service}'s container, as {@code docker ps} shows it. */
    public String name(String service) throws Exception {
        return engine.docker("inspect", "-f", "{{.Name}}", container(service)).strip().substring(1);
    }

    public String logs(String service) throws Exception {
        return compose(Duration.ofMinutes(1), "logs", "--no-color", service);
    }

    /** The exit status of a stopped container. */
    public int exitCode(String container) throws Exception {
        return Integer.parseInt(
                engine.docker("inspect", "-f", "{{.State.ExitCode}}", container).strip());
    }

    /** The job's flags, as the JobManager's entrypoint passes them to submit. */
    public List<String> jobArgs() {
        return jobArgs;
    }

    /** The stack's service names. */
    public List<String> services() {
        List<String> names = new ArrayList<>();
        services.fieldNames().forEachRemaining(names::add);
        return names;
    }

    /**
     * Where each running service listens, "address:port", read from the kernel's socket tables for
     * the sockets its processes hold: on the host's network, these are the host's.
     */
    public Map<String, List<String>> listeners() throws Exception {
        Map<String, List<String>> bySocket = sockets();
        Map<String, List<String>> listeners = new TreeMap<>();
        for (String service : services()) {
            String id = compose(Duration.ofMinutes(1), "ps", "-q", service).strip();
            if (id.isEmpty()
                    || !engine.docker("inspect", "-f", "{{.State.Running}}", id)
                            .strip()
                            .equals("true")) {
                continue;
            }
            List<String> found = new ArrayList<>();
            for (String pid : engine.docker("top", id, "-eo", "pid").lines().skip(1).toList()) {
                for (String inode : socketInodes(Path.of("/proc", pid.strip(), "fd"))) {
                    found.addAll(bySocket.getOrDefault(inode, List.of()));
                }
            }
            listeners.put(service, found.stream().distinct().sorted().toList());
        }
        return listeners;
    }

    /** {@code docker-compose down}: containers, the network, the volume and the built images. */
    public String down() throws Exception {
        up = false;
        return compose(Duration.ofMinutes(5), "down", "-v", "--rmi", "local", "--remove-orphans");
    }

    @Override
    public void close() throws Exception {
        if (up) {
            down();
        }
    }

    public String compose(Duration timeout, String... args) throws Exception {
        List<String> command =
                new ArrayList<>(
                        List.of(
                                DockerEngine.COMPOSE,
                                "-p",
                                project,
                                "-f",
                                "docker-compose.resolved.yml",
                                "-f",
                                "host-network.yml"));
        command.addAll(List.of(args));
        DockerEngine.Result r = engine.run(dir, timeout, command);
        assertThat(r.exit()).as("docker-compose %s: %s", String.join(" ", args), r.out()).isZero();
        return r.out();
    }

    /** Listening TCP sockets and bound UDP ones, by inode, from /proc/net. */
    private static Map<String, List<String>> sockets() throws IOException {
        Map<String, List<String>> byInode = new LinkedHashMap<>();
        for (String table : List.of("tcp", "tcp6", "udp", "udp6")) {
            Path file = Path.of("/proc/net", table);
            if (!Files.exists(file)) {
                continue;
            }
            for (String line : Files.readAllLines(file).stream().skip(1).toList()) {
                String[] f = line.trim().split("\\s+");
                // TCP in LISTEN; UDP bound and not connected to a peer.
                boolean listening =
                        table.startsWith("tcp") ? f[3].equals("0A") : f[2].matches("[0:]+");
                if (listening) {
                    byInode.computeIfAbsent(f[9], k -> new ArrayList<>()).add(address(f[1]));
                }
            }
        }
        return byInode;
    }

    private static Set<String> socketInodes(Path fds) {
        try (Stream<Path> links = Files.list(fds)) {
            return links.map(
                            l -> {
                                try {
                                    return Files.readSymbolicLink(l).toString();
                                } catch (IOException gone) {
                                    return "";
                                }
                            })
                    .filter(t -> t.startsWith("socket:["))
                    .map(t -> t.substring("socket:[".length(), t.length() - 1))
                    .collect(java.util.stream.Collectors.toSet());
        } catch (IOException gone) {
            return Set.of();
        }
    }

    /** "0100007F:0050" (the kernel's little-endian words) as "127.0.0.1:80". */
    static String address(String hexAddressAndPort) {
        String[] parts = hexAddressAndPort.split(":");
        String hex = parts[0];
        byte[] bytes = new byte[hex.length() / 2];
        for (int word = 0; word < bytes.length / 4; word++) {
            for (int b = 0; b < 4; b++) {
                int from = (word * 4 + 3 - b) * 2;
                bytes[word * 4 + b] = (byte) Integer.parseInt(hex.substring(from, from + 2), 16);
            }
        }
        try {
            return InetAddress.getByAddress(bytes).getHostAddress()
                    + ":"
                    + new BigInteger(parts[1], 16).intValue();
        } catch (IOException e) {
            throw new IllegalArgumentException(hexAddressAndPort, e);
        }
    }
}
