package dev.snapshots.harness.metrics;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.apache.flink.annotation.Internal;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.ObjectMapper;

/** What the {@link CounterFileReporter}s of a cluster wrote, read back. */
@Internal
public final class CounterFiles {
    private static final ObjectMapper JSON = new ObjectMapper();

    private CounterFiles() {}

    /**
     * Each counter summed over every task attempt in every file of {@code directory}; empty if
     * there is none.
     */
    public static Map<String, Long> totals(Path directory) throws IOException {
        Map<String, Long> totals = new TreeMap<>();
        if (!Files.isDirectory(directory)) {
            return totals;
        }
        List<Path> files;
        try (Stream<Path> listing = Files.list(directory)) {
            files =
                    listing.filter(p -> p.getFileName().toString().matches("counters-\\d+\\.json"))
                            .toList();
        }
        for (Path file : files) {
            for (JsonNode counter : JSON.readTree(file.toFile()).path("counters")) {
                totals.merge(
                        counter.path("counter").asText(),
                        counter.path("value").asLong(),
                        Long::sum);
            }
        }
        return totals;
    }
}
