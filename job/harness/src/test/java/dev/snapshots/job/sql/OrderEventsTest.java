package dev.snapshots.job.sql;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

class OrderEventsTest {
    @Test
    void theExamplesEventsAreTheGeneratorsAndSplitByHourAddUpToThem() throws Exception {
        Path file = Path.of(System.getProperty("snapshots.root"), "examples/orders/orders.jsonl");

        assertThat(Files.readAllLines(file))
                .as("regenerate with: java OrderEvents %s", file)
                .isEqualTo(OrderEvents.lines(0, OrderEvents.HOURS));
        assertThat(OrderEvents.lines(0, 2)).hasSize(2 * OrderEvents.PER_HOUR);
        assertThat(OrderEvents.lines(2, OrderEvents.HOURS))
                .isEqualTo(
                        OrderEvents.lines(0, OrderEvents.HOURS)
                                .subList(
                                        2 * OrderEvents.PER_HOUR,
                                        OrderEvents.HOURS * OrderEvents.PER_HOUR));
    }
}
