package dev.snapshots.harness;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Pattern;
import org.apache.flink.runtime.util.EnvironmentInformation;
import org.junit.jupiter.api.Test;

/**
 * The two Flink lines' artifacts cannot be taken for each other: the version a build installs names
 * the Flink it was built against (0.3.0-1.20-SNAPSHOT, 0.3.0-2.3-SNAPSHOT), and the POMs it
 * installs carry that version, not the {@code ${revision}} only this tree defines.
 */
class BuildVersionTest {
    private static final Path ROOT = Path.of(System.getProperty("snapshots.root"));

    @Test
    void theVersionNamesTheFlinkLineItWasBuiltAgainst() {
        String flink = EnvironmentInformation.getVersion(); // 1.20.3 or 2.3.0
        String line = flink.substring(0, flink.lastIndexOf('.'));
        assertThat(BuildVersion.VERSION)
                .matches("\\d+\\.\\d+\\.\\d+-" + Pattern.quote(line) + "(-SNAPSHOT)?");
    }

    @Test
    void theInstalledPomsCarryTheVersionItself() throws IOException {
        // the parent, a parent of libraries, and a library; each as install would copy it
        for (String module : List.of(".", "sinks", "sinks/core")) {
            String pom =
                    Files.readString(ROOT.resolve(module).resolve("target/.flattened-pom.xml"));
            assertThat(pom)
                    .as("%s's installed POM", module)
                    .contains("<version>" + BuildVersion.VERSION + "</version>")
                    .doesNotContain("${revision}");
        }
    }
}
