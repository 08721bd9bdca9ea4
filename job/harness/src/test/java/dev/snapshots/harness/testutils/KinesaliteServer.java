package dev.snapshots.harness.testutils;

import dev.snapshots.harness.cluster.Kinesalite;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * One {@link Kinesalite} per test JVM, started on first use and stopped when the JVM exits. Build
 * Kinesis clients, Flink sources included, only after {@link #get()}: loading Kinesalite switches
 * the AWS SDK to JSON.
 */
public final class KinesaliteServer {
    private static Kinesalite instance;

    private KinesaliteServer() {}

    public static synchronized Kinesalite get() {
        if (instance == null) {
            try {
                instance =
                        Kinesalite.start(
                                Path.of(System.getProperty("snapshots.root", "..")),
                                Files.createTempDirectory("kinesalite"));
            } catch (IOException e) {
                throw new UncheckedIOException("could not start kinesalite", e);
            }
            Runtime.getRuntime().addShutdownHook(new Thread(instance::stop));
        }
        return instance;
    }
}
