package dev.snapshots.harness;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Properties;
import org.apache.flink.annotation.Internal;

/**
 * The version this tree was built as, which names the jars the harness starts: {@code
 * 0.3.0-1.20-SNAPSHOT}, or {@code 0.3.0-2.3-SNAPSHOT} when built for Flink 2 ({@code -Pflink2}).
 * Maven writes it into {@code build.properties}; a constant here would name the other line's jar
 * after a build of one.
 */
@Internal
public final class BuildVersion {
    public static final String VERSION = read();

    private BuildVersion() {}

    /** {@code module}'s jar under the repository root, e.g. {@code job/pipeline}, {@code -job}. */
    public static String jar(String module, String artifactId, String classifier) {
        return module + "/target/" + artifactId + "-" + VERSION + classifier + ".jar";
    }

    private static String read() {
        try (InputStream in = BuildVersion.class.getResourceAsStream("build.properties")) {
            if (in == null) {
                throw new IllegalStateException(
                        "build.properties is missing from the harness's classes: build with"
                                + " ./mvnw");
            }
            Properties p = new Properties();
            p.load(in);
            return p.getProperty("version");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
