package dev.snapshots.job.source.kinesis;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.snapshots.harness.cluster.Kinesalite;
import dev.snapshots.harness.testutils.KinesaliteServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.URLDecoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import software.amazon.awssdk.core.SdkBytes;
import software.amazon.awssdk.services.kinesis.KinesisClient;
import software.amazon.awssdk.services.kinesis.model.ShardIteratorType;

/**
 * The credentials providers of ECS and EKS at the AWS SDK's boundary: a local endpoint answers as
 * the ECS container credentials endpoint and as STS do (AssumeRole, AssumeRoleWithWebIdentity), and
 * the source's Kinesis client reads a record from kinesalite through a proxy that records how each
 * call was signed: with the key and session token those endpoints handed out.
 */
class KinesisCredentialsITCase {
    private static final Pattern SIGNED_BY = Pattern.compile("Credential=([^/]+)/");

    /** What the fake endpoints and the proxy were asked, one line per request. */
    private final List<String> seen = new CopyOnWriteArrayList<>();

    private HttpServer aws;
    private HttpServer proxy;
    private String stream;
    private String arn;

    @BeforeEach
    void start() throws IOException {
        aws = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        aws.createContext("/ecs-credentials", this::container);
        aws.createContext("/", this::sts);
        aws.start();
        proxy = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        proxy.createContext("/", this::kinesis);
        proxy.start();
        Kinesalite kinesalite = KinesaliteServer.get();
        stream = "credentials-" + Long.toHexString(System.nanoTime());
        arn = Kinesalite.createStream(kinesalite.client(), stream, 1);
        kinesalite
                .client()
                .putRecord(
                        b ->
                                b.streamName(stream)
                                        .partitionKey("p")
                                        .data(SdkBytes.fromUtf8String("the record")));
    }

    @AfterEach
    void stop() {
        aws.stop(0);
        proxy.stop(0);
        for (String p :
                List.of(
                        "aws.containerCredentialsFullUri",
                        "aws.containerAuthorizationToken",
                        "aws.roleArn",
                        "aws.webIdentityTokenFile")) {
            System.clearProperty(p);
        }
    }

    /**
     * ECS: AWS_CONTAINER_CREDENTIALS_FULL_URI and its token, as the agent sets them (here as the
     * system properties the SDK reads first).
     */
    @Test
    void theContainersRoleSignsTheReads() throws Exception {
        System.setProperty(
                "aws.containerCredentialsFullUri", endpoint(aws) + "/ecs-credentials/task");
        System.setProperty("aws.containerAuthorizationToken", "ecs-agent-token");

        assertThat(read(Map.of("aws.credentials.provider", "CONTAINER"))).isEqualTo("the record");

        assertThat(seen).contains("ecs GET /ecs-credentials/task authorization=ecs-agent-token");
        assertThat(kinesisCalls()).containsOnly("kinesis ASIACONTAINER token=container-token");
    }

    @Test
    void anAssumedRoleSignsTheReadsAndIsAssumedWithTheBaseProvidersKey() throws Exception {
        Map<String, String> options = new HashMap<>();
        options.put("aws.credentials.provider", "ASSUME_ROLE");
        options.put("aws.credentials.provider.role.arn", "arn:aws:iam::123456789012:role/reader");
        options.put("aws.credentials.provider.role.sessionName", "snapshots");
        options.put("aws.credentials.provider.role.externalId", "ext-7");
        options.put("aws.credentials.provider.role.stsEndpoint", endpoint(aws));
        options.put("aws.credentials.provider.role.provider", "BASIC");
        options.put("aws.credentials.provider.role.provider.basic.accesskeyid", "AKIABASE");
        options.put("aws.credentials.provider.role.provider.basic.secretkey", "base-secret");

        assertThat(read(options)).isEqualTo("the record");

        assertThat(seen)
                .contains(
                        "sts AssumeRole role=arn:aws:iam::123456789012:role/reader"
                                + " session=snapshots external=ext-7 signed-by=AKIABASE");
        assertThat(kinesisCalls()).containsOnly("kinesis ASIAASSUMED token=assumed-token");
    }

    /** EKS (IRSA): the role and token file from options, or from the pod's environment. */
    @Test
    void aWebIdentitySignsTheReadsFromOptionsOrFromTheEnvironment(@TempDir Path dir)
            throws Exception {
        Path token = Files.writeString(dir.resolve("token"), "eks-service-account-jwt");
        Map<String, String> options = new HashMap<>();
        options.put("aws.credentials.provider", "WEB_IDENTITY_TOKEN");
        options.put("aws.credentials.provider.role.stsEndpoint", endpoint(aws));
        options.put("aws.credentials.provider.role.sessionName", "pod-1");
        Map<String, String> explicit = new HashMap<>(options);
        explicit.put("aws.credentials.provider.role.arn", "arn:aws:iam::123456789012:role/irsa");
        explicit.put("aws.credentials.provider.webIdentityToken.file", token.toString());

        assertThat(read(explicit)).isEqualTo("the record");

        System.setProperty("aws.roleArn", "arn:aws:iam::123456789012:role/from-env");
        System.setProperty("aws.webIdentityTokenFile", token.toString());
        assertThat(read(options)).isEqualTo("the record");

        assertThat(seen)
                .contains(
                        "sts AssumeRoleWithWebIdentity role=arn:aws:iam::123456789012:role/irsa"
                                + " session=pod-1 token=eks-service-account-jwt unsigned",
                        "sts AssumeRoleWithWebIdentity"
                                + " role=arn:aws:iam::123456789012:role/from-env session=pod-1"
                                + " token=eks-service-account-jwt unsigned");
        assertThat(kinesisCalls()).containsOnly("kinesis ASIAWEBIDENTITY token=web-token");
    }

    /** The source's own client, through the recording proxy: the first record's data. */
    private String read(Map<String, String> options) {
        Properties props = new Properties();
        props.setProperty("aws.region", Kinesalite.REGION);
        props.setProperty("aws.endpoint", endpoint(proxy));
        props.putAll(options);
        KinesisShardSource.Settings settings =
                new KinesisShardSource.Settings(
                        arn, props, "TRIM_HORIZON", Duration.ofSeconds(1), Duration.ZERO, 0);
        try (KinesisClient kinesis = settings.client()) {
            String shard = kinesis.listShards(b -> b.streamARN(arn)).shards().get(0).shardId();
            String iterator =
                    kinesis.getShardIterator(
                                    b ->
                                            b.streamARN(arn)
                                                    .shardId(shard)
                                                    .shardIteratorType(
                                                            ShardIteratorType.TRIM_HORIZON))
                            .shardIterator();
            return kinesis.getRecords(b -> b.shardIterator(iterator))
                    .records()
                    .get(0)
                    .data()
                    .asUtf8String();
        }
    }

    private List<String> kinesisCalls() {
        return seen.stream().filter(s -> s.startsWith("kinesis ")).distinct().toList();
    }

    /** As the ECS agent's endpoint answers: the task role's temporary credentials as JSON. */
    private void container(HttpExchange exchange) throws IOException {
        seen.add(
                "ecs "
                        + exchange.getRequestMethod()
                        + " "
                        + exchange.getRequestURI().getPath()
                        + " authorization="
                        + exchange.getRequestHeaders().getFirst("Authorization"));
        respond(
                exchange,
                "application/json",
                "{\"AccessKeyId\":\"ASIACONTAINER\",\"SecretAccessKey\":\"container-secret\","
                        + "\"Token\":\"container-token\",\"Expiration\":\"2099-01-01T00:00:00Z\","
                        + "\"RoleArn\":\"arn:aws:iam::123456789012:role/task\"}");
    }

    /** As STS answers AssumeRole and AssumeRoleWithWebIdentity (query protocol, XML). */
    private void sts(HttpExchange exchange) throws IOException {
        Map<String, String> form = new HashMap<>();
        for (String pair :
                new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8)
                        .split("&")) {
            String[] kv = pair.split("=", 2);
            form.put(kv[0], URLDecoder.decode(kv.length > 1 ? kv[1] : "", StandardCharsets.UTF_8));
        }
        String action = form.get("Action");
        String authorization = exchange.getRequestHeaders().getFirst("Authorization");
        Matcher signer = SIGNED_BY.matcher(String.valueOf(authorization));
        String signed = signer.find() ? "signed-by=" + signer.group(1) : "unsigned";
        if (action.equals("AssumeRole")) {
            seen.add(
                    String.join(
                            " ",
                            "sts AssumeRole",
                            "role=" + form.get("RoleArn"),
                            "session=" + form.get("RoleSessionName"),
                            "external=" + form.get("ExternalId"),
                            signed));
            respond(exchange, "text/xml", stsResponse(action, "ASIAASSUMED", "assumed-token"));
        } else {
            seen.add(
                    String.join(
                            " ",
                            "sts " + action,
                            "role=" + form.get("RoleArn"),
                            "session=" + form.get("RoleSessionName"),
                            "token=" + form.get("WebIdentityToken"),
                            signed));
            respond(exchange, "text/xml", stsResponse(action, "ASIAWEBIDENTITY", "web-token"));
        }
    }

    private static String stsResponse(String action, String keyId, String token) {
        return "<"
                + action
                + "Response xmlns=\"https://sts.amazonaws.com/doc/2011-06-15/\"><"
                + action
                + "Result><AssumedRoleUser><AssumedRoleId>AROA1:s</AssumedRoleId>"
                + "<Arn>arn:aws:sts::123456789012:assumed-role/r/s</Arn></AssumedRoleUser>"
                + "<Credentials><AccessKeyId>"
                + keyId
                + "</AccessKeyId><SecretAccessKey>secret</SecretAccessKey><SessionToken>"
                + token
                + "</SessionToken><Expiration>2099-01-01T00:00:00Z</Expiration></Credentials></"
                + action
                + "Result><ResponseMetadata><RequestId>1</RequestId></ResponseMetadata></"
                + action
                + "Response>";
    }

    /** Forwards to kinesalite, noting the key that signed the call and its session token. */
    private void kinesis(HttpExchange exchange) throws IOException {
        Matcher signer =
                SIGNED_BY.matcher(
                        String.valueOf(exchange.getRequestHeaders().getFirst("Authorization")));
        seen.add(
                "kinesis "
                        + (signer.find() ? signer.group(1) : "unsigned")
                        + " token="
                        + exchange.getRequestHeaders().getFirst("X-Amz-Security-Token"));
        HttpRequest.Builder forward =
                HttpRequest.newBuilder(
                                URI.create(
                                        KinesaliteServer.get().endpoint()
                                                + exchange.getRequestURI()))
                        .POST(
                                HttpRequest.BodyPublishers.ofByteArray(
                                        exchange.getRequestBody().readAllBytes()));
        Set<String> restricted =
                Set.of("host", "content-length", "connection", "expect", "upgrade");
        exchange.getRequestHeaders()
                .forEach(
                        (name, values) -> {
                            if (!restricted.contains(name.toLowerCase())) {
                                values.forEach(v -> forward.header(name, v));
                            }
                        });
        HttpResponse<byte[]> response;
        try {
            response =
                    HttpClient.newHttpClient()
                            .send(forward.build(), HttpResponse.BodyHandlers.ofByteArray());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException(e);
        }
        respond(
                exchange,
                response.headers().firstValue("Content-Type").orElse("application/json"),
                response.statusCode(),
                response.body());
    }

    private static void respond(HttpExchange exchange, String type, String body)
            throws IOException {
        respond(exchange, type, 200, body.getBytes(StandardCharsets.UTF_8));
    }

    private static void respond(HttpExchange exchange, String type, int status, byte[] body)
            throws IOException {
        exchange.getResponseHeaders().set("Content-Type", type);
        exchange.sendResponseHeaders(status, body.length);
        try (OutputStream out = exchange.getResponseBody()) {
            out.write(body);
        }
    }

    private static String endpoint(HttpServer server) {
        return "http://127.0.0.1:" + server.getAddress().getPort();
    }
}
