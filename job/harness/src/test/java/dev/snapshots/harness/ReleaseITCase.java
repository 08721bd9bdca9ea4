package dev.snapshots.harness;

import static org.assertj.core.api.Assertions.assertThat;

import dev.snapshots.store.ObjectStore;
import dev.snapshots.store.StoreSpec;
import dev.snapshots.testkit.CustomerHours;
import java.io.IOException;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import java.util.zip.ZipFile;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What a user depends on is what a release deploys: {@code ./mvnw -Prelease deploy} into a file
 * repository given by the standard property, run as a user would from the repository's root. Each
 * library comes with its sources and its Javadoc, with its pom and its parents', and the shaded SQL
 * jar for Flink's {@code lib/} with both connectors; nothing else (the job, its command line, the
 * harness, the tests) is deployed. And the README's Java, in a project of its own, builds against
 * what was deployed and runs. Minutes of building: tag {@code long}.
 */
@Tag("long")
class ReleaseITCase {
    private static final Path ROOT =
            Path.of(System.getProperty("snapshots.root")).toAbsolutePath().normalize();
    private static final List<String> LIBRARIES =
            List.of(
                    "snapshots-sink",
                    "snapshots-sink-s3",
                    "snapshots-sink-table",
                    "snapshots-sink-iceberg",
                    "snapshots-sink-testkit",
                    "snapshots-kinesis");

    @TempDir static Path work;
    private static Path repository;

    @BeforeAll
    static void deploy() throws Exception {
        repository = Files.createDirectory(work.resolve("repository"));
        Path log = work.resolve("release-deploy.log");
        Process mvn =
                new ProcessBuilder(
                                ROOT.resolve("mvnw").toString(),
                                "-B",
                                "-ntp",
                                "-Prelease",
                                "-DskipTests",
                                "-Dspotless.check.skip=true",
                                // the deploy's own repository only; the local one stays as it was
                                "-Dmaven.install.skip=true",
                                "-DaltDeploymentRepository=local::" + repository.toUri(),
                                "deploy")
                        .directory(ROOT.toFile())
                        .redirectErrorStream(true)
                        .redirectOutput(log.toFile())
                        .start();
        assertThat(mvn.waitFor(20, TimeUnit.MINUTES)).as("the deploy ended").isTrue();
        assertThat(mvn.exitValue()).as("the deploy's exit status; %s", tail(log)).isZero();
    }

    @Test
    void aReleaseDeploysEachLibraryWithItsSourcesAndJavadocAndNothingElse() throws Exception {
        Path group = repository.resolve("dev/snapshots");
        try (Stream<Path> deployed = Files.list(group)) {
            assertThat(deployed.map(p -> p.getFileName().toString()))
                    .as("deployed artifacts")
                    .containsExactlyInAnyOrder(
                            Stream.concat(
                                            LIBRARIES.stream(),
                                            Stream.of(
                                                    "snapshots-parent",
                                                    "snapshots-sinks",
                                                    "snapshots-sql"))
                                    .toArray(String[]::new));
        }
        for (String library : LIBRARIES) {
            Path dir = only(group.resolve(library)); // the version's directory
            for (String suffix : List.of(".jar", "-sources.jar", "-javadoc.jar", ".pom")) {
                assertThat(deployedFile(dir, suffix)).as("%s%s", library, suffix).isNotNull();
            }
            try (ZipFile javadoc = new ZipFile(deployedFile(dir, "-javadoc.jar").toFile());
                    ZipFile sources = new ZipFile(deployedFile(dir, "-sources.jar").toFile())) {
                assertThat(javadoc.getEntry("index.html")).as("%s's Javadoc", library).isNotNull();
                assertThat(sources.stream().anyMatch(e -> e.getName().endsWith(".java")))
                        .as("%s's sources", library)
                        .isTrue();
            }
        }
        assertTheSqlJarListsBothConnectors(group);
    }

    /**
     * The README's dependency block and Java file, unchanged but for the version a snapshot build
     * deploys, as a fresh Maven project resolving from the deployed repository (and, for Flink and
     * Maven's plugins, from the local repository as if it were Maven Central). Its {@code main}
     * runs on a JVM that sees 8 cores, so at Flink's local default parallelism of 8 with the
     * example's 4 buckets, and with a German default locale; twice into one store.
     */
    @Test
    void theReadmesJavaBuildsAndRunsInAProjectOfItsOwn() throws Exception {
        String version =
                only(repository.resolve("dev/snapshots/snapshots-sink")).getFileName().toString();
        String readme = Files.readString(ROOT.resolve("README.md"));
        int section = readme.indexOf("### The shortest job");
        String dependencies = block(readme, "```xml\n", section);
        String release = version.replace("-SNAPSHOT", "");
        assertThat(dependencies)
                .as("the README names the version this build releases")
                .contains("<version>" + release + "</version>");

        Path project = Files.createDirectory(work.resolve("orders"));
        Path source = project.resolve("src/main/java/com/example/orders/ShortestJob.java");
        Files.createDirectories(source.getParent());
        Files.writeString(source, block(readme, "```java\n", section));
        Files.writeString(
                project.resolve("pom.xml"),
                FRESH_POM.replace(
                        "DEPENDENCIES",
                        dependencies.replace(
                                "<version>" + release + "</version>",
                                "<version>" + version + "</version>")));
        Path settings = work.resolve("settings.xml");
        Files.writeString(
                settings,
                SETTINGS.replace("LOCAL", work.resolve("local-repository").toString())
                        .replace("DEPLOYED", repository.toUri().toString())
                        .replace(
                                "CENTRAL",
                                Path.of(System.getProperty("user.home"), ".m2/repository")
                                        .toUri()
                                        .toString()));
        Path classpath = work.resolve("classpath.txt");
        run(
                project,
                "build",
                ROOT.resolve("mvnw").toString(),
                "-B",
                "-ntp",
                "-s",
                settings.toString(),
                "compile",
                "dependency:build-classpath",
                "-Dmdep.outputFile=" + classpath);

        Path store = Files.createDirectory(work.resolve("store"));
        List<String> java =
                List.of(
                        Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                        "-XX:ActiveProcessorCount=8",
                        // Its local Flink's working directories, removed with the test's.
                        "-Djava.io.tmpdir=" + work,
                        "-Duser.language=de",
                        "-Duser.country=DE",
                        "-cp",
                        project.resolve("target/classes")
                                + ":"
                                + Files.readString(classpath).strip(),
                        "com.example.orders.ShortestJob",
                        store.toUri().toString());
        run(project, "first-run", java.toArray(String[]::new));
        List<CustomerHours.Order> orders = new ArrayList<>();
        long start = Instant.parse("2026-12-01T00:00:00Z").toEpochMilli();
        for (int i = 0; i < 10_000; i++) {
            orders.add(
                    new CustomerHours.Order(
                            "customer-" + i % 7,
                            start + i * 8_000L,
                            BigDecimal.valueOf(i % 1_000, 2)));
        }
        List<CustomerHours.Row> reference = CustomerHours.reference(orders, 4);
        try (ObjectStore objects = StoreSpec.local(store).open()) {
            Map<String, String> parts = CustomerHours.fingerprints(objects, "orders", 1);
            assertThat(parts.keySet().stream().map(CustomerHours::partOf))
                    .as("one object per (hour, bucket) with rows")
                    .doesNotHaveDuplicates()
                    .containsExactlyInAnyOrderElementsOf(CustomerHours.parts(reference));
            assertThat(CustomerHours.rows(objects, parts.keySet()))
                    .containsExactlyInAnyOrderElementsOf(reference);

            run(project, "second-run", java.toArray(String[]::new));
            assertThat(CustomerHours.fingerprints(objects, "orders", 1))
                    .as("the second run's parts collapsed into the first's")
                    .isEqualTo(parts);
            assertThat(CustomerHours.divergences(objects)).isEmpty();
        }
    }

    private static final String FRESH_POM =
            String.join(
                    "\n",
                    "<project xmlns=\"http://maven.apache.org/POM/4.0.0\">",
                    "  <modelVersion>4.0.0</modelVersion>",
                    "  <groupId>com.example</groupId>",
                    "  <artifactId>orders</artifactId>",
                    "  <version>1</version>",
                    "  <properties>",
                    "    <maven.compiler.release>17</maven.compiler.release>",
                    "    <project.build.sourceEncoding>UTF-8</project.build.sourceEncoding>",
                    "  </properties>",
                    "DEPENDENCIES",
                    // Maven's defaults, pinned to the versions this build resolved already.
                    "  <build><plugins>",
                    "    <plugin><artifactId>maven-resources-plugin</artifactId><version>3.3.1</version></plugin>",
                    "    <plugin><artifactId>maven-compiler-plugin</artifactId><version>3.13.0</version></plugin>",
                    "    <plugin><artifactId>maven-dependency-plugin</artifactId><version>3.8.1</version></plugin>",
                    "  </plugins></build>",
                    "</project>");

    private static final String SETTINGS =
            String.join(
                    "\n",
                    "<settings>",
                    "  <localRepository>LOCAL</localRepository>",
                    "  <mirrors><mirror><id>central-here</id><mirrorOf>*,!deployed</mirrorOf><url>CENTRAL</url></mirror></mirrors>",
                    "  <profiles><profile><id>deployed</id><repositories><repository>",
                    "    <id>deployed</id><url>DEPLOYED</url><snapshots><enabled>true</enabled></snapshots>",
                    "  </repository></repositories></profile></profiles>",
                    "  <activeProfiles><activeProfile>deployed</activeProfile></activeProfiles>",
                    "</settings>");

    /** The first block opening with {@code fence} after {@code from}, without its fences. */
    private static String block(String text, String fence, int from) {
        int start = text.indexOf(fence, from) + fence.length();
        return text.substring(start, text.indexOf("```", start));
    }

    /** Runs a command in {@code dir}, its output in {@code name}.log beside it; it must succeed. */
    private static void run(Path dir, String name, String... command) throws Exception {
        Path log = work.resolve(name + ".log");
        Process p =
                new ProcessBuilder(command)
                        .directory(dir.toFile())
                        .redirectErrorStream(true)
                        .redirectOutput(log.toFile())
                        .start();
        assertThat(p.waitFor(10, TimeUnit.MINUTES)).as("%s ended", name).isTrue();
        assertThat(p.exitValue()).as("%s's exit status; %s", name, tail(log)).isZero();
    }

    private static void assertTheSqlJarListsBothConnectors(Path group) throws IOException {
        Path dir = only(group.resolve("snapshots-sql"));
        assertThat(deployedFile(dir, ".pom")).as("snapshots-sql.pom").isNotNull();
        try (ZipFile jar = new ZipFile(deployedFile(dir, ".jar").toFile())) {
            String factories =
                    new String(
                            jar.getInputStream(
                                            jar.getEntry(
                                                    "META-INF/services/"
                                                            + "org.apache.flink.table.factories.Factory"))
                                    .readAllBytes(),
                            StandardCharsets.UTF_8);
            assertThat(factories)
                    .contains(
                            "dev.snapshots.table.CanonicalSnapshotsTableFactory",
                            "dev.snapshots.kinesis.SnapshotsKinesisTableFactory");
        }
    }

    private static Path only(Path dir) throws IOException {
        try (Stream<Path> versions = Files.list(dir)) {
            return versions.filter(Files::isDirectory).findFirst().orElseThrow();
        }
    }

    /** The newest file of the version's directory ending in {@code suffix}, or null. */
    private static Path deployedFile(Path dir, String suffix) throws IOException {
        try (Stream<Path> files = Files.list(dir)) {
            return files.filter(
                            f -> {
                                String name = f.getFileName().toString();
                                return name.endsWith(suffix)
                                        && (suffix.startsWith("-")
                                                || !name.matches(".*-(sources|javadoc)\\.jar"));
                            })
                    .max(Path::compareTo)
                    .orElse(null);
        }
    }

    private static String tail(Path log) throws IOException {
        String text = Files.readString(log, StandardCharsets.UTF_8);
        return text.length() <= 3000 ? text : text.substring(text.length() - 3000);
    }
}
