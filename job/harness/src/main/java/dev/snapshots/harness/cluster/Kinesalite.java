package dev.snapshots.harness.cluster;

import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.flink.annotation.Internal;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.http.apache.ApacheHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.kinesis.KinesisClient;
import software.amazon.awssdk.services.kinesis.model.ResourceNotFoundException;
import software.amazon.awssdk.services.kinesis.model.StreamDescriptionSummary;
import software.amazon.awssdk.services.kinesis.model.StreamStatus;

/**
 * A real Kinesis endpoint on 127.0.0.1: kinesalite 3.3.3 (in memory) behind {@code
 * kinesis-shim.js}, two Node processes started from {@code deploy/kinesalite} ({@code npm ci} there
 * on first use). The local cluster, the chaos harness and the tests all start it through here.
 *
 * <p>The shim exists because kinesalite ignores {@code StreamARN}, the only stream identifier the
 * Flink connector's KinesisStreamsSource sends; the shim adds the matching {@code StreamName}.
 *
 * <p>kinesalite speaks JSON, not CBOR: loading this class sets {@code aws.cborEnabled=false}, which
 * the AWS SDK v2 (the connector's shaded copy included) reads when a client is built.
 *
 * <p>Streams live in account {@value #ACCOUNT_ID}, region us-east-1; ARNs look like {@code
 * arn:aws:kinesis:us-east-1:000000000000:stream/NAME}.
 */
@Internal
public final class Kinesalite {
    /**
     * kinesalite's default account ("0000-0000-0000" minus the dashes); pinned through
     * AWS_ACCOUNT_ID.
     */
    public static final String ACCOUNT_ID = "000000000000";

    public static final String REGION = "us-east-1";

    private static final Duration STARTUP = Duration.ofSeconds(60);
    private static final Duration NPM_INSTALL = Duration.ofMinutes(5);

    static {
        System.setProperty("aws.cborEnabled", "false");
    }

    private final String endpoint;
    private final List<Process> processes;
    private final KinesisClient client;

    private Kinesalite(String endpoint, List<Process> processes) {
        this.endpoint = endpoint;
        this.processes = processes;
        this.client = client(endpoint);
    }

    /**
     * Starts kinesalite and its shim from {@code repoRoot/deploy/kinesalite}, logging into {@code
     * logs}. The processes outlive this JVM unless {@link #stop()} is called.
     */
    public static Kinesalite start(Path repoRoot, Path logs) throws IOException {
        Path dir = repoRoot.resolve("deploy/kinesalite").toAbsolutePath().normalize();
        if (!Files.isRegularFile(dir.resolve("kinesis-shim.js"))) {
            throw new IllegalStateException("cannot find " + dir + "/kinesis-shim.js");
        }
        ensureInstalled(dir, logs);
        // --shardLimit: kinesalite counts shards across all streams (default limit 10), and one
        // server may serve many streams. --createStreamMs: ACTIVE sooner than the default 500 ms.
        Process kinesalite =
                startNode(
                        dir,
                        logs.resolve("kinesalite.log"),
                        "kinesalite-local.js",
                        "--port",
                        "0",
                        "--shardLimit",
                        "100000",
                        "--createStreamMs",
                        "50");
        int kinesalitePort =
                awaitPort(kinesalite, logs.resolve("kinesalite.log"), "kinesalite listening on ");
        Process shim =
                startNode(
                        dir,
                        logs.resolve("kinesis-shim.log"),
                        "kinesis-shim.js",
                        "--port",
                        "0",
                        "--target",
                        "http://127.0.0.1:" + kinesalitePort);
        int shimPort = awaitPort(shim, logs.resolve("kinesis-shim.log"), "shim listening on ");
        return new Kinesalite("http://127.0.0.1:" + shimPort, List.of(kinesalite, shim));
    }

    /**
     * The shim's plain-HTTP URL: give this to every Kinesis client, never kinesalite's own port.
     */
    public String endpoint() {
        return endpoint;
    }

    /** kinesalite first, then the shim. */
    public List<Process> processes() {
        return processes;
    }

    public KinesisClient client() {
        return client;
    }

    public void stop() {
        client.close();
        processes.forEach(Process::destroyForcibly);
    }

    /** A client for a kinesalite shim (JSON, region us-east-1, credentials local/local). */
    public static KinesisClient client(String endpoint) {
        return KinesisClient.builder()
                .endpointOverride(URI.create(endpoint))
                .region(Region.of(REGION))
                .credentialsProvider(
                        StaticCredentialsProvider.create(
                                AwsBasicCredentials.create("local", "local")))
                .httpClientBuilder(ApacheHttpClient.builder())
                .build();
    }

    /** Creates a stream, waits until it is ACTIVE and returns its ARN as kinesalite reports it. */
    public static String createStream(KinesisClient client, String name, int shards) {
        client.createStream(b -> b.streamName(name).shardCount(shards));
        Instant deadline = Instant.now().plusSeconds(30);
        while (true) {
            try {
                StreamDescriptionSummary s =
                        client.describeStreamSummary(b -> b.streamName(name))
                                .streamDescriptionSummary();
                if (s.streamStatus() == StreamStatus.ACTIVE) {
                    return s.streamARN();
                }
            } catch (ResourceNotFoundException e) {
                // not visible yet: keep polling
            }
            if (Instant.now().isAfter(deadline)) {
                throw new IllegalStateException("stream " + name + " not ACTIVE after 30 s");
            }
            sleep(20); // kinesalite flips CREATING to ACTIVE on a timer (--createStreamMs)
        }
    }

    /** node_modules is not committed: install the locked versions on first use. */
    private static void ensureInstalled(Path dir, Path logs) throws IOException {
        if (Files.isDirectory(dir.resolve("node_modules/kinesalite"))) {
            return;
        }
        run(
                dir,
                logs.resolve("npm.log"),
                "node",
                "--version"); // a clear error now rather than a puzzling one later
        run(dir, logs.resolve("npm.log"), "npm", "ci", "--no-audit", "--no-fund");
    }

    private static void run(Path dir, Path log, String... command) throws IOException {
        Process p;
        try {
            p =
                    new ProcessBuilder(command)
                            .directory(dir.toFile())
                            .redirectErrorStream(true)
                            .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()))
                            .start();
        } catch (IOException e) {
            throw new IllegalStateException(
                    "'"
                            + command[0]
                            + "' is not on the PATH: Node.js 20+ with npm runs the local"
                            + " Kinesis (kinesalite)",
                    e);
        }
        try {
            if (!p.waitFor(NPM_INSTALL.toSeconds(), TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new IllegalStateException(
                        String.join(" ", command)
                                + " in "
                                + dir
                                + " timed out: "
                                + Files.readString(log));
            }
        } catch (InterruptedException e) {
            p.destroyForcibly();
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
        if (p.exitValue() != 0) {
            throw new IllegalStateException(
                    String.join(" ", command)
                            + " in "
                            + dir
                            + " failed (exit "
                            + p.exitValue()
                            + "): "
                            + Files.readString(log));
        }
    }

    private static Process startNode(Path dir, Path log, String script, String... args)
            throws IOException {
        List<String> command = new ArrayList<>(List.of("node", script));
        command.addAll(List.of(args));
        ProcessBuilder pb =
                new ProcessBuilder(command)
                        .directory(dir.toFile())
                        .redirectErrorStream(true)
                        .redirectOutput(log.toFile());
        // Pin what kinesalite puts in ARNs, whatever the environment has set.
        pb.environment().put("AWS_ACCOUNT_ID", ACCOUNT_ID);
        pb.environment().put("AWS_REGION", REGION);
        pb.environment().remove("AWS_DEFAULT_REGION");
        return pb.start();
    }

    /**
     * Ready when the child prints its "listening on PORT" line (from inside its listen callback, so
     * the port is bound). Each child is started with port 0 and reports the port the OS chose, so
     * there is no race for a port between picking it and binding it.
     */
    private static int awaitPort(Process p, Path log, String marker) throws IOException {
        Pattern ready = Pattern.compile(Pattern.quote(marker) + "(\\d+)");
        Instant deadline = Instant.now().plus(STARTUP);
        while (Instant.now().isBefore(deadline)) {
            Matcher m = ready.matcher(Files.readString(log));
            if (m.find()) {
                return Integer.parseInt(m.group(1));
            }
            if (!p.isAlive()) {
                throw new IllegalStateException(
                        "node exited with "
                                + p.exitValue()
                                + " before printing '"
                                + marker
                                + "PORT': "
                                + Files.readString(log));
            }
            sleep(20);
        }
        p.destroyForcibly();
        throw new IllegalStateException(
                "no '"
                        + marker
                        + "' within "
                        + STARTUP.toSeconds()
                        + " s: "
                        + Files.readString(log));
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
