package dev.snapshots.job.testutils;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Bytes a serializer wrote on the day a format version was introduced, kept in {@code
 * src/test/resources/golden}: a savepoint holding them must restore in every later release. {@code
 * -Dgolden.write=true} writes a new version's file; an existing file is never rewritten.
 */
public final class Golden {
    private static final Path DIR = Path.of("src/test/resources/golden");

    private Golden() {}

    public static byte[] bytes(String name, byte[] current) {
        Path file = DIR.resolve(name);
        try {
            if (!Files.exists(file) && Boolean.getBoolean("golden.write")) {
                Files.createDirectories(DIR);
                Files.write(file, current);
            }
            return Files.readAllBytes(file);
        } catch (IOException e) {
            throw new UncheckedIOException(
                    "golden file "
                            + file
                            + " is missing: run once with -Dgolden.write=true when a format version is added",
                    e);
        }
    }
}
