package dev.snapshots.harness;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import java.util.zip.ZipFile;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What a user depends on is what a release deploys: {@code ./mvnw -Prelease deploy} into a file
 * repository given by the standard property, run as a user would from the repository's root. Each
 * library comes with its sources and its Javadoc, with its pom and its parents', and the shaded SQL
 * jar for Flink's {@code lib/} with both connectors; nothing else (the job, its command line, the
 * harness, the tests) is deployed. Minutes of building: tag {@code long}.
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
                    "snapshots-sink-testkit",
                    "snapshots-kinesis");

    @Test
    void aReleaseDeploysEachLibraryWithItsSourcesAndJavadocAndNothingElse(@TempDir Path repository)
            throws Exception {
        Path log = repository.resolveSibling("release-deploy.log");
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
