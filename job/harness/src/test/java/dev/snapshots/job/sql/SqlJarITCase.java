package dev.snapshots.job.sql;

import static dev.snapshots.job.sql.OrdersFixture.EXAMPLE;
import static dev.snapshots.job.sql.OrdersFixture.assertOnePartPerWindowAndBucket;
import static dev.snapshots.job.sql.OrdersFixture.reference;
import static dev.snapshots.job.sql.OrdersFixture.script;
import static org.assertj.core.api.Assertions.assertThat;

import dev.snapshots.store.StoreSpec;
import dev.snapshots.testkit.StoreKind;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.zip.ZipFile;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The shaded SQL jar as a user drops it into Flink's {@code lib/}: a JVM whose classpath is a Flink
 * distribution's (the local cluster's, which has what the official {@code lib/} has) and this one
 * jar, nothing of ours besides. Plain Table API, as the SQL client runs a script: both connectors
 * are found by their identifiers, and the orders example publishes what the reference says. A JVM
 * of its own that compiles its runner and plans the script: 80 s on a loaded machine, so tagged
 * {@code long}, as the release's other test.
 */
@Tag("long")
class SqlJarITCase {
    private static final Path ROOT = Path.of(System.getProperty("snapshots.root"));
    static final Path SQL_JAR = ROOT.resolve("sql/target/snapshots-sql-0.3.0-SNAPSHOT.jar");

    /**
     * Runs each statement of a script given as its file, as the SQL client would: SETs into the
     * configuration, the INSERT awaited. A single-file program, so that no class of ours but the
     * jar's is on the classpath.
     */
    private static final String RUNNER =
            """
            import java.nio.file.*;
            import org.apache.flink.table.api.*;
            public class RunScript {
                public static void main(String[] args) throws Exception {
                    // The script's tables name one connector; the jar holds the other as well.
                    org.apache.flink.table.factories.FactoryUtil.discoverFactory(
                            RunScript.class.getClassLoader(),
                            org.apache.flink.table.factories.DynamicTableSourceFactory.class,
                            "snapshots-kinesis");
                    TableEnvironment tables =
                            TableEnvironment.create(EnvironmentSettings.inStreamingMode());
                    tables.getConfig().set("table.local-time-zone", "UTC");
                    for (String statement : Files.readString(Path.of(args[0])).split(";\\\\s*\\\\n")) {
                        String code = statement.replaceAll("(?m)^\\\\s*--.*$", "").strip();
                        if (code.startsWith("SET ")) {
                            String[] kv = code.substring(4).split("=", 2);
                            tables.getConfig().set(unquote(kv[0]), unquote(kv[1]));
                        } else if (code.startsWith("INSERT")) {
                            tables.executeSql(code).await();
                        } else if (!code.isEmpty()) {
                            tables.executeSql(code);
                        }
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
        Path script = tmp.resolve("orders.sql");
        Files.writeString(script, script(store, EXAMPLE.resolve("orders.jsonl"), 1));
        Path runner = tmp.resolve("RunScript.java");
        Files.writeString(runner, RUNNER);
        String flinkLib =
                Files.readString(ROOT.resolve("deploy/flink-local/target/classpath.txt")).trim();

        Process run =
                new ProcessBuilder(
                                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                                "-Djava.io.tmpdir=" + tmp,
                                "-cp",
                                flinkLib + ":" + SQL_JAR,
                                runner.toString(),
                                script.toString())
                        .redirectErrorStream(true)
                        .redirectOutput(tmp.resolve("out.log").toFile())
                        .start();

        assertThat(run.waitFor(4, TimeUnit.MINUTES)).as("the script ended").isTrue();
        assertThat(run.exitValue()).as(Files.readString(tmp.resolve("out.log"))).isZero();
        assertOnePartPerWindowAndBucket(store, 1, reference(0, OrderEvents.HOURS));
    }
}
