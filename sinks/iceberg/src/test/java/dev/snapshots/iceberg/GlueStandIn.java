package dev.snapshots.iceberg;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.node.ObjectNode;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.AwsCredentials;
import software.amazon.awssdk.auth.credentials.AwsCredentialsProvider;

/**
 * AWS Glue's Data Catalog as Iceberg's {@code GlueCatalog} reaches it through the AWS SDK: an HTTP
 * server on 127.0.0.1 speaking Glue's AWS JSON 1.1 protocol ({@code X-Amz-Target:
 * AWSGlue.<Operation>}, errors as {@code __type}), for the operations the catalog uses to create,
 * load and commit a table. It keeps Glue's documented rules that the exactly-once commit rests on:
 * an {@code UpdateTable} whose {@code VersionId} is not the table's current one is refused with
 * {@code ConcurrentModificationException}, a second {@code CreateTable} or {@code CreateDatabase}
 * with {@code AlreadyExistsException}, and a request may be throttled.
 *
 * <p>Lives beside the Iceberg tests rather than in the test kit: only Iceberg's catalog speaks
 * Glue, and the test kit stays free of the AWS SDK's Glue client that the tests put on the
 * classpath.
 */
final class GlueStandIn implements AutoCloseable {
    static final String ACCESS_KEY = "glue-test-key";
    private static final String CATALOG_ID = "123456789012";
    private static final ObjectMapper JSON = new ObjectMapper();

    private final HttpServer server;
    private final ExecutorService threads = Executors.newFixedThreadPool(8);
    private final Map<String, ObjectNode> databases = new TreeMap<>();
    private final Map<String, ObjectNode> tables = new TreeMap<>();
    private final AtomicReference<Hold> hold = new AtomicReference<>();
    private final AtomicInteger throttled = new AtomicInteger();
    private final AtomicInteger staleUpdates = new AtomicInteger();
    private volatile double throttling;
    private Random dice = new Random(0);

    GlueStandIn() throws IOException {
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        server.setExecutor(threads); // several at once: a held request must not block the others
        server.createContext("/", this::answer);
        server.start();
    }

    /**
     * The catalog properties of Iceberg's GlueCatalog pointed at this stand-in, with static test
     * credentials: the SDK signs each request as it would for Glue.
     */
    Map<String, String> catalog() {
        Map<String, String> p = new TreeMap<>();
        p.put("type", "glue");
        p.put("glue.endpoint", "http://127.0.0.1:" + server.getAddress().getPort());
        p.put("client.region", "eu-west-1");
        p.put("client.credentials-provider", TestCredentials.class.getName());
        return p;
    }

    /**
     * Answers {@code fraction} of the requests' first attempts with Glue's 400 {@code
     * ThrottlingException}, chosen by a seeded die. First attempts only: the SDK's retry must get
     * through, so a test's outcome never depends on the die.
     */
    synchronized void throttle(double fraction, long seed) {
        throttling = fraction;
        dice = new Random(seed);
    }

    /** Requests answered with ThrottlingException so far. */
    int throttled() {
        return throttled.get();
    }

    /** A table's Parameters, where a Glue table names its Iceberg metadata. */
    synchronized Map<String, String> tableParameters(String database, String name) {
        Map<String, String> parameters = new TreeMap<>();
        tables.get(database + "." + name)
                .path("Parameters")
                .fields()
                .forEachRemaining(e -> parameters.put(e.getKey(), e.getValue().asText()));
        return parameters;
    }

    /** UpdateTable requests refused for a stale VersionId so far. */
    int staleUpdates() {
        return staleUpdates.get();
    }

    /**
     * Holds the next UpdateTable, before its VersionId is checked, until released: the moment two
     * committers race for, made to order.
     */
    Hold holdNextUpdate() {
        Hold h = new Hold();
        hold.set(h);
        return h;
    }

    /** An UpdateTable held on its way in. */
    static final class Hold {
        private final CountDownLatch arrived = new CountDownLatch(1);
        private final CountDownLatch released = new CountDownLatch(1);

        void awaitArrival() throws InterruptedException {
            if (!arrived.await(60, TimeUnit.SECONDS)) {
                throw new IllegalStateException("no UpdateTable arrived within 60 s");
            }
        }

        void release() {
            released.countDown();
        }
    }

    private void answer(HttpExchange exchange) throws IOException {
        try (exchange;
                InputStream in = exchange.getRequestBody()) {
            JsonNode request = JSON.readTree(in.readAllBytes());
            String target = String.valueOf(exchange.getRequestHeaders().getFirst("X-Amz-Target"));
            String auth = String.valueOf(exchange.getRequestHeaders().getFirst("Authorization"));
            String attempt =
                    String.valueOf(exchange.getRequestHeaders().getFirst("amz-sdk-request"));
            Reply reply;
            if (!auth.startsWith("AWS4-HMAC-SHA256 Credential=" + ACCESS_KEY + "/")) {
                reply = error("UnrecognizedClientException", "The security token is invalid.");
            } else if (attempt.startsWith("attempt=1;") && throttleNow()) {
                throttled.incrementAndGet();
                reply = error("ThrottlingException", "Rate exceeded");
            } else if (!target.startsWith("AWSGlue.")) {
                reply = error("UnknownOperationException", target);
            } else {
                reply = operation(target.substring("AWSGlue.".length()), request);
            }
            byte[] body = reply.body().toString().getBytes(StandardCharsets.UTF_8);
            exchange.getResponseHeaders().set("Content-Type", "application/x-amz-json-1.1");
            exchange.getResponseHeaders().set("x-amzn-RequestId", UUID.randomUUID().toString());
            exchange.sendResponseHeaders(reply.status(), body.length);
            exchange.getResponseBody().write(body);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private synchronized boolean throttleNow() {
        return dice.nextDouble() < throttling;
    }

    private Reply operation(String name, JsonNode request) throws InterruptedException {
        if (name.equals("UpdateTable")) {
            Hold h = hold.getAndSet(null);
            if (h != null) {
                h.arrived.countDown();
                h.released.await();
            }
        }
        synchronized (this) {
            return switch (name) {
                case "CreateDatabase" -> createDatabase(request.path("DatabaseInput"));
                case "GetDatabase" -> getDatabase(request.path("Name").asText());
                case "CreateTable" -> createTable(request);
                case "GetTable" -> getTable(request);
                case "UpdateTable" -> updateTable(request);
                default -> error("UnknownOperationException", "AWSGlue." + name);
            };
        }
    }

    private Reply createDatabase(JsonNode input) {
        String name = input.path("Name").asText();
        if (databases.containsKey(name)) {
            return error("AlreadyExistsException", "Database already exists.");
        }
        ObjectNode database = input.deepCopy();
        database.put("CreateTime", now()).put("CatalogId", CATALOG_ID);
        databases.put(name, database);
        return ok(JSON.createObjectNode());
    }

    private Reply getDatabase(String name) {
        ObjectNode database = databases.get(name);
        if (database == null) {
            return error("EntityNotFoundException", "Database " + name + " not found.");
        }
        return ok(JSON.createObjectNode().set("Database", database));
    }

    private Reply createTable(JsonNode request) {
        String database = request.path("DatabaseName").asText();
        JsonNode input = request.path("TableInput");
        String key = key(database, input.path("Name"));
        if (!databases.containsKey(database)) {
            return error("EntityNotFoundException", "Database " + database + " not found.");
        }
        if (tables.containsKey(key)) {
            return error("AlreadyExistsException", "Table already exists.");
        }
        ObjectNode table = input.deepCopy();
        table.put("DatabaseName", database)
                .put("CatalogId", CATALOG_ID)
                .put("CreateTime", now())
                .put("UpdateTime", now())
                .put("VersionId", "1");
        tables.put(key, table);
        return ok(JSON.createObjectNode());
    }

    private Reply getTable(JsonNode request) {
        String key = key(request.path("DatabaseName").asText(), request.path("Name"));
        ObjectNode table = tables.get(key);
        if (table == null) {
            return error("EntityNotFoundException", "Table " + key + " not found.");
        }
        return ok(JSON.createObjectNode().set("Table", table));
    }

    /** Glue's optimistic lock: a VersionId, when given, must be the table's current one. */
    private Reply updateTable(JsonNode request) {
        String database = request.path("DatabaseName").asText();
        JsonNode input = request.path("TableInput");
        String key = key(database, input.path("Name"));
        ObjectNode current = tables.get(key);
        if (current == null) {
            return error("EntityNotFoundException", "Table " + key + " not found.");
        }
        String version = current.path("VersionId").asText();
        if (request.has("VersionId") && !request.path("VersionId").asText().equals(version)) {
            staleUpdates.incrementAndGet();
            return error(
                    "ConcurrentModificationException",
                    "Update table failed due to concurrent modifications.");
        }
        ObjectNode table = input.deepCopy();
        table.put("DatabaseName", database)
                .put("CatalogId", CATALOG_ID)
                .set("CreateTime", current.path("CreateTime"));
        table.put("UpdateTime", now()).put("VersionId", Long.toString(Long.parseLong(version) + 1));
        tables.put(key, table);
        return ok(JSON.createObjectNode());
    }

    private static String key(String database, JsonNode table) {
        return database + "." + table.asText();
    }

    /** JSON 1.1 sends timestamps as epoch seconds. */
    private static double now() {
        return System.currentTimeMillis() / 1000.0;
    }

    private record Reply(int status, JsonNode body) {}

    private static Reply ok(JsonNode body) {
        return new Reply(200, body);
    }

    private static Reply error(String type, String message) {
        return new Reply(400, JSON.createObjectNode().put("__type", type).put("Message", message));
    }

    @Override
    public void close() {
        Hold h = hold.getAndSet(null);
        if (h != null) {
            h.release();
        }
        server.stop(0);
        threads.shutdownNow();
    }

    /** Static credentials for the catalog's Glue client, as Iceberg loads a provider by name. */
    public static final class TestCredentials implements AwsCredentialsProvider {
        private static final AwsCredentials KEY =
                AwsBasicCredentials.create(ACCESS_KEY, "glue-test-secret");

        private TestCredentials() {}

        public static TestCredentials create() {
            return new TestCredentials();
        }

        @Override
        public AwsCredentials resolveCredentials() {
            return KEY;
        }
    }
}
