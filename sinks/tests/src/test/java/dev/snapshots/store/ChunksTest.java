package dev.snapshots.store;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class ChunksTest {

    /** Around a chunk's edge (64 KiB) and across several, written in odd pieces and by byte. */
    @ParameterizedTest
    @ValueSource(ints = {0, 1, 65_535, 65_536, 65_537, 200_000})
    void everyReadingGivesBackWhatWasWritten(int size, @TempDir Path dir) throws Exception {
        byte[] content = random(size, size);
        Chunks chunks = new Chunks();
        int at = 0;
        for (int piece = 1; at < size; piece = piece * 3 + 1) {
            int n = Math.min(piece, size - at);
            if (n == 1) {
                chunks.write(content[at]);
            } else {
                chunks.write(content, at, n);
            }
            at += n;
        }

        assertThat(chunks.length()).isEqualTo(size);
        assertThat(chunks.toByteArray()).isEqualTo(content);
        assertThat(chunks.open().readAllBytes()).isEqualTo(content);
        assertThat(chunks.open().readAllBytes()).as("a second attempt").isEqualTo(content);
        Path file = dir.resolve("staged");
        try (FileChannel ch =
                FileChannel.open(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
            chunks.writeTo(ch);
        }
        assertThat(Files.readAllBytes(file)).isEqualTo(content);
    }

    /** A writer's buffer serves a large part, then a small one, then a large one again. */
    @Test
    void aResetBufferHoldsOnlyTheNextContent() throws Exception {
        Chunks chunks = new Chunks();
        for (int size : new int[] {300_000, 10, 70_000}) {
            byte[] content = random(size, size + 1);
            chunks.reset();
            chunks.write(content, 0, size);

            assertThat(chunks.length()).isEqualTo(size);
            assertThat(chunks.toByteArray()).isEqualTo(content);
            assertThat(chunks.open().readAllBytes()).isEqualTo(content);
        }
    }

    private static byte[] random(int size, long seed) {
        byte[] b = new byte[size];
        new Random(seed).nextBytes(b);
        return b;
    }
}
