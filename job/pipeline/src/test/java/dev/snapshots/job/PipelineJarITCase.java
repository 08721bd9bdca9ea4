package dev.snapshots.job;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.jar.JarFile;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The jar submitted to Flink holds the pipeline and what it runs on, and nothing of the operator's
 * command line, the development harness or the test kit: no fault proxy, and no AWS client but the
 * S3 store's and the Kinesis source's (Kinesis, and STS for its assumed roles), of one AWS SDK.
 */
class PipelineJarITCase {
    @Test
    void theJobJarHoldsOnlyThePipelineAndWhatItRunsOn() throws Exception {
        Path jar;
        try (Stream<Path> built = Files.list(Path.of("target"))) {
            jar =
                    built.filter(p -> p.getFileName().toString().endsWith("-job.jar"))
                            .findFirst()
                            .orElseThrow();
        }
        List<String> all;
        try (JarFile file = new JarFile(jar.toFile())) {
            all = file.stream().map(e -> e.getName()).toList();
        }
        List<String> entries = all.stream().filter(n -> n.endsWith(".class")).toList();
        System.out.printf(
                "FIGURES %s: %,d bytes, %,d classes%n",
                jar.getFileName(), Files.size(jar), entries.size());

        assertThat(entries)
                .contains(
                        "dev/snapshots/job/SnapshotJob.class",
                        "dev/snapshots/sink/SnapshotWriter.class",
                        "dev/snapshots/store/s3/S3ObjectStore.class",
                        "dev/snapshots/job/source/kinesis/KinesisShardSource.class",
                        "dev/snapshots/job/sql/SqlJob.class",
                        "dev/snapshots/table/CanonicalSnapshotsTableFactory.class",
                        "dev/snapshots/kinesis/SnapshotsKinesisTableFactory.class",
                        "software/amazon/awssdk/services/kinesis/KinesisClient.class",
                        "software/amazon/awssdk/services/sts/auth"
                                + "/StsAssumeRoleCredentialsProvider.class");
        assertThat(all)
                .as(
                        "flink-connector-kinesis, built for Flink 1.x, with its relocated AWS SDK, the"
                                + " legacy consumer and producer, the KPL's native binaries, AWS SDK"
                                + " v1; and Guava")
                .noneMatch(
                        n ->
                                n.startsWith("org/apache/flink/connector/kinesis/")
                                        || n.startsWith("org/apache/flink/kinesis/")
                                        || n.startsWith("amazon-kinesis-producer-native-binaries/")
                                        || n.startsWith("org/apache/flink/streaming/connectors/")
                                        || n.startsWith("com/google/common/"));
        try (JarFile file = new JarFile(jar.toFile())) {
            assertThat(
                            new String(
                                    file.getInputStream(
                                                    file.getEntry(
                                                            "META-INF/services/org.apache.flink"
                                                                    + ".table.factories.Factory"))
                                            .readAllBytes(),
                                    StandardCharsets.UTF_8))
                    .as("Flink SQL finds the connectors in the jar")
                    .contains(
                            "dev.snapshots.table.CanonicalSnapshotsTableFactory",
                            "dev.snapshots.kinesis.SnapshotsKinesisTableFactory");
        }
        assertThat(entries)
                .as("Flink's SQL, which a Flink distribution's lib/ holds")
                .noneMatch(n -> n.startsWith("org/apache/flink/table/"));
        assertThat(entries)
                .as("the command line, the harness, the test kit")
                .noneMatch(
                        n ->
                                n.startsWith("dev/snapshots/cli/")
                                        || n.startsWith("dev/snapshots/harness/")
                                        || n.startsWith("dev/snapshots/testkit/"));
        assertThat(entries)
                .as("AWS service clients other than S3, Kinesis and STS")
                .noneMatch(
                        n ->
                                n.startsWith("software/amazon/awssdk/services/")
                                        && !n.startsWith("software/amazon/awssdk/services/s3/")
                                        && !n.startsWith("software/amazon/awssdk/services/kinesis/")
                                        && !n.startsWith("software/amazon/awssdk/services/sts/"));
        assertThat(entries)
                .as("a Flink runtime of its own")
                .noneMatch(
                        n ->
                                n.startsWith("org/apache/flink/runtime/")
                                        || n.startsWith(
                                                "org/apache/flink/streaming/api/environment/"));
    }
}
