package dev.snapshots.harness.cluster;

import dev.snapshots.cli.deploy.FlinkRest;
import dev.snapshots.cli.deploy.JobLifecycle;
import dev.snapshots.cli.deploy.RestTls;
import dev.snapshots.harness.metrics.MetricsPlugin;
import dev.snapshots.job.config.CommandLine;
import java.io.IOException;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.stream.Stream;
import org.apache.flink.annotation.Internal;
import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.ConfigOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.runtime.util.EnvironmentInformation;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;

/**
 * {@code snapshots cluster up|down|status}: a real Flink standalone session cluster of the build's
 * line (1.20, or 2.3 built with {@code -Pflink2}) made of separate JVM processes (JobManager, N
 * TaskManagers) from the Maven artifacts, plus S3Proxy for checkpoints, savepoints and snapshots
 * (through the flink-s3-fs-presto plugin) and kinesalite with its shim as the Kinesis endpoint.
 * Everything binds to 127.0.0.1, every process's PID is written under {@code target/cluster/pids},
 * and {@code down} stops exactly those. Heartbeats are tuned so a killed TaskManager is noticed in
 * seconds.
 *
 * <p>JobManagers come and go as on ECS: each one started is a new incarnation ({@code
 * jobmanager-N}) with a checkpoint directory of its own ({@code .../checkpoints/jm-N}, what the
 * image's entrypoint sets), reached through {@link JobManagerAddress}, which names one of them at a
 * time. A second one can start beside the first, as a deployment at 200 % does, and take over when
 * the first stops. The cluster has a plugins directory of its own: the distribution's plugins (the
 * S3 file system, and the warm-up that makes it as each process starts) and {@link MetricsPlugin},
 * which writes the job's counters under {@link #metricsDirectory()} so they outlive a SIGKILL.
 */
@Internal
public final class LocalCluster {
    private static final ConfigOption<Integer> TASK_MANAGERS =
            ConfigOptions.key("cluster.taskmanagers").intType().defaultValue(2);
    private static final String REST_TLS = "rest-tls";
    public static final String USAGE =
            String.join(
                    "\n",
                    "usage: snapshots cluster up [--taskmanagers N] [--rest-tls] | down | status",
                    "",
                    "  up       start S3Proxy, kinesalite, a JobManager and N TaskManagers (default 2) as separate processes,",
                    "           from empty state",
                    "           --rest-tls: the REST API over TLS with mutual authentication, as the ECS module's rest_tls;",
                    "           a throwaway CA signs the JobManager's and a client's certificates, and 'up' prints the",
                    "           SNAPSHOTS_REST_* variables under which the command line presents the client's certificate",
                    "  down     stop every process 'up' started, by PID",
                    "  status   processes, ports, running jobs and their latest checkpoint");

    public static final String BUCKET = "snapshots";

    /** Under which every JobManager incarnation keeps its checkpoints, in {@code jm-N/}. */
    public static final String CHECKPOINTS = "s3://" + BUCKET + "/flink/checkpoints";

    /**
     * What Flink's own scripts pass on Java 17 (env.java.default-opts.all): Flink reflects into
     * these. Flink's SQL Client needs them too.
     */
    public static final List<String> JAVA_17_OPENS =
            List.of(
                    "--add-exports=java.base/sun.net.util=ALL-UNNAMED",
                    "--add-exports=java.rmi/sun.rmi.registry=ALL-UNNAMED",
                    "--add-exports=java.security.jgss/sun.security.krb5=ALL-UNNAMED",
                    "--add-opens=java.base/java.lang=ALL-UNNAMED",
                    "--add-opens=java.base/java.net=ALL-UNNAMED",
                    "--add-opens=java.base/java.io=ALL-UNNAMED",
                    "--add-opens=java.base/java.nio=ALL-UNNAMED",
                    "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
                    "--add-opens=java.base/java.lang.reflect=ALL-UNNAMED",
                    "--add-opens=java.base/java.text=ALL-UNNAMED",
                    "--add-opens=java.base/java.time=ALL-UNNAMED",
                    "--add-opens=java.base/java.util=ALL-UNNAMED",
                    "--add-opens=java.base/java.util.concurrent=ALL-UNNAMED",
                    "--add-opens=java.base/java.util.concurrent.atomic=ALL-UNNAMED",
                    "--add-opens=java.base/java.util.concurrent.locks=ALL-UNNAMED");

    private final Path root;
    private final Path dir;

    /** The Maven-built Flink distribution: deploy/flink-local/target. */
    private final Path dist;

    public LocalCluster(Path repoRoot) {
        this(repoRoot, repoRoot.resolve("target/cluster"));
    }

    /**
     * A cluster whose state, logs and PIDs live in {@code dir}, apart from the one 'cluster up'
     * starts.
     */
    public LocalCluster(Path repoRoot, Path dir) {
        this.root = repoRoot.toAbsolutePath().normalize();
        this.dir = dir.toAbsolutePath().normalize();
        this.dist = root.resolve("deploy/flink-local/target");
    }

    public static int run(String[] args, PrintStream out) throws Exception {
        CommandLine.Parsed parsed =
                CommandLine.parse(
                        args, List.of(TASK_MANAGERS), Set.of(REST_TLS), 1, new Configuration());
        if (parsed.positional().isEmpty()) {
            throw new IllegalArgumentException("a subcommand is required\n" + USAGE);
        }
        LocalCluster cluster = new LocalCluster(Path.of(System.getProperty("snapshots.root", ".")));
        switch (parsed.positional().get(0)) {
            case "up":
                if (parsed.get(TASK_MANAGERS) < 1) {
                    throw new IllegalArgumentException(
                            "--taskmanagers must be >= 1, got " + parsed.get(TASK_MANAGERS));
                }
                cluster.up(parsed.get(TASK_MANAGERS), parsed.has(REST_TLS), out);
                return 0;
            case "down":
                cluster.down(out);
                return 0;
            case "status":
                return cluster.status(out);
            default:
                throw new IllegalArgumentException(
                        "unknown subcommand '" + parsed.positional().get(0) + "'\n" + USAGE);
        }
    }

    public void up(int taskManagers, PrintStream out) throws Exception {
        up(taskManagers, false, out);
    }

    /**
     * Starts the cluster; with {@code restTls}, its REST API speaks TLS and asks every client for a
     * certificate (see {@link RestCertificates}), and {@link #rest()} presents the client's.
     */
    public void up(int taskManagers, boolean restTls, PrintStream out) throws Exception {
        if (!pids().isEmpty()) {
            throw new IllegalArgumentException(
                    "a cluster is already up ("
                            + dir
                            + "/pids); run 'snapshots cluster down' first");
        }
        // Both Flink lines build into the same target/: a distribution of the other line starts,
        // and fails much later (a 1.20 client cannot read a 2.x checkpoint's metadata).
        String flink = EnvironmentInformation.getVersion();
        if (!flinkClasspath().contains("/flink-runtime-" + flink + ".jar")) {
            throw new IllegalStateException(
                    dist
                            + " holds another Flink than the harness's "
                            + flink
                            + ": build deploy/flink-local with the harness's profile (-Pflink2 or"
                            + " none)");
        }
        // Every cluster starts empty: no stale buckets, checkpoints or logs.
        FileTrees.deleteRecursively(dir);
        int rpcPort = freePort();
        int restPort = freePort();
        String s3 = startS3Proxy(out);
        out.println("starting kinesalite and its shim ...");
        Kinesalite kinesis = Kinesalite.start(root, dir.resolve("logs"));
        kinesis.client().close(); // the processes stay: 'down' stops them by PID
        recordPid("kinesalite", kinesis.processes().get(0).pid());
        recordPid("kinesis-shim", kinesis.processes().get(1).pid());
        installPlugins();

        List<String> config =
                new ArrayList<>(
                        List.of(
                                "jobmanager.rpc.address: 127.0.0.1",
                                "jobmanager.bind-host: 127.0.0.1",
                                "taskmanager.bind-host: 127.0.0.1",
                                "taskmanager.host: 127.0.0.1",
                                "rest.address: 127.0.0.1",
                                "rest.bind-address: 127.0.0.1",
                                // The address every JobManager advertises; each binds its own port.
                                "jobmanager.rpc.port: " + rpcPort,
                                "jobmanager.memory.process.size: 1024m",
                                "taskmanager.memory.process.size: 1024m",
                                "taskmanager.numberOfTaskSlots: 2",
                                // A job given no parallelism takes this, as on ECS.
                                "parallelism.default: 2",
                                // Spread a job over every TaskManager, so losing any one of them
                                // hits it, as on ECS.
                                "cluster.evenly-spread-out-slots: true",
                                // A killed TaskManager is declared lost after 4 s instead of 50 s.
                                "heartbeat.interval: 1000",
                                "heartbeat.timeout: 4000",
                                // As on ECS: restarts without end, so a store outage of any length
                                // is waited out; capped at
                                // 10 s apart (ECS: Flink's 1 min) so a run here recovers soon after
                                // the store is back.
                                "restart-strategy.type: exponential-delay",
                                "restart-strategy.exponential-delay.max-backoff: 10 s",
                                // A JobManager replacing another may find the newest being
                                // deleted by the old one, and then takes an older one.
                                "state.checkpoints.num-retained: 3",
                                "state.savepoints.dir: s3://" + BUCKET + "/flink/savepoints",
                                "execution.checkpointing.externalized-checkpoint-retention: RETAIN_ON_CANCELLATION",
                                "s3.endpoint: " + s3,
                                "s3.path.style.access: true",
                                "s3.access-key: local",
                                "s3.secret-key: local"));
        config.addAll(MetricsPlugin.config(metricsDirectory()));
        // As on ECS: each process makes the checkpoints' file system as it starts, not on the
        // first task's thread (the distribution's plugin snapshots-warmup, deploy/warmup).
        config.add(
                "metrics.reporter.warmup.factory.class:"
                        + " dev.snapshots.warmup.FileSystemWarmUpFactory");
        config.add("metrics.reporter.warmup.uri: " + CHECKPOINTS);
        if (restTls) {
            out.println("making a throwaway CA and the REST API's certificates ...");
            config.addAll(RestCertificates.create(tlsDirectory()).jobManagerConfig());
        }
        Files.write(dir.resolve("conf/config.yaml"), config);

        Files.writeString(
                dir.resolve("endpoints.properties"),
                "rest="
                        + restAddress(restPort)
                        + "\ns3="
                        + s3
                        + "\nkinesis="
                        + kinesis.endpoint()
                        + "\n");
        start(
                "jobmanager-address",
                List.of(
                        java(),
                        "-Xmx32m",
                        "-cp",
                        System.getProperty("java.class.path"),
                        JobManagerAddress.class.getName(),
                        addressFile().toString(),
                        Integer.toString(rpcPort),
                        Integer.toString(restPort)));
        out.println(
                "starting the JobManager (REST and web UI on " + restAddress(restPort) + ") ...");
        pointAddressAt(startJobManager());
        for (int i = 1; i <= taskManagers; i++) {
            startTaskManager(i);
        }
        awaitTaskManagers(taskManagers, Duration.ofSeconds(90));
        out.printf(
                "cluster up: %d TaskManagers, REST %s, S3 %s (bucket %s), Kinesis %s; logs in %s%n",
                taskManagers,
                restAddress(restPort),
                s3,
                BUCKET,
                kinesis.endpoint(),
                dir.resolve("logs"));
        if (restTls) {
            out.println(
                    "the REST API asks for a client certificate; the command line presents one"
                            + " under\n  export "
                            + String.join(
                                    " ", RestCertificates.in(tlsDirectory()).clientEnvironment()));
        }
    }

    /** Where {@code up --rest-tls} keeps the REST API's stores; absent without TLS. */
    private Path tlsDirectory() {
        return dir.resolve("tls");
    }

    /** What a client of this cluster presents and trusts, if its REST API speaks TLS. */
    public Optional<RestTls> restTls() throws IOException {
        return Files.isDirectory(tlsDirectory())
                ? Optional.of(RestCertificates.in(tlsDirectory()).client())
                : Optional.empty();
    }

    /** The REST API at the address that names the current JobManager, as a client reaches it. */
    public FlinkRest rest() throws IOException {
        return rest(endpoints().get("rest"));
    }

    /** The REST API at {@code url} of this cluster, with the client's certificate under TLS. */
    public FlinkRest rest(String url) throws IOException {
        return new FlinkRest(url, restTls());
    }

    private String restAddress(int port) {
        return (Files.isDirectory(tlsDirectory()) ? "https" : "http") + "://127.0.0.1:" + port;
    }

    /** Every process's log, {@code <process>.log}. */
    public Path logsDirectory() {
        return dir.resolve("logs");
    }

    /** Where the cluster's TaskManagers keep the job's counters: one file per process. */
    public Path metricsDirectory() {
        return dir.resolve("metrics");
    }

    /**
     * The distribution's plugins, linked, and the metrics plugin, built from the harness's classes.
     */
    private void installPlugins() throws IOException {
        Path plugins = Files.createDirectories(dir.resolve("plugins"));
        try (Stream<Path> distributed = Files.list(dist.resolve("plugins"))) {
            for (Path plugin : distributed.toList()) {
                Files.createSymbolicLink(plugins.resolve(plugin.getFileName()), plugin);
            }
        }
        MetricsPlugin.install(plugins);
    }

    /**
     * Starts S3Proxy (filesystem backend under this cluster's directory) with bucket {@value
     * #BUCKET}; returns its endpoint.
     */
    public String startS3Proxy(PrintStream out) throws Exception {
        for (String sub : List.of("conf", "logs", "pids", "s3")) {
            Files.createDirectories(dir.resolve(sub));
        }
        String s3 = "http://127.0.0.1:" + freePort();
        out.println("starting S3Proxy on " + s3 + " ...");
        Files.write(
                dir.resolve("conf/s3proxy.properties"),
                List.of(
                        "s3proxy.endpoint=" + s3,
                        "s3proxy.authorization=none",
                        "jclouds.provider=filesystem-nio2",
                        "jclouds.filesystem.basedir=" + dir.resolve("s3")));
        long pid =
                start(
                        "s3proxy",
                        List.of(
                                java(),
                                "-Xmx256m",
                                "-jar",
                                dist.resolve("lib/s3proxy.jar").toString(),
                                "--properties",
                                dir.resolve("conf/s3proxy.properties").toString()));
        if (!answers("S3Proxy at " + s3, () -> get(s3 + "/"), Duration.ofSeconds(60), pid)) {
            throw new IOException("S3Proxy exited at start; see logs/s3proxy.out");
        }
        HttpResponse<String> bucket =
                HttpClient.newBuilder()
                        .version(HttpClient.Version.HTTP_1_1)
                        .build()
                        .send(
                                HttpRequest.newBuilder(URI.create(s3 + "/" + BUCKET))
                                        .PUT(HttpRequest.BodyPublishers.noBody())
                                        .build(),
                                HttpResponse.BodyHandlers.ofString());
        if (bucket.statusCode() != 200) {
            throw new IOException(
                    "creating bucket "
                            + BUCKET
                            + " failed: "
                            + bucket.statusCode()
                            + " "
                            + bucket.body());
        }
        return s3;
    }

    /**
     * Starts a new JobManager incarnation beside any that run, and waits for its REST API; the
     * address keeps naming the current one until {@link #pointAddressAt}. Returns its name.
     */
    public String startJobManager() throws Exception {
        int n = jobManagersStarted() + 1;
        String name = "jobmanager-" + n;
        Path incarnations = dir.resolve("jobmanagers");
        // A port freePort() saw free can be taken by an outgoing connection before the JobManager
        // binds it; the JobManager then exits, and is started again on other ports.
        for (int attempt = 1; ; attempt++) {
            int rpcPort = freePort();
            int restPort = freePort();
            Files.writeString(incarnations.resolve(name), rpcPort + " " + restPort);
            long pid =
                    start(
                            name,
                            flinkJvm(
                                    name,
                                    List.of("-Xmx768m"),
                                    "org.apache.flink.runtime.entrypoint"
                                            + ".StandaloneSessionClusterEntrypoint",
                                    List.of(
                                            "-D",
                                            "jobmanager.rpc.bind-port=" + rpcPort,
                                            "-D",
                                            "rest.port=" + restPort,
                                            "-D",
                                            "state.checkpoints.dir=" + CHECKPOINTS + "/jm-" + n)));
            FlinkRest rest = rest(jobManagerRest(name));
            if (answers(name, () -> rest.get("/overview"), Duration.ofSeconds(90), pid)) {
                return name;
            }
            if (attempt == 3) {
                throw new IOException(name + " exited at start 3 times; see logs/" + name + ".log");
            }
        }
    }

    /** How many JobManager incarnations this cluster started so far. */
    public int jobManagersStarted() throws IOException {
        try (Stream<Path> started =
                Files.list(Files.createDirectories(dir.resolve("jobmanagers")))) {
            return (int) started.count();
        }
    }

    /** A JobManager's own REST API, as its container's entrypoint reaches it (localhost:8081). */
    public String jobManagerRest(String name) throws IOException {
        String[] ports = Files.readString(dir.resolve("jobmanagers/" + name)).split(" ");
        return restAddress(Integer.parseInt(ports[1]));
    }

    /** The JobManager the address names now. */
    public String currentJobManager() throws IOException {
        return Files.readString(addressFile()).split(" ")[0];
    }

    /**
     * Makes the address name {@code name}, as a service-discovery record does once the old task is
     * deregistered: new connections go there, open ones stay until their JobManager ends them.
     */
    public void pointAddressAt(String name) throws IOException {
        Path next = dir.resolve("jobmanager.address.next");
        Files.writeString(next, name + " " + Files.readString(dir.resolve("jobmanagers/" + name)));
        Files.move(next, addressFile(), StandardCopyOption.ATOMIC_MOVE);
    }

    private Path addressFile() {
        return dir.resolve("jobmanager.address");
    }

    /**
     * Hands the address to {@code successor} and stops {@code old} as ECS stops a task; waits until
     * the TaskManagers have registered with the successor. Without HA the old JobManager's jobs end
     * with it; resuming them is {@code snapshots submit}'s work on the successor.
     */
    public void retireJobManager(String old, String successor, PrintStream out) throws Exception {
        pointAddressAt(successor);
        stopJobManager(old, Duration.ofSeconds(30), out);
        awaitRunningTaskManagers();
    }

    /**
     * What the image's entrypoint does on SIGTERM: {@code snapshots release} (the jobs are
     * cancelled and end before the JobManager does), then SIGTERM to the JobManager, SIGKILL after
     * {@code stopTimeout} (ECS's stopTimeout, counted from its SIGTERM).
     */
    public void stopJobManager(String name, Duration stopTimeout, PrintStream out)
            throws Exception {
        long start = System.nanoTime();
        JobLifecycle.run("release", new String[] {"--rest", jobManagerRest(name)}, out, Map.of());
        stop(name, stopTimeout.minusNanos(System.nanoTime() - start));
    }

    /**
     * SIGKILLs the JobManager and starts a new one, as ECS replaces a task that died: without HA it
     * comes back with no jobs, and the running TaskManagers register with it again. Resuming the
     * job is {@code snapshots submit}'s work.
     */
    public void restartJobManager(PrintStream out) throws Exception {
        String old = currentJobManager();
        kill(old);
        out.println(old + " killed; starting a new JobManager ...");
        String successor = startJobManager();
        pointAddressAt(successor);
        out.println(successor + " up, " + awaitRunningTaskManagers() + " TaskManagers registered");
    }

    /**
     * Replaces the JobManager as a deployment of the image does at minimum 0 % and maximum 100 %:
     * the old one is stopped first, then the new one starts.
     */
    public void rollJobManager(PrintStream out) throws Exception {
        String old = currentJobManager();
        stopJobManager(old, Duration.ofSeconds(30), out);
        out.println(old + " stopped; starting a new JobManager ...");
        String successor = startJobManager();
        pointAddressAt(successor);
        out.println(successor + " up, " + awaitRunningTaskManagers() + " TaskManagers registered");
    }

    private int taskManagers() throws IOException {
        return aliveTaskManagers().size();
    }

    /** The TaskManager processes this cluster started that still run, by name. */
    public List<String> aliveTaskManagers() throws IOException {
        return pids().keySet().stream().filter(n -> n.startsWith("taskmanager-")).sorted().toList();
    }

    /**
     * The running TaskManagers that hold a slot, by the JobManager's account: those whose loss a
     * job notices. Slots are spread over TaskManagers, but a TaskManager can still hold none.
     */
    public List<String> busyTaskManagers() throws IOException {
        List<String> alive = aliveTaskManagers();
        List<String> busy = new ArrayList<>();
        for (JsonNode tm : rest().get("/taskmanagers").path("taskmanagers")) {
            if (tm.path("freeSlots").asInt() < tm.path("slotsNumber").asInt()
                    && alive.contains(tm.path("id").asText())) {
                busy.add(tm.path("id").asText());
            }
        }
        return busy.stream().sorted().toList();
    }

    /** Starts TaskManager number {@code n}; also how a killed one is replaced, as ECS would. */
    public long startTaskManager(int n) throws Exception {
        List<String> jvm = new ArrayList<>();
        List<String> dynamic = new ArrayList<>();
        resourceParams(jvm, dynamic);
        // Named after its process, so the REST API's TaskManager ids say which process runs what.
        dynamic.addAll(List.of("-D", "taskmanager.resource-id=taskmanager-" + n));
        return start(
                "taskmanager-" + n,
                flinkJvm(
                        "taskmanager-" + n,
                        jvm,
                        "org.apache.flink.runtime.taskexecutor.TaskManagerRunner",
                        dynamic));
    }

    /** The JVM flags and dynamic properties Flink's own scripts would compute for a TaskManager. */
    private void resourceParams(List<String> jvm, List<String> dynamic) throws Exception {
        Process p =
                new ProcessBuilder(
                                java(),
                                "-cp",
                                flinkClasspath(),
                                "org.apache.flink.runtime.util.bash.BashJavaUtils",
                                "GET_TM_RESOURCE_PARAMS",
                                "--configDir",
                                dir.resolve("conf").toString())
                        .redirectErrorStream(true)
                        .start();
        List<String> results = new ArrayList<>();
        for (String line :
                new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).split("\n")) {
            if (line.startsWith("BASH_JAVA_UTILS_EXEC_RESULT:")) {
                results.add(line.substring("BASH_JAVA_UTILS_EXEC_RESULT:".length()).trim());
            }
        }
        if (p.waitFor() != 0 || results.size() < 2) {
            throw new IOException(
                    "BashJavaUtils did not compute TaskManager resources: " + results);
        }
        jvm.addAll(List.of(results.get(0).split(" +")));
        dynamic.addAll(List.of(results.get(1).split(" +")));
    }

    private List<String> flinkJvm(
            String name, List<String> jvm, String mainClass, List<String> args) throws IOException {
        List<String> cmd = new ArrayList<>();
        cmd.add(java());
        cmd.addAll(JAVA_17_OPENS);
        // Everything a Flink process keeps on disk defaults to java.io.tmpdir: its working
        // directory (tm_<resource id>, with a copy of every job jar it ran, and jm_<id> with every
        // upload), its I/O and shuffle directories, the RPC jar it unpacks. In /tmp they outlived
        // every run (45 GB once) and, named by resource id, were shared with any other cluster on
        // the machine. Here each process has its own, deleted once it is gone, as a task's disk is.
        cmd.add("-Djava.io.tmpdir=" + Files.createDirectories(scratch(name)));
        // The cluster's Kinesis is kinesalite, which speaks JSON only.
        cmd.add("-Daws.cborEnabled=false");
        cmd.addAll(jvm);
        cmd.add("-Dlog.file=" + dir.resolve("logs/" + name + ".log"));
        cmd.add(
                "-Dlog4j.configurationFile="
                        + root.resolve("job/harness/src/launcher/cluster-log4j2.properties"));
        cmd.addAll(
                List.of(
                        "-cp",
                        flinkClasspath(),
                        mainClass,
                        "--configDir",
                        dir.resolve("conf").toString()));
        cmd.addAll(args);
        return cmd;
    }

    /** Flink's own jars and logging only: job jars bring their libraries, loaded child-first. */
    private String flinkClasspath() {
        try {
            return Files.readString(dist.resolve("classpath.txt")).trim();
        } catch (IOException e) {
            throw new IllegalStateException(
                    dist.resolve("classpath.txt") + " is missing: build with ./mvnw install", e);
        }
    }

    private long start(String name, List<String> command) throws IOException {
        ProcessBuilder pb =
                new ProcessBuilder(command)
                        .redirectErrorStream(true)
                        .redirectOutput(dir.resolve("logs/" + name + ".out").toFile());
        pb.environment().put("FLINK_PLUGINS_DIR", dir.resolve("plugins").toString());
        // S3Proxy runs without authorization; the SDK's default chain still wants some credentials.
        pb.environment().put("AWS_ACCESS_KEY_ID", "local");
        pb.environment().put("AWS_SECRET_ACCESS_KEY", "local");
        pb.environment().put("AWS_REGION", "us-east-1");
        Process p = pb.start();
        recordPid(name, p.pid());
        return p.pid();
    }

    private void recordPid(String name, long pid) throws IOException {
        Files.writeString(dir.resolve("pids/" + name + ".pid"), Long.toString(pid));
    }

    /**
     * SIGKILLs a process this cluster started: no shutdown hook, no goodbye to the JobManager. Its
     * scratch directory goes with it; a replacement is a new process with a name of its own.
     * Synchronized with {@link #replaceExitedTaskManagers}, which must not take the process this
     * kills for one that ended by itself.
     */
    public synchronized void kill(String name) throws IOException {
        Long pid = pids().get(name);
        if (pid == null) {
            throw new IllegalArgumentException("no process " + name + " in " + dir.resolve("pids"));
        }
        ProcessHandle.of(pid)
                .ifPresent(
                        h -> {
                            h.destroyForcibly();
                            h.onExit().join();
                        });
        Files.deleteIfExists(dir.resolve("pids/" + name + ".pid"));
        FileTrees.deleteRecursively(scratch(name));
    }

    /**
     * Where process {@code name} keeps what Flink puts in java.io.tmpdir (its working directory
     * among them).
     */
    public Path scratch(String name) {
        return dir.resolve("tmp").resolve(name);
    }

    /** SIGTERM, then SIGKILL if {@code name} has not exited within {@code grace}. */
    private void stop(String name, Duration grace) throws Exception {
        Long pid = pids().get(name);
        if (pid == null) {
            throw new IllegalArgumentException("no process " + name + " in " + dir.resolve("pids"));
        }
        Optional<ProcessHandle> h = ProcessHandle.of(pid);
        if (h.isPresent()) {
            h.get().destroy();
            try {
                h.get().onExit().get(grace.toMillis(), TimeUnit.MILLISECONDS);
            } catch (TimeoutException e) {
                h.get().destroyForcibly();
                h.get().onExit().join();
            }
        }
        Files.deleteIfExists(dir.resolve("pids/" + name + ".pid"));
        FileTrees.deleteRecursively(scratch(name));
    }

    public void down(PrintStream out) throws Exception {
        Map<String, Long> pids = pids();
        for (Map.Entry<String, Long> e : pids.entrySet()) {
            Optional<ProcessHandle> h = ProcessHandle.of(e.getValue());
            h.ifPresent(ProcessHandle::destroy);
            out.printf(
                    "stopping %s (pid %d)%s%n",
                    e.getKey(), e.getValue(), h.isPresent() ? "" : ": already gone");
        }
        for (Map.Entry<String, Long> e : pids.entrySet()) {
            ProcessHandle.of(e.getValue())
                    .ifPresent(
                            h -> {
                                try {
                                    h.onExit().get(20, TimeUnit.SECONDS);
                                } catch (Exception timeout) {
                                    h.destroyForcibly();
                                    h.onExit().join();
                                }
                            });
            Files.deleteIfExists(dir.resolve("pids/" + e.getKey() + ".pid"));
        }
        // The logs stay for whoever looks into the run; the processes' scratch goes.
        FileTrees.deleteRecursively(dir.resolve("tmp"));
        out.println(pids.isEmpty() ? "no cluster is up" : "cluster down");
    }

    int status(PrintStream out) throws Exception {
        Map<String, Long> pids = pids();
        if (pids.isEmpty()) {
            out.println("no cluster is up");
            return 1;
        }
        out.printf("%-16s %8s  %s%n", "process", "pid", "state");
        pids.forEach(
                (name, pid) ->
                        out.printf(
                                "%-16s %8d  %s%n",
                                name,
                                pid,
                                ProcessHandle.of(pid)
                                        .map(h -> h.isAlive() ? "running" : "exited")
                                        .orElse("gone")));
        Map<String, String> endpoints = endpoints();
        out.println();
        endpoints.forEach((name, url) -> out.printf("%-8s %s%n", name, url));
        out.printf(
                "the REST address names %s (its own REST API: %s)%n",
                currentJobManager(), jobManagerRest(currentJobManager()));
        FlinkRest rest = rest(endpoints.get("rest"));
        JsonNode jobs;
        try {
            JsonNode overview = rest.get("/overview");
            out.println(
                    "taskmanagers "
                            + overview.path("taskmanagers").asInt()
                            + ", slots available "
                            + overview.path("slots-available").asInt());
            jobs = rest.get("/jobs/overview").path("jobs");
        } catch (IOException e) {
            out.println("the JobManager does not answer: " + e.getMessage());
            return 1;
        }
        out.printf(
                "%n%-32s %-10s %-24s %-10s %s%n",
                "job", "state", "name", "restarts", "latest checkpoint");
        for (JsonNode job : jobs) {
            String id = job.path("jid").asText();
            JsonNode latest =
                    rest.get("/jobs/" + id + "/checkpoints").path("latest").path("completed");
            out.printf(
                    "%-32s %-10s %-24s %-10d %s%n",
                    id,
                    job.path("state").asText(),
                    job.path("name").asText(),
                    rest.restarts(id),
                    latest.isMissingNode() || latest.isNull()
                            ? "none"
                            : "#"
                                    + latest.path("id").asLong()
                                    + " at "
                                    + Instant.ofEpochMilli(
                                            latest.path("trigger_timestamp").asLong())
                                    + " "
                                    + latest.path("external_path").asText());
        }
        if (jobs.isEmpty()) {
            out.println("(no jobs)");
        }
        return 0;
    }

    public Map<String, Long> pids() throws IOException {
        Map<String, Long> pids = new TreeMap<>();
        Path d = dir.resolve("pids");
        if (Files.isDirectory(d)) {
            try (var files = Files.list(d)) {
                for (Path p : files.toList()) {
                    pids.put(
                            p.getFileName().toString().replace(".pid", ""),
                            Long.parseLong(Files.readString(p).trim()));
                }
            }
        }
        return pids;
    }

    public Map<String, String> endpoints() throws IOException {
        Map<String, String> m = new TreeMap<>();
        for (String line : Files.readAllLines(dir.resolve("endpoints.properties"))) {
            int eq = line.indexOf('=');
            if (eq > 0) {
                m.put(line.substring(0, eq), line.substring(eq + 1));
            }
        }
        return m;
    }

    void awaitTaskManagers(int n, Duration timeout) throws Exception {
        awaitTaskManagers(() -> n, timeout);
    }

    /**
     * Until the JobManager the address names has as many TaskManagers as run now, counted at every
     * poll: a chaos run's kill thread may replace one meanwhile, and a count taken before (while
     * the killed one's file was gone and its replacement's not yet written) was never met.
     */
    private int awaitRunningTaskManagers() throws Exception {
        return awaitTaskManagers(this::taskManagers, Duration.ofSeconds(90));
    }

    private interface Count {
        int get() throws IOException;
    }

    private int awaitTaskManagers(Count n, Duration timeout) throws Exception {
        FlinkRest rest = rest();
        long deadline = System.nanoTime() + timeout.toNanos();
        while (System.nanoTime() < deadline) {
            replaceExitedTaskManagers();
            int registered = rest.get("/overview").path("taskmanagers").asInt();
            if (registered == n.get()) {
                return registered;
            }
            Thread.sleep(200);
        }
        throw new IOException(
                n.get()
                        + " TaskManagers did not register within "
                        + timeout
                        + "; see "
                        + dir.resolve("logs"));
    }

    /**
     * Starts again each TaskManager whose process ended by itself, as an ECS service replaces a
     * task that stopped. On a loaded machine one can fail to start ("Could not create actor
     * system", a 10 s timeout), and a chaos run's rolling update then waited in vain for it. The
     * one that ended keeps its log, renamed {@code taskmanager-N.exited-<millis>.log}.
     */
    private synchronized void replaceExitedTaskManagers() throws Exception {
        for (Map.Entry<String, Long> p : pids().entrySet()) {
            String name = p.getKey();
            if (name.startsWith("taskmanager-")
                    && !ProcessHandle.of(p.getValue()).map(ProcessHandle::isAlive).orElse(false)) {
                long now = System.currentTimeMillis();
                for (String log : List.of(".log", ".out")) {
                    Path file = logsDirectory().resolve(name + log);
                    if (Files.exists(file)) {
                        Files.move(file, logsDirectory().resolve(name + ".exited-" + now + log));
                    }
                }
                FileTrees.deleteRecursively(scratch(name));
                startTaskManager(Integer.parseInt(name.substring("taskmanager-".length())));
            }
        }
    }

    private interface Probe {
        void ask() throws IOException;
    }

    /**
     * Whether process {@code pid} answers {@code probe} within {@code timeout}: false once it has
     * exited without answering, an IOException if it still runs but has not answered.
     */
    private static boolean answers(String what, Probe probe, Duration timeout, long pid)
            throws Exception {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false)) {
            try {
                probe.ask();
                return true;
            } catch (IOException e) {
                if (System.nanoTime() > deadline) {
                    throw new IOException(what + " did not answer within " + timeout, e);
                }
                Thread.sleep(200);
            }
        }
        return false;
    }

    private static String get(String url) throws IOException {
        try {
            HttpResponse<String> r =
                    HttpClient.newBuilder()
                            .connectTimeout(Duration.ofSeconds(2))
                            .build()
                            .send(
                                    HttpRequest.newBuilder(URI.create(url))
                                            .timeout(Duration.ofSeconds(5))
                                            .build(),
                                    HttpResponse.BodyHandlers.ofString());
            return r.body();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException(e);
        }
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    private static String java() {
        return Path.of(System.getProperty("java.home"), "bin", "java").toString();
    }
}
