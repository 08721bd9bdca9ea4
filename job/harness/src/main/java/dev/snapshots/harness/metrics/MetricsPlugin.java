package dev.snapshots.harness.metrics;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import org.apache.flink.annotation.Internal;
import org.apache.flink.metrics.reporter.MetricReporterFactory;

/**
 * The {@link CounterFileReporter} as a Flink plugin, for a cluster whose JVMs have Flink's
 * classpath only: a jar of the reporter, its factory and the service file naming the factory, and
 * the lines of config.yaml that turn it on. The jar is built from this classloader's class bytes,
 * because the harness runs from target/classes as often as from a jar.
 */
@Internal
public final class MetricsPlugin {
    /** The plugin's directory under the plugins directory, and its jar's name. */
    public static final String NAME = "snapshots-metrics";

    /** The reporter's name in {@code metrics.reporter.NAME.*}. */
    private static final String REPORTER = "counters";

    private static final List<Class<?>> CLASSES =
            List.of(CounterFileReporter.class, CounterFileReporterFactory.class);

    private MetricsPlugin() {}

    /** Writes the plugin's jar into {@code plugins/}{@value #NAME}{@code /}. */
    public static void install(Path plugins) throws IOException {
        Path dir = Files.createDirectories(plugins.resolve(NAME));
        try (OutputStream file = Files.newOutputStream(dir.resolve(NAME + ".jar"));
                JarOutputStream jar = new JarOutputStream(file)) {
            for (Class<?> c : CLASSES) {
                String entry = c.getName().replace('.', '/') + ".class";
                try (InputStream bytes =
                        MetricsPlugin.class.getClassLoader().getResourceAsStream(entry)) {
                    if (bytes == null) {
                        throw new IOException(entry + " is not on the harness's classpath");
                    }
                    jar.putNextEntry(new JarEntry(entry));
                    bytes.transferTo(jar);
                }
            }
            jar.putNextEntry(
                    new JarEntry("META-INF/services/" + MetricReporterFactory.class.getName()));
            jar.write(
                    (CounterFileReporterFactory.class.getName() + "\n")
                            .getBytes(StandardCharsets.UTF_8));
        }
    }

    /** The config.yaml lines that report every second into {@code directory}. */
    public static List<String> config(Path directory) {
        String prefix = "metrics.reporter." + REPORTER + ".";
        return List.of(
                prefix + "factory.class: " + CounterFileReporterFactory.class.getName(),
                prefix + "interval: 1 s",
                prefix + CounterFileReporterFactory.DIRECTORY + ": " + directory);
    }
}
