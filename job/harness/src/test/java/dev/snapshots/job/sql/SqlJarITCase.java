package dev.snapshots.job.sql;

import static dev.snapshots.job.sql.OrdersFixture.EXAMPLE;
import static dev.snapshots.job.sql.OrdersFixture.assertOnePartPerWindowAndBucket;
import static dev.snapshots.job.sql.OrdersFixture.reference;
import static dev.snapshots.job.sql.OrdersFixture.script;
import static org.assertj.core.api.Assertions.assertThat;

import dev.snapshots.harness.BuildVersion;
import dev.snapshots.harness.cluster.Kinesalite;
import dev.snapshots.harness.testutils.KinesaliteServer;
import dev.snapshots.job.sql.KinesisTableITCase.Order;
import dev.snapshots.key.PartKind;
import dev.snapshots.store.StoreSpec;
import dev.snapshots.testkit.StoreKind;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.zip.ZipFile;
import org.apache.flink.util.FileUtils;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import software.amazon.awssdk.services.kinesis.KinesisClient;

/**
 * The shaded SQL jar as a user drops it into Flink's {@code lib/}: a JVM whose classpath is a Flink
 * distribution's (the local cluster's, which has what the official {@code lib/} has) and this one
 * jar, nothing of ours besides. Both connectors are found by their identifiers and run on what the
 * jar bundles, relocated: the orders example publishes what the reference says, and the Kinesis
 * example reads kinesalite through the relocated AWS SDK's Kinesis client. A JVM of its own that
 * compiles its runner and plans the script: 80 s on a loaded machine, so tagged {@code long}, as
 * the release's other test.
 */
@Tag("long")
class SqlJarITCase {
    private static final Path ROOT = Path.of(System.getProperty("snapshots.root"));
    static final Path SQL_JAR = ROOT.resolve(BuildVersion.jar("sql", "snapshots-sql", ""));

    /**
     * Runs a script given as its file: SETs into the configuration, then every other statement.
     * With {@code client}, as the SQL client runs a script: each INSERT run and awaited. With
     * {@code program}, as docs/REFERENCE.md tells a program of its own to run a Kinesis table: the
     * INSERTs planned with their dead letters' sinks ({@code DeadLetterSinks}), then run until
     * stopped. A single-file program, so that no class of ours but the jar's is on the classpath.
     */
    private static final String RUNNER =
            """
            import java.nio.file.*;
            import java.util.*;
            import org.apache.flink.configuration.Configuration;
            import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
            import org.apache.flink.table.api.bridge.java.*;
            public class RunScript {
                public static void main(String[] args) throws Exception {
                    Configuration settings = new Configuration();
                    settings.setString("table.local-time-zone", "UTC");
                    List<String> statements = new ArrayList<>();
                    for (String statement : Files.readString(Path.of(args[0])).split(";\\s*\\n")) {
                        String code = statement.replaceAll("(?m)^\\s*--.*$", "").strip();
                        if (code.startsWith("SET ")) {
                            String[] kv = code.substring(4).split("=", 2);
                            settings.setString(unquote(kv[0]), unquote(kv[1]));
                        } else if (!code.isEmpty()) {
                            statements.add(code);
                        }
                    }
                    StreamExecutionEnvironment env =
                            StreamExecutionEnvironment.getExecutionEnvironment(settings);
                    StreamTableEnvironment tables = StreamTableEnvironment.create(env);
                    StreamStatementSet program = tables.createStatementSet();
                    for (String code : statements) {
                        if (!code.startsWith("INSERT")) {
                            tables.executeSql(code);
                        } else if (args[1].equals("client")) {
                            tables.executeSql(code).await();
                        } else {
                            program.addInsertSql(code);
                        }
                    }
                    if (args[1].equals("program")) {
                        dev.snapshots.kinesis.DeadLetterSinks.attachAsDataStream(program, env);
                        env.execute(args[0]);
                    }
                }
                static String unquote(String s) {
                    return s.strip().replaceAll("^'|'$", "");
                }
            }
            """;

    @TempDir Path tmp;

    @Test
    void theJarBesideFlinksLibRunsTheOrdersScriptAndPublishesTheReference() throws Exception {
        assertThat(SQL_JAR).as("built by the sql module (./mvnw install)").exists();
        try (ZipFile jar = new ZipFile(SQL_JAR.toFile())) {
            assertThat(jar.stream().map(e -> e.getName()))
                    .as("Flink's own classes and SLF4J stay in lib/'s own jars")
                    .noneMatch(
                            n ->
                                    n.startsWith("org/apache/flink/table/api/")
                                            || n.startsWith("org/apache/flink/streaming/api/")
                                            || n.startsWith("org/slf4j/"));
        }
        StoreSpec store = StoreKind.FILESYSTEM.fresh();
        Process run = run(script(store, EXAMPLE.resolve("orders.jsonl"), 1), "client");

        assertThat(run.waitFor(4, TimeUnit.MINUTES)).as("the script ended").isTrue();
        assertThat(run.exitValue()).as(log()).isZero();
        assertOnePartPerWindowAndBucket(store, 1, reference(0, OrderEvents.HOURS));
    }

    /**
     * The Kinesis example on a stream of kinesalite, a few orders per minute: the snapshots equal
     * the reference, and the record that is no JSON is a dead letter.
     */
    @Test
    void theJarBesideFlinksLibReadsKinesisAndPublishesTheReferenceAndTheDeadLetter()
            throws Exception {
        long start = Instant.parse("2026-12-01T00:00:00Z").toEpochMilli();
        long minute = 60_000;
        Kinesalite kinesis = KinesaliteServer.get();
        KinesisClient client = kinesis.client();
        String name = "jar-orders-" + Long.toHexString(System.nanoTime());
        List<Order> onTime = new ArrayList<>();
        String arn = Kinesalite.createStream(client, name, 1);
        for (int i = 0; i < 48; i++) {
            Order o =
                    new Order(
                            "c-" + i % 3, BigDecimal.valueOf(100 + i * 7L, 2), start + i * 5_000L);
            onTime.add(o);
            KinesisTableITCase.put(client, name, "0", o.json());
        }
        KinesisTableITCase.put(client, name, "0", "not json".getBytes(StandardCharsets.UTF_8));
        // Moves the shard's watermark past every window above.
        KinesisTableITCase.put(
                client,
                name,
                "0",
                new Order("closing", BigDecimal.ZERO, start + 6 * minute).json());
        StoreSpec store = StoreKind.FILESYSTEM.fresh();
        Path root = Path.of(store.uri());
        Process run = run(KinesisTableITCase.script(arn, kinesis.endpoint(), store), "program");
        try {
            long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(4);
            while (KinesisTableITCase.pointer(store, PartKind.SNAPSHOT) < start + 4 * minute
                    || KinesisTableITCase.pointer(store, PartKind.DEAD_LETTER)
                            < start + 4 * minute) {
                assertThat(run.isAlive()).as(log()).isTrue();
                assertThat(System.nanoTime()).as("every window published").isLessThan(deadline);
                Thread.sleep(500);
            }
        } finally {
            run.destroyForcibly().waitFor();
        }
        assertThat(new TreeMap<>(KinesisTableITCase.snapshots(root)).headMap(start + 4 * minute))
                .as("the orders' windows; the closing orders' may be published too")
                .isEqualTo(KinesisTableITCase.reference(onTime));
        assertThat(KinesisTableITCase.deadLetters(root))
                .isEqualTo(Map.of("bad-format", List.of("not json")));
        FileUtils.deleteDirectory(root.toFile());
    }

    /**
     * Starts the runner on {@code script} in a JVM of Flink's {@code lib/} and the SQL jar, with
     * the AWS settings the test JVM has (kinesalite speaks JSON, not CBOR).
     */
    private Process run(String script, String mode) throws Exception {
        assertThat(SQL_JAR).as("built by the sql module (./mvnw install)").exists();
        Path file = tmp.resolve("script.sql");
        Files.writeString(file, script);
        Path runner = tmp.resolve("RunScript.java");
        Files.writeString(runner, RUNNER);
        String flinkLib =
                Files.readString(ROOT.resolve("deploy/flink-local/target/classpath.txt")).trim();
        return new ProcessBuilder(
                        Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                        "-Djava.io.tmpdir=" + tmp,
                        "-Daws.cborEnabled=false",
                        "-Daws.accessKeyId=local",
                        "-Daws.secretAccessKey=local",
                        "-Daws.region=" + Kinesalite.REGION,
                        "-cp",
                        flinkLib + ":" + SQL_JAR,
                        runner.toString(),
                        file.toString(),
                        mode)
                .redirectErrorStream(true)
                .redirectOutput(tmp.resolve("out.log").toFile())
                .start();
    }

    private String log() throws Exception {
        return Files.readString(tmp.resolve("out.log"));
    }
}
