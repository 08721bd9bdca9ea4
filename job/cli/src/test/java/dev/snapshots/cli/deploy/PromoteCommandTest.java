package dev.snapshots.cli.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import dev.snapshots.cli.Cli;
import dev.snapshots.progress.CurrentVersion;
import dev.snapshots.store.ObjectStore;
import dev.snapshots.store.StoreSpec;
import dev.snapshots.testkit.PipelineHistory;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code snapshots promote}: a replay that starts later than the version readers follow is refused
 * with the windows they would lose, and {@code --force} promotes it.
 */
class PromoteCommandTest {
    private static final long MINUTE = 60_000;
    private static final long T0 = Instant.parse("2026-11-30T10:00:00Z").toEpochMilli();

    @TempDir Path dir;

    @Test
    void aLaterStartingVersionIsRefusedAndForcePromotesIt() throws Exception {
        StoreSpec spec = StoreSpec.local(dir);
        try (ObjectStore store = spec.open()) {
            PipelineHistory.of(store, "telemetry", Duration.ofMinutes(5))
                    .complete(1, T0, T0 + 60 * MINUTE)
                    .complete(2, T0 + 30 * MINUTE, T0 + 60 * MINUTE);
        }

        Run refused = promote(spec);
        assertThat(refused.code).as(refused.out).isOne();
        assertThat(refused.out)
                .startsWith("audit gate: clean (every window of v=2)\npromotion refused: ")
                .contains("readers would lose", "of v=1: 6 windows", "--force");

        Run forced = promote(spec, "--force");
        assertThat(forced.code).as(forced.out + forced.err).isZero();
        assertThat(forced.out).contains("\npromoted: v=2 is current").contains("forced");
        try (ObjectStore store = spec.open()) {
            assertThat(CurrentVersion.read(store, "telemetry")).contains(2);
        }
    }

    /**
     * Write, audit, publish: a version the audit finds a part missing from is not promoted, even
     * with --force, and readers keep the version they follow.
     */
    @Test
    void anAuditFindingBlocksThePromotionEvenForced() throws Exception {
        StoreSpec spec = StoreSpec.local(dir);
        String lost;
        List<String> promotions;
        try (ObjectStore store = spec.open()) {
            PipelineHistory.of(store, "telemetry", Duration.ofMinutes(5))
                    .complete(1, T0, T0 + 60 * MINUTE)
                    .complete(2, T0, T0 + 60 * MINUTE);
            lost =
                    keys(store, "telemetry/v=2/").stream()
                            .filter(k -> k.endsWith(".parquet"))
                            .findFirst()
                            .orElseThrow();
            store.delete(lost);
            promotions = keys(store, "telemetry/promoted/");
        }

        Run blocked = promote(spec, "--force");
        assertThat(blocked.code).as(blocked.out + blocked.err).isOne();
        assertThat(blocked.out)
                .startsWith("promotion of v=2 blocked by the audit of ")
                .contains("missing-part", lost, "--job-version 2", "nothing was changed");
        try (ObjectStore store = spec.open()) {
            assertThat(CurrentVersion.read(store, "telemetry")).isEmpty();
            assertThat(keys(store, "telemetry/promoted/")).isEqualTo(promotions);
        }
    }

    private static List<String> keys(ObjectStore store, String prefix) throws Exception {
        List<String> keys = new ArrayList<>();
        store.list(prefix, o -> keys.add(o.key()));
        return keys;
    }

    private record Run(int code, String out, String err) {}

    private static Run promote(StoreSpec spec, String... more) {
        String[] args = new String[4 + more.length];
        args[0] = "promote";
        args[1] = spec.uri().toString();
        args[2] = "--job-version";
        args[3] = "2";
        System.arraycopy(more, 0, args, 4, more.length);
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code =
                Cli.run(
                        args,
                        new PrintStream(out, true, StandardCharsets.UTF_8),
                        new PrintStream(err, true, StandardCharsets.UTF_8),
                        Cli.commands(Map.of()),
                        "snapshots");
        return new Run(
                code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }
}
