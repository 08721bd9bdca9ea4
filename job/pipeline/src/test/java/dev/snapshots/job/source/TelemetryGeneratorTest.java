package dev.snapshots.job.source;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The generator puts exactly the asked number of records in each window, whatever the ratio. */
class TelemetryGeneratorTest {
    private static final long WINDOW = Duration.ofMinutes(5).toMillis();

    @Test
    void eachWindowHoldsExactlyEventsPerWindowArrivals() {
        for (int perWindow : new int[] {7, 1000, 300_000, 2_000_000}) {
            TelemetryGenerator g =
                    new TelemetryGenerator(0, 1, 10, WINDOW, perWindow, 0, 0, 0, 65536);
            assertThat(g.arrival(perWindow - 1))
                    .as("last record of window 0, %d per window", perWindow)
                    .isLessThan(WINDOW);
            assertThat(g.arrival(perWindow))
                    .as("first record of window 1, %d per window", perWindow)
                    .isEqualTo(WINDOW);
            assertThat(g.arrival(3L * perWindow)).isEqualTo(3 * WINDOW);
        }
    }

    @Test
    void originsAndDevicesAreZeroPaddedAsBefore() {
        assertThat(TelemetryGenerator.origin(42)).isEqualTo("generator:000000000042");
        TelemetryGenerator g = new TelemetryGenerator(0, 7, 200, WINDOW, 1000, 0, 0, 0, 65536);
        assertThat(g.truth(3).event().device).matches("dev-\\d{5}");
    }
}
