package dev.snapshots.sql;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The SQL jar goes into Flink's {@code lib/} beside whatever else a user has there. Flink finds
 * connectors and formats through every jar's {@code META-INF/services}, and the JVM loads a class
 * from the first jar that holds it; so this jar registers our factories only, and every class it
 * holds is ours: what it bundles is relocated under {@code dev.snapshots.shaded}, where another
 * jar's Kinesis connector, Parquet format, Hadoop or AWS SDK cannot meet it.
 */
class SqlJarContentsITCase {
    private static final String FLINK_FACTORIES =
            "META-INF/services/org.apache.flink.table.factories.Factory";

    /**
     * Classes outside {@code dev/snapshots/} that the jar may hold, with the reason for each. None:
     * the JNI libraries that cannot be relocated (Snappy, zstd) are left to Flink's {@code lib/} or
     * out of the jar.
     */
    private static final List<String> FOREIGN_CLASSES_ALLOWED = List.of();

    private static JarFile jar;

    @BeforeAll
    static void open() throws IOException {
        Path path = Path.of(System.getProperty("snapshots.sql.jar"));
        jar = new JarFile(path.toFile());
        System.out.printf(
                "FIGURES %s: %,d bytes, classes per package: %s%n",
                path.getFileName(), Files.size(path), classesPerPackage());
    }

    @AfterAll
    static void close() throws IOException {
        jar.close();
    }

    @Test
    void theJarRegistersOurTableFactoriesAndNoConnectorOrFormatOfAnyoneElse() {
        assertThat(providers(FLINK_FACTORIES))
                .as("the factories Flink finds in this jar, and no relocated one of Flink's")
                .containsExactlyInAnyOrder(
                        "dev.snapshots.table.CanonicalSnapshotsTableFactory",
                        "dev.snapshots.kinesis.SnapshotsKinesisTableFactory");
        List<String> foreign = new ArrayList<>();
        for (String service :
                jar.stream()
                        .map(JarEntry::getName)
                        .filter(n -> n.startsWith("META-INF/services/"))
                        .toList()) {
            if (service.equals(FLINK_FACTORIES) || service.endsWith("/")) {
                continue;
            }
            String name = service.substring("META-INF/services/".length());
            for (String provider : providers(service)) {
                if (!name.startsWith("dev.snapshots.") || !provider.startsWith("dev.snapshots.")) {
                    foreign.add(name + " -> " + provider);
                }
            }
        }
        assertThat(foreign)
                .as("services whose interface or provider is not ours or relocated under ours")
                .isEmpty();
    }

    @Test
    void everyClassIsOursOrRelocatedUnderOurPackage() {
        Map<String, Long> foreign =
                classes()
                        .filter(c -> !c.startsWith("dev/snapshots/"))
                        .filter(c -> FOREIGN_CLASSES_ALLOWED.stream().noneMatch(c::startsWith))
                        .collect(
                                Collectors.groupingBy(
                                        c -> packageOf(c, 3), TreeMap::new, Collectors.counting()));
        assertThat(foreign).as("classes per package outside dev/snapshots/").isEmpty();
        assertThat(jar.getEntry("core-default.xml"))
                .as("Hadoop's defaults, which a Hadoop of the user's own would read from here")
                .isNull();
    }

    @Test
    void everyBundledLicenceAndNoticeIsKept() {
        assertThat(text("META-INF/LICENSE"))
                .as("the jars' licences, appended: Apache 2.0, and stax2-api's BSD")
                .contains("Apache License", "This copy of Stax2 API is licensed under the");
        assertThat(text("META-INF/NOTICE"))
                .as("the jars' notices, merged")
                .contains("Apache Hadoop", "AWS SDK for Java 2.0", "Flink : Formats : Parquet");
        assertThat(jar.getEntry("META-INF/licenses-binary/LICENSE.protobuf.txt"))
                .as("a licence kept under its own name (hadoop-shaded-guava's)")
                .isNotNull();
    }

    private static Stream<String> classes() {
        return jar.stream()
                .map(JarEntry::getName)
                .filter(n -> n.endsWith(".class"))
                .map(n -> n.replaceFirst("^META-INF/versions/\\d+/", ""));
    }

    /** Class counts by their first three package names, relocated ones under their own. */
    private static Map<String, Long> classesPerPackage() {
        return classes()
                .map(c -> c.replaceFirst("^dev/snapshots/shaded/", "(shaded) "))
                .collect(
                        Collectors.groupingBy(
                                c -> packageOf(c, 3), TreeMap::new, Collectors.counting()));
    }

    /** The first {@code depth} names of a class entry's package, dotted. */
    private static String packageOf(String classEntry, int depth) {
        List<String> names = List.of(classEntry.split("/"));
        return names.size() == 1
                ? "(default package)"
                : String.join(".", names.subList(0, Math.min(depth, names.size() - 1)));
    }

    /** The provider class names a services file lists, comments and blank lines left out. */
    private static List<String> providers(String service) {
        return text(service)
                .lines()
                .map(l -> l.replaceFirst("#.*", "").strip())
                .filter(l -> !l.isEmpty())
                .toList();
    }

    private static String text(String entry) {
        JarEntry e = jar.getJarEntry(entry);
        assertThat(e).as(entry).isNotNull();
        try {
            return new String(jar.getInputStream(e).readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException x) {
            throw new UncheckedIOException(x);
        }
    }
}
