package dev.snapshots.job.sql;

import static dev.snapshots.job.sql.OrdersFixture.assertOnePartPerWindowAndBucket;
import static dev.snapshots.job.sql.OrdersFixture.partHashes;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.snapshots.harness.cluster.Kinesalite;
import dev.snapshots.harness.cluster.LocalCluster;
import dev.snapshots.harness.testutils.KinesaliteServer;
import dev.snapshots.key.ObjectKeys;
import dev.snapshots.store.ObjectStore;
import dev.snapshots.store.StoreSpec;
import java.io.IOException;
import java.math.BigDecimal;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.apache.avro.generic.GenericRecord;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Flink's own SQL Client runs the connectors as a user runs it: {@code SqlClient -f script.sql},
 * embedded mode, in a JVM of its own whose classpath is what a distribution's {@code
 * bin/sql-client.sh} builds (deploy/flink-local's {@code lib/}, then the client, its gateway and
 * flink-python from {@code opt/}), with {@code FLINK_CONF_DIR} naming what the client needs: a
 * {@code config.yaml} (it refuses to start without one) and {@code log4j-cli.properties}. The
 * {@code config.yaml} says {@code execution.target: local}: the job runs on a MiniCluster inside
 * the client's JVM, the stand-in for the session cluster a user's {@code config.yaml} names. The
 * SQL jar comes with {@code --jar}, or on the classpath as Flink's {@code lib/} puts it. The SQL
 * Gateway's REST endpoint runs the same script, with the same conf directory.
 *
 * <p>The client exits 0 even when a statement fails (Flink 1.20): a run is judged by its output and
 * the store. Tagged {@code long}, as {@link SqlJarITCase}: the shaded SQL jar is built by {@code
 * -Plong} and {@code -Prelease} only.
 */
@Tag("long")
class SqlClientITCase {
    private static final Path ROOT = Path.of(System.getProperty("snapshots.root"));
    private static final Path DIST = ROOT.resolve("deploy/flink-local/target");
    private static final Path EXAMPLE = ROOT.resolve("examples/payments/payments.sql");
    private static final String DONE = "[INFO] Complete execution of the SQL update statement.";
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final HttpClient HTTP = HttpClient.newHttpClient();

    private static final long START = Instant.parse("2026-12-01T00:00:00Z").toEpochMilli();
    private static final long MINUTE = 60_000;
    private static final DateTimeFormatter SQL_TIME =
            DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss.SSS", Locale.ROOT)
                    .withZone(ZoneOffset.UTC);

    /** Where the SQL jar is: given with {@code --jar}, or on the classpath as in {@code lib/}. */
    private enum Jar {
        FLAG,
        LIB
    }

    @TempDir Path tmp;

    private int runs;
    private Path out;
    private Path log;

    /**
     * examples/payments/payments.sql, run twice into one store: with {@code --jar}, then with the
     * jar in {@code lib/}. The first run publishes the reference, one object per (window, bucket);
     * the second computes every part again and adds nothing.
     */
    @Test
    void thePaymentsExampleRunTwiceIsPublishedOnceAndEqualsTheReference() throws Exception {
        List<Payment> payments = payments(new Random(7), 5);
        StoreSpec store = StoreSpec.local(Files.createDirectories(tmp.resolve("store")));
        Path script = example(payments, store);

        assertThat(await(start(Jar.FLAG, script, List.of(), Map.of()))).contains(DONE);
        int parts =
                assertOnePartPerWindowAndBucket(
                        store,
                        "payments",
                        1,
                        "merchant",
                        SqlClientITCase::row,
                        reference(payments));
        Map<String, String> published = partHashes(store, "payments", 1);

        assertThat(await(start(Jar.LIB, script, List.of(), Map.of()))).contains(DONE);
        assertThat(partHashes(store, "payments", 1))
                .as("the first run's parts and manifests, byte for byte, and nothing else")
                .isEqualTo(published);
        assertThat(collapsed(store))
                .as("every part computed again by the second run, and collapsed")
                .hasSize(parts)
                .isEqualTo(
                        new TreeSet<>(
                                published.keySet().stream()
                                        .filter(k -> ObjectKeys.parse(k).isPresent())
                                        .toList()));
    }

    /**
     * examples/payments/payments.sql sent statement by statement to the SQL Gateway's REST endpoint
     * (its v1 API, one session), the jar in {@code lib/}: the reference, one object per (window,
     * bucket).
     */
    @Test
    void thePaymentsExampleSentToTheSqlGatewayIsPublishedAsTheReference() throws Exception {
        List<Payment> payments = payments(new Random(11), 3);
        StoreSpec store = StoreSpec.local(Files.createDirectories(tmp.resolve("store")));
        Path script = example(payments, store);
        Process gateway =
                flink(
                        "org.apache.flink.table.gateway.SqlGateway",
                        List.of(SqlJarITCase.SQL_JAR.toString(), opt("flink-sql-gateway")),
                        List.of(),
                        List.of(
                                "-Dsql-gateway.endpoint.rest.address=127.0.0.1",
                                "-Dsql-gateway.endpoint.rest.port=0"),
                        Map.of());
        try {
            String sessions = "http://127.0.0.1:" + restPort(gateway) + "/v1/sessions";
            String session = post(sessions, JSON.createObjectNode()).get("sessionHandle").asText();
            String operations = sessions + "/" + session + "/operations/";
            for (SqlScript.Statement statement :
                    SqlScript.parse(Files.readString(script)).statements()) {
                String operation =
                        post(
                                        sessions + "/" + session + "/statements",
                                        JSON.createObjectNode().put("statement", statement.text()))
                                .get("operationHandle")
                                .asText();
                String status = awaitOperation(operations + operation);
                assertThat(status)
                        .as(
                                "line %d: %s",
                                statement.line(),
                                get(operations + operation + "/result/0?rowFormat=JSON"))
                        .isEqualTo("FINISHED");
            }
        } finally {
            gateway.destroy();
            if (!gateway.waitFor(1, TimeUnit.MINUTES)) {
                gateway.destroyForcibly().waitFor();
            }
        }
        assertOnePartPerWindowAndBucket(
                store, "payments", 1, "merchant", SqlClientITCase::row, reference(payments));
    }

    /** The example with the test's store, beside {@code payments} as its input. */
    private Path example(List<Payment> payments, StoreSpec store) throws IOException {
        Files.write(tmp.resolve("payments.jsonl"), payments.stream().map(Payment::json).toList());
        Path script = tmp.resolve("payments.sql");
        Files.writeString(
                script,
                OrdersFixture.option(Files.readString(EXAMPLE), "store", store.uri().toString()));
        return script;
    }

    /** The port the gateway's REST endpoint says, in its log, that it listens on. */
    private int restPort(Process gateway) throws Exception {
        Pattern listening = Pattern.compile("SqlGatewayRestEndpoint .* listening at .*:(\\d+)");
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(2);
        while (true) {
            if (Files.exists(log)) {
                for (String line : Files.readAllLines(log)) {
                    Matcher m = listening.matcher(line);
                    if (m.find()) {
                        return Integer.parseInt(m.group(1));
                    }
                }
            }
            if (!gateway.isAlive() || System.nanoTime() > deadline) {
                throw new AssertionError(
                        "the gateway did not listen within 2 minutes:\n" + output());
            }
            Thread.sleep(200);
        }
    }

    /** Until the operation ends: its status. */
    private static String awaitOperation(String operation) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(3);
        while (true) {
            String status = JSON.readTree(get(operation + "/status")).get("status").asText();
            if (!List.of("INITIALIZED", "PENDING", "RUNNING").contains(status)) {
                return status;
            }
            assertThat(System.nanoTime()).as("%s ended", operation).isLessThan(deadline);
            Thread.sleep(200);
        }
    }

    private static JsonNode post(String uri, JsonNode body) throws Exception {
        HttpResponse<String> response =
                HTTP.send(
                        HttpRequest.newBuilder(URI.create(uri))
                                .header("Content-Type", "application/json")
                                .POST(HttpRequest.BodyPublishers.ofString(body.toString()))
                                .build(),
                        HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode()).as("POST %s: %s", uri, response.body()).isEqualTo(200);
        return JSON.readTree(response.body());
    }

    /** The body, whatever the status: a failed operation's result is its error. */
    private static String get(String uri) throws Exception {
        return HTTP.send(
                        HttpRequest.newBuilder(URI.create(uri)).build(),
                        HttpResponse.BodyHandlers.ofString())
                .body();
    }

    /**
     * examples/orders/orders-kinesis.sql against kinesalite, with the scenario of {@link
     * KinesisTableITCase}: its on-time orders as the reference says, every bad and late record a
     * dead letter under {@code _deadletter/}. The source never ends: the client runs until both
     * kinds are published past the last window, then is stopped as a user stops it. The client
     * plans the INSERT with executeSql, which keeps what the query's sinks reach: the dead letters'
     * sink among it.
     */
    @Test
    void theKinesisExamplePublishesTheReferenceAndEveryDeadLetter() throws Exception {
        Kinesalite kinesis = KinesaliteServer.get();
        KinesisTableITCase.Produced produced =
                KinesisTableITCase.produce(kinesis.client(), "client-orders");
        StoreSpec store = StoreSpec.local(Files.createDirectories(tmp.resolve("store")));
        Path script = tmp.resolve("orders-kinesis.sql");
        Files.writeString(
                script,
                "SET 'table.dml-sync' = 'true';\n"
                        + KinesisTableITCase.script(produced.arn(), kinesis.endpoint(), store));

        // kinesalite speaks JSON only, and takes any credentials.
        Process client =
                start(
                        Jar.FLAG,
                        script,
                        List.of("-Daws.cborEnabled=false"),
                        Map.of("AWS_ACCESS_KEY_ID", "local", "AWS_SECRET_ACCESS_KEY", "local"));
        try {
            long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(3);
            while (!KinesisTableITCase.allPublished(store)) {
                if (!client.isAlive() || System.nanoTime() > deadline) {
                    throw new AssertionError(
                            "the client ended or 3 min passed before every window was published:\n"
                                    + output());
                }
                Thread.sleep(200);
            }
        } finally {
            client.destroy();
            if (!client.waitFor(1, TimeUnit.MINUTES)) {
                client.destroyForcibly().waitFor();
            }
        }
        Path root = Path.of(store.uri());
        assertThat(KinesisTableITCase.snapshots(root))
                .isEqualTo(KinesisTableITCase.reference(produced.onTime()));
        assertThat(KinesisTableITCase.deadLetters(root)).isEqualTo(produced.injected());
    }

    /** One payment; its JSON line is what the example's table reads. */
    private record Payment(String id, String merchant, String payer, BigDecimal amount, long at) {
        String json() {
            return String.format(
                    Locale.ROOT,
                    "{\"payment_id\":\"%s\",\"merchant\":\"%s\",\"payer\":\"%s\",\"amount\":%s,"
                            + "\"paid_at\":\"%s\"}",
                    id,
                    merchant,
                    payer,
                    amount.toPlainString(),
                    SQL_TIME.format(Instant.ofEpochMilli(at)));
        }
    }

    /**
     * Two payments a second for {@code minutes} minutes, each up to 3 s out of order (inside the
     * table's 5 s WATERMARK: never late), from 7 merchants and 40 payers.
     */
    private static List<Payment> payments(Random random, int minutes) {
        List<Payment> payments = new ArrayList<>();
        for (int i = 0; i < minutes * 120; i++) {
            payments.add(
                    new Payment(
                            "p-" + i,
                            "m-" + random.nextInt(7),
                            "c-" + random.nextInt(40),
                            BigDecimal.valueOf(random.nextInt(1_000_000), 2),
                            START + Math.max(0, i * 500L - random.nextInt(3_000))));
        }
        return payments;
    }

    /** Per minute, one row per merchant, in merchant order. */
    private static Map<Long, List<String>> reference(List<Payment> payments) {
        Map<Long, Map<String, List<Payment>>> windows = new TreeMap<>();
        for (Payment p : payments) {
            windows.computeIfAbsent(Math.floorDiv(p.at(), MINUTE) * MINUTE, w -> new TreeMap<>())
                    .computeIfAbsent(p.merchant(), m -> new ArrayList<>())
                    .add(p);
        }
        Map<Long, List<String>> rows = new TreeMap<>();
        windows.forEach(
                (window, merchants) ->
                        rows.put(
                                window,
                                merchants.entrySet().stream()
                                        .map(m -> row(m.getKey(), m.getValue()))
                                        .toList()));
        return rows;
    }

    /** A merchant's row of a window: BigDecimal sums, the distinct payers counted in a set. */
    private static String row(String merchant, List<Payment> payments) {
        BigDecimal total = BigDecimal.ZERO;
        BigDecimal largest = null;
        Set<String> payers = new TreeSet<>();
        for (Payment p : payments) {
            total = total.add(p.amount());
            largest = largest == null || p.amount().compareTo(largest) > 0 ? p.amount() : largest;
            payers.add(p.payer());
        }
        return row(merchant, payments.size(), payers.size(), total, largest);
    }

    /** A part's row in the reference's text. */
    private static String row(GenericRecord r) {
        return row(
                r.get("merchant").toString(),
                (Long) r.get("payments"),
                (Long) r.get("payers"),
                OrdersReference.decimal(r.get("total"), 2),
                OrdersReference.decimal(r.get("largest"), 2));
    }

    private static String row(
            String merchant, long count, long payers, BigDecimal total, BigDecimal largest) {
        return merchant
                + " payments="
                + count
                + " payers="
                + payers
                + " total="
                + total.setScale(2).toPlainString()
                + " largest="
                + largest.setScale(2).toPlainString();
    }

    /** The parts that collapse records name: {@code _collapsed/PART/JOB.json}. */
    private static Set<String> collapsed(StoreSpec spec) throws Exception {
        List<String> records = new ArrayList<>();
        try (ObjectStore store = spec.open()) {
            store.list(ObjectKeys.COLLAPSED_PREFIX, o -> records.add(o.key()));
        }
        Set<String> parts = new TreeSet<>();
        for (String record : records) {
            if (ObjectKeys.parseCollapsed(record).isPresent()) {
                parts.add(
                        record.substring(
                                ObjectKeys.COLLAPSED_PREFIX.length(), record.lastIndexOf('/')));
            }
        }
        return parts;
    }

    /**
     * Starts the client on {@code script} as {@code bin/sql-client.sh [--jar SQL_JAR] -f script}
     * does, with {@code jvm} options and {@code env} added.
     */
    private Process start(Jar jar, Path script, List<String> jvm, Map<String, String> env)
            throws IOException {
        String client = opt("flink-sql-client");
        List<String> args = new ArrayList<>();
        if (jar == Jar.FLAG) {
            args.addAll(List.of("--jar", SqlJarITCase.SQL_JAR.toString()));
        }
        args.addAll(List.of("-f", script.toString(), "--jar", client));
        List<String> classpath = new ArrayList<>();
        if (jar == Jar.LIB) {
            classpath.add(SqlJarITCase.SQL_JAR.toString());
        }
        classpath.addAll(List.of(opt("flink-python"), opt("flink-sql-gateway"), client));
        return flink("org.apache.flink.table.client.SqlClient", classpath, jvm, args, env);
    }

    /**
     * Starts {@code main} in the test's directory on Flink's {@code lib/} and {@code classpath},
     * with Flink's Java 17 options, {@code FLINK_CONF_DIR} and the test's conf directory; its
     * output and log go to {@link #out} and {@link #log}.
     */
    private Process flink(
            String main,
            List<String> classpath,
            List<String> jvm,
            List<String> args,
            Map<String, String> env)
            throws IOException {
        assertThat(SqlJarITCase.SQL_JAR).as("built by the sql module (-Plong)").exists();
        Path conf = Files.createDirectories(tmp.resolve("conf"));
        // The test's stand-in for a session cluster: the job runs inside the client's JVM.
        Files.writeString(
                conf.resolve("config.yaml"), "execution.target: local\nparallelism.default: 2\n");
        // One log file per process, as the local cluster's.
        Files.copy(
                ROOT.resolve("job/harness/src/launcher/cluster-log4j2.properties"),
                conf.resolve("log4j-cli.properties"),
                StandardCopyOption.REPLACE_EXISTING);
        int run = ++runs;
        out = tmp.resolve("flink-" + run + ".out");
        log = tmp.resolve("flink-" + run + ".log");
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.add("-Xmx1g");
        command.addAll(LocalCluster.JAVA_17_OPENS);
        command.addAll(jvm);
        command.addAll(
                List.of(
                        // Flink's uploads and blobs, and the client's history file, stay here.
                        "-Djava.io.tmpdir=" + tmp,
                        "-Duser.home=" + tmp,
                        "-Dlog.file=" + log,
                        "-Dlog4j.configurationFile=file:" + conf.resolve("log4j-cli.properties"),
                        "-cp",
                        Files.readString(DIST.resolve("classpath.txt")).trim()
                                + ":"
                                + String.join(":", classpath),
                        main));
        command.addAll(args);
        ProcessBuilder builder =
                new ProcessBuilder(command)
                        .directory(tmp.toFile())
                        .redirectErrorStream(true)
                        .redirectOutput(out.toFile());
        builder.environment().put("FLINK_CONF_DIR", conf.toString());
        builder.environment().putAll(env);
        Process process = builder.start();
        process.getOutputStream().close();
        return process;
    }

    /**
     * Waits for the client to end; its output, which says whether each statement succeeded.
     *
     * @throws AssertionError if it did not end in time or a statement failed
     */
    private String await(Process client) throws Exception {
        assertThat(client.waitFor(3, TimeUnit.MINUTES)).as("the client ended").isTrue();
        String output = output();
        assertThat(output).as("the client's output").doesNotContain("[ERROR]");
        return output;
    }

    /**
     * What the client printed, and the causes its log names: the client prints the last of them
     * only ("MiniCluster is not yet running" for a job that failed).
     */
    private String output() throws IOException {
        List<String> causes =
                Files.exists(log)
                        ? Files.readAllLines(log).stream()
                                .filter(l -> l.startsWith("Caused by:"))
                                .distinct()
                                .toList()
                        : List.of();
        return Files.readString(out) + String.join("\n", causes);
    }

    private static String opt(String artifact) throws IOException {
        try (Stream<Path> jars = Files.list(DIST.resolve("opt"))) {
            return jars.filter(p -> p.getFileName().toString().startsWith(artifact + "-"))
                    .findFirst()
                    .orElseThrow(() -> new IllegalStateException(artifact + " is not in " + DIST))
                    .toString();
        }
    }
}
