package dev.snapshots.harness.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import dev.snapshots.cli.deploy.FlinkRest;
import dev.snapshots.cli.deploy.JobLifecycle;
import dev.snapshots.cli.deploy.RestTls;
import dev.snapshots.harness.chaos.Chaos;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import javax.net.ssl.KeyManager;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The local cluster with its REST API behind TLS and mutual authentication ({@code cluster up
 * --rest-tls}, what the ECS module's {@code rest_tls} sets up): a client without the cluster's
 * client certificate gets nothing, whether it speaks plain HTTP (sent to https), HTTPS without a
 * certificate, or HTTPS with a certificate another authority signed; the command line, given the
 * certificate through the environment as on ECS, submits the bundled job, takes a savepoint and
 * releases it.
 */
class RestMutualTlsITCase {
    private static final Path ROOT = Path.of(System.getProperty("snapshots.root"));
    private static LocalCluster cluster;
    private static RestTls client;

    @BeforeAll
    static void up() throws Exception {
        cluster = new LocalCluster(ROOT, ROOT.resolve("target/cluster-rest-tls"));
        cluster.down(new PrintStream(new ByteArrayOutputStream())); // left by an aborted run
        cluster.up(1, true, System.out);
        client = cluster.restTls().orElseThrow();
    }

    @AfterAll
    static void down() throws Exception {
        cluster.down(System.out);
    }

    @Test
    void aClientWithoutTheClusterCertificateIsRefused() throws Exception {
        String https = cluster.endpoints().get("rest");
        assertThat(https).startsWith("https://127.0.0.1:");
        KeyStore trusted = load(client.truststore(), client.password());
        // Another authority's client, as a certificate of some other cluster would be.
        RestTls stranger =
                RestCertificates.create(ROOT.resolve("target/cluster-rest-tls/stranger-tls"))
                        .client();

        assertThat(overview(https, sslContext(null, trusted)))
                .as("HTTPS trusting the cluster's CA, without a client certificate")
                .startsWith("refused");
        assertThat(overview(https, sslContext(client, trusted)))
                .as("the same client, with the cluster's client certificate")
                .startsWith("200")
                .contains("\"taskmanagers\":1");
        assertThat(overview(https, sslContext(stranger, trusted)))
                .as("HTTPS with a client certificate another CA signed")
                .startsWith("refused");
        // Flink answers plain HTTP on its TLS port with a redirect to https, and nothing else.
        assertThat(overview(https.replace("https://", "http://"), null))
                .as("plain HTTP")
                .startsWith("301 ")
                .doesNotContain("taskmanagers");
        assertThat(cluster.rest().get("/overview").path("taskmanagers").asInt())
                .as("the command line's client, with the cluster's certificate")
                .isEqualTo(1);
    }

    @Test
    void submitSavepointAndReleaseWorkThroughTheCommandLineGivenTheCertificate() throws Exception {
        String rest = cluster.endpoints().get("rest");
        String id = JobLifecycle.jobId("telemetry", 1);
        // The bundled job, generating more windows than the test waits for: it runs until released.
        String submit =
                String.join(
                        " ",
                        "submit --rest",
                        rest,
                        "--jar",
                        ROOT.resolve(Chaos.JOB_JAR).toString(),
                        "--pipeline telemetry --store",
                        "s3://" + LocalCluster.BUCKET + "/rest-tls-" + UUID.randomUUID(),
                        "--endpoint",
                        cluster.endpoints().get("s3"),
                        "--windows 1000 --events-per-window 200 --events-per-second 100",
                        "--checkpoint-interval 1s");

        assertThat(cli(List.of(submit.split(" ")), true)).contains("job " + id, "from the start");
        FlinkRest asOperator = cluster.rest();
        awaitCheckpoint(asOperator, id);

        String refused = cli(List.of("release", "--rest", rest), false);
        assertThat(refused).contains("exit 1", RestTls.KEYSTORE);
        assertThat(asOperator.state(id))
                .as("after a release without the certificate")
                .isEqualTo("RUNNING");

        assertThat(cli(List.of("savepoint", "--rest", rest, "--job-version", "1"), true))
                .contains(
                        "exit 0",
                        "savepoint of job "
                                + id
                                + " (telemetry v1): s3://"
                                + LocalCluster.BUCKET
                                + "/");
        assertThat(cli(List.of("release", "--rest", rest), true))
                .contains("exit 0", "job " + id + " cancelled before this JobManager stops");
        assertThat(asOperator.jobStates()).containsEntry(id, "CANCELED");
    }

    /** Until the job has completed a checkpoint: it runs, and its TaskManager writes to S3. */
    private static void awaitCheckpoint(FlinkRest rest, String id) throws Exception {
        long deadline = System.nanoTime() + Duration.ofMinutes(2).toNanos();
        while (rest.latestCheckpointId(id) < 1) {
            assertThat(System.nanoTime()).as("job %s checkpointed", id).isLessThan(deadline);
            Thread.sleep(200);
        }
    }

    /**
     * {@code snapshots COMMAND} in a JVM of its own, as a container runs it: with the client's
     * stores in {@link RestTls}'s variables when {@code certificate}. Its exit status and output.
     */
    private static String cli(List<String> args, boolean certificate) throws Exception {
        List<String> command =
                new ArrayList<>(
                        List.of(
                                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                                "-Xmx256m",
                                "-cp",
                                System.getProperty("java.class.path"),
                                "dev.snapshots.cli.Cli"));
        command.addAll(args);
        ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true);
        Map<String, String> env = pb.environment();
        env.keySet().removeIf(name -> name.startsWith("SNAPSHOTS_REST"));
        if (certificate) {
            env.put(RestTls.KEYSTORE, client.keystore().toString());
            env.put(RestTls.TRUSTSTORE, client.truststore().toString());
            env.put(RestTls.PASSWORD, client.password());
        }
        Process p = pb.start();
        String said = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        String result = "exit " + p.waitFor() + "\n" + said;
        System.out.println("snapshots " + args.get(0) + ": " + result);
        return result;
    }

    /** GET /overview: "STATUS BODY", or "refused: WHY" if no answer came. */
    private static String overview(String base, SSLContext tls) throws InterruptedException {
        HttpClient.Builder http =
                HttpClient.newBuilder()
                        .version(HttpClient.Version.HTTP_1_1)
                        .connectTimeout(Duration.ofSeconds(5));
        if (tls != null) {
            http.sslContext(tls);
        }
        try {
            HttpResponse<String> response =
                    http.build()
                            .send(
                                    HttpRequest.newBuilder(URI.create(base + "/overview"))
                                            .timeout(Duration.ofSeconds(30))
                                            .build(),
                                    HttpResponse.BodyHandlers.ofString());
            return said(base, response.statusCode() + " " + response.body());
        } catch (IOException e) {
            return said(base, "refused: " + e);
        }
    }

    private static String said(String base, String answer) {
        System.out.println("GET " + base + "/overview: " + answer);
        return answer;
    }

    /** A context that trusts {@code trusted} and presents the key of {@code own}, if not null. */
    private static SSLContext sslContext(RestTls own, KeyStore trusted) throws Exception {
        KeyManager[] keys = null;
        if (own != null) {
            KeyManagerFactory factory =
                    KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
            factory.init(load(own.keystore(), own.password()), own.password().toCharArray());
            keys = factory.getKeyManagers();
        }
        TrustManagerFactory trust =
                TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        trust.init(trusted);
        SSLContext context = SSLContext.getInstance("TLS");
        context.init(keys, trust.getTrustManagers(), null);
        return context;
    }

    private static KeyStore load(Path store, String password) throws Exception {
        KeyStore keyStore = KeyStore.getInstance("PKCS12");
        try (InputStream in = Files.newInputStream(store)) {
            keyStore.load(in, password.toCharArray());
        }
        return keyStore;
    }
}
