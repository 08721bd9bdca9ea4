package dev.snapshots.job.testutils;

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
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.http.apache.ApacheHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.kinesis.KinesisClient;
import software.amazon.awssdk.services.kinesis.model.ResourceNotFoundException;
import software.amazon.awssdk.services.kinesis.model.StreamDescriptionSummary;
import software.amazon.awssdk.services.kinesis.model.StreamStatus;

/**
 * A real Kinesis endpoint for tests: kinesalite 3.3.3 (in memory) behind kinesis-shim.js, both
 * Node child processes on 127.0.0.1, started once per test JVM and destroyed (by their Process
 * handles) when it exits. The Node sources are in {@code job/src/test/node}; node_modules is
 * installed there with {@code npm ci} on first use.
 *
 * <p>The shim exists because kinesalite ignores {@code StreamARN}, the only stream identifier the
 * Flink connector's KinesisStreamsSource sends; the shim adds the matching {@code StreamName}.
 *
 * <p>Clients must speak JSON, not CBOR, to kinesalite: loading this class sets the system property
 * {@code aws.cborEnabled=false}, which the AWS SDK v2 (the connector's shaded copy included) reads
 * when a client is built. Build Kinesis clients, Flink sources included, only after {@link #get()}.
 *
 * <p>Streams live in kinesalite's account {@value #ACCOUNT_ID}, region us-east-1; ARNs look like
 * {@code arn:aws:kinesis:us-east-1:000000000000:stream/NAME}.
 */
public final class KinesaliteServer {
    /** kinesalite's default account ("0000-0000-0000" minus the dashes); pinned through AWS_ACCOUNT_ID. */
    public static final String ACCOUNT_ID = "000000000000";
    public static final String REGION = "us-east-1";

    private static final Duration STARTUP = Duration.ofSeconds(60);
    private static final Duration NPM_INSTALL = Duration.ofMinutes(5);
    private static KinesaliteServer instance;

    static {
        System.setProperty("aws.cborEnabled", "false");
    }

    private final String endpoint;
    private final KinesisClient client;

    private KinesaliteServer(String endpoint) {
        this.endpoint = endpoint;
        this.client = KinesisClient.builder()
                .endpointOverride(URI.create(endpoint))
                .region(Region.of(REGION))
                .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create("local", "local")))
                .httpClientBuilder(ApacheHttpClient.builder())
                .build();
    }

    /** The shared server, started on first use. */
    public static synchronized KinesaliteServer get() {
        if (instance == null) {
            instance = start();
        }
        return instance;
    }

    /** The shim's plain-HTTP URL: give this to every Kinesis client, never kinesalite's own port. */
    public String endpoint() {
        return endpoint;
    }

    /** A client for the shim (JSON, region us-east-1, credentials local/local). */
    public KinesisClient client() {
        return client;
    }

    /** Creates a stream, waits until it is ACTIVE and returns its ARN as kinesalite reports it. */
    public String createStream(String name, int shards) {
        client.createStream(b -> b.streamName(name).shardCount(shards));
        Instant deadline = Instant.now().plusSeconds(30);
        while (true) {
            try {
                StreamDescriptionSummary s = client.describeStreamSummary(b -> b.streamName(name)).streamDescriptionSummary();
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

    private static KinesaliteServer start() {
        Path dir = nodeDir();
        try {
            ensureInstalled(dir);
            Path logs = Files.createTempDirectory("kinesalite");
            // --shardLimit: kinesalite counts shards across all streams (default limit 10), and one server
            // serves every test in the JVM. --createStreamMs: ACTIVE sooner than the default 500 ms.
            Process kinesalite = startNode(dir, logs.resolve("kinesalite.log"), "kinesalite-local.js",
                    "--port", "0", "--shardLimit", "100000", "--createStreamMs", "50");
            int kinesalitePort = awaitPort(kinesalite, logs.resolve("kinesalite.log"), "kinesalite listening on ");
            Process shim = startNode(dir, logs.resolve("shim.log"), "kinesis-shim.js",
                    "--port", "0", "--target", "http://127.0.0.1:" + kinesalitePort);
            int shimPort = awaitPort(shim, logs.resolve("shim.log"), "shim listening on ");
            return new KinesaliteServer("http://127.0.0.1:" + shimPort);
        } catch (IOException e) {
            throw new IllegalStateException("could not start kinesalite from " + dir, e);
        }
    }

    /** job/src/test/node, from the module directory (failsafe's working directory) or the repository root. */
    private static Path nodeDir() {
        Path cwd = Path.of("").toAbsolutePath();
        for (Path candidate : List.of(cwd.resolve("src/test/node"), cwd.resolve("job/src/test/node"))) {
            if (Files.isRegularFile(candidate.resolve("kinesis-shim.js"))) {
                return candidate;
            }
        }
        throw new IllegalStateException("cannot find job/src/test/node (with kinesis-shim.js) from " + cwd);
    }

    /** node_modules is not committed: install the locked versions on first use. */
    private static void ensureInstalled(Path dir) throws IOException {
        if (Files.isDirectory(dir.resolve("node_modules/kinesalite"))) {
            return;
        }
        run(dir, "node", "--version"); // a clear error now rather than a puzzling one later
        if (Files.exists(dir.resolve("package-lock.json"))) {
            run(dir, "npm", "ci", "--no-audit", "--no-fund");
        } else {
            run(dir, "npm", "install", "--no-audit", "--no-fund");
        }
    }

    private static void run(Path dir, String... command) throws IOException {
        Path log = Files.createTempFile("kinesalite-npm", ".log");
        Process p;
        try {
            p = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true)
                    .redirectOutput(log.toFile()).start();
        } catch (IOException e) {
            throw new IllegalStateException("'" + command[0] + "' is not on the PATH: Node.js 20+ with npm is needed"
                    + " for the Kinesis tests (kinesalite)", e);
        }
        try {
            if (!p.waitFor(NPM_INSTALL.toSeconds(), TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new IllegalStateException(String.join(" ", command) + " in " + dir + " timed out: " + Files.readString(log));
            }
        } catch (InterruptedException e) {
            p.destroyForcibly();
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
        if (p.exitValue() != 0) {
            throw new IllegalStateException(String.join(" ", command) + " in " + dir + " failed (exit " + p.exitValue() + "): "
                    + Files.readString(log));
        }
    }

    private static Process startNode(Path dir, Path log, String script, String... args) throws IOException {
        List<String> command = new ArrayList<>(List.of("node", script));
        command.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true)
                .redirectOutput(log.toFile());
        // Pin what kinesalite puts in ARNs, whatever the test environment has set.
        pb.environment().put("AWS_ACCOUNT_ID", ACCOUNT_ID);
        pb.environment().put("AWS_REGION", REGION);
        pb.environment().remove("AWS_DEFAULT_REGION");
        Process p = pb.start();
        Runtime.getRuntime().addShutdownHook(new Thread(p::destroyForcibly));
        return p;
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
                throw new IllegalStateException("node exited with " + p.exitValue() + " before printing '" + marker
                        + "PORT': " + Files.readString(log));
            }
            sleep(20);
        }
        p.destroyForcibly();
        throw new IllegalStateException("no '" + marker + "' within " + STARTUP.toSeconds() + " s: " + Files.readString(log));
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
