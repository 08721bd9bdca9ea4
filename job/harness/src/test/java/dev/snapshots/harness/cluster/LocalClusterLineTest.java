package dev.snapshots.harness.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Both Flink lines build into the same {@code deploy/flink-local/target}: a cluster whose
 * distribution is the other line's is refused before anything starts. Once, a 1.20 harness started
 * a 2.3 cluster, whose first checkpoint the harness then could not read.
 */
class LocalClusterLineTest {
    @Test
    void aDistributionOfAnotherFlinkIsRefusedBeforeAnythingStarts(@TempDir Path root)
            throws Exception {
        Path dist = Files.createDirectories(root.resolve("deploy/flink-local/target"));
        Files.writeString(
                dist.resolve("classpath.txt"),
                "/m2/org/apache/flink/flink-runtime/0.9.0/flink-runtime-0.9.0.jar");
        ByteArrayOutputStream said = new ByteArrayOutputStream();

        assertThatThrownBy(() -> new LocalCluster(root).up(1, new PrintStream(said)))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("holds another Flink than the harness's")
                .hasMessageContaining("-Pflink2");
        assertThat(root.resolve("target/cluster")).as("nothing started").doesNotExist();
    }
}
