package dev.snapshots.cli.deploy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.snapshots.job.sql.SqlJob;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What submit, upgrade and replay take as their program, and what they refuse before any call. */
class ProgramTest {
    private static final Path EXAMPLE =
            Path.of(System.getProperty("snapshots.root", "../.."), "examples/orders/orders.sql");

    @TempDir Path dir;

    @Test
    void aScriptIsKnownByTheTableItsInsertWrites() throws Exception {
        Program p = Program.sql(EXAMPLE);

        assertThat(p.pipeline()).isEqualTo("orders");
        assertThat(p.jobVersion()).isEqualTo(1);
        assertThat(p.store().uri()).isEqualTo(URI.create("file:///tmp/snapshots-orders"));
        assertThat(p.entryClass()).isEqualTo("dev.snapshots.job.sql.SqlJob");
        assertThat(p.args()).containsExactly(SqlJob.SQL_TEXT, Files.readString(EXAMPLE));
        assertThat(p.checkpointInterval()).isEqualTo(Duration.ofSeconds(10));
    }

    @Test
    void aScriptsOwnCheckpointIntervalSetsHowLongSubmitWaits() throws Exception {
        Path script = dir.resolve("s.sql");
        Files.writeString(
                script,
                "SET 'execution.checkpointing.interval' = '30 s';\n" + Files.readString(EXAMPLE));

        assertThat(Program.sql(script).checkpointInterval()).isEqualTo(Duration.ofSeconds(30));
    }

    @Test
    void aScriptThatWouldClaimWhatItResumesFromIsRefused() throws Exception {
        Path script = dir.resolve("s.sql");
        Files.writeString(
                script,
                "SET 'execution.state-recovery.claim-mode' = 'CLAIM';\n"
                        + Files.readString(EXAMPLE));

        assertThatThrownBy(() -> Program.sql(script))
                .hasMessageContaining(
                        "SET 'execution.state-recovery.claim-mode' = 'CLAIM': a resumed job must"
                                + " not claim what it resumed from");
    }

    @Test
    void aScriptThatWritesAnotherConnectorIsRefused() throws Exception {
        Path script = dir.resolve("s.sql");
        Files.writeString(
                script,
                Files.readString(EXAMPLE)
                        .replace("'connector' = 'canonical-snapshots'", "'connector' = 'print'"));

        assertThatThrownBy(() -> Program.sql(script))
                .hasMessageEndingWith(
                        "its INSERT writes a table whose connector is print, not"
                                + " canonical-snapshots: nothing for submit to resume or audit");
    }

    @Test
    void flagsThatCannotNameOneProgramAreRefusedBeforeAnyCall() {
        String rest = "http://127.0.0.1:1";
        Map<List<String>, String> refused =
                Map.of(
                        List.of("--sql", EXAMPLE.toString(), "--window", "1h"),
                        "with --sql the script is the whole job: no job flags (found [--window])",
                        List.of("--pipeline", "p", "--job-version", "1", "--", "--x"),
                        "--store is required for a jar with its own arguments: --pipeline,"
                                + " --job-version and --store name what its sink writes",
                        List.of(
                                "--pipeline",
                                "p",
                                "--job-version",
                                "1",
                                "--store",
                                "file:///s",
                                "--buckets",
                                "4",
                                "--",
                                "--x"),
                        "[--buckets] are the bundled job's flags; a jar's own arguments go after"
                                + " --",
                        List.of("--entry-class", "a.B", "--store", "file:///s"),
                        "--entry-class is for a jar with its own arguments (after --)");
        refused.forEach(
                (flags, message) -> {
                    List<String> args =
                            new java.util.ArrayList<>(List.of("--rest", rest, "--jar", "j.jar"));
                    args.addAll(flags);
                    assertThatThrownBy(
                                    () ->
                                            JobLifecycle.run(
                                                    "submit",
                                                    args.toArray(new String[0]),
                                                    new PrintStream(new ByteArrayOutputStream()),
                                                    Map.of()))
                            .as("%s", flags)
                            .hasMessage(message);
                });
    }
}
