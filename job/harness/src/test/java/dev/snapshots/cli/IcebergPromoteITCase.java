package dev.snapshots.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.snapshots.iceberg.IcebergTable;
import dev.snapshots.job.SnapshotJob;
import dev.snapshots.job.config.JobConfig;
import dev.snapshots.store.StoreSpec;
import dev.snapshots.testkit.IcebergCatalogs;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Map;
import java.util.stream.Collectors;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.iceberg.Table;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The bundled job with {@code --iceberg-table}, and {@code snapshots promote} moving the table's
 * readers: a replay into version 2 commits to its branch while {@code main} shows version 1, and
 * promote moves {@code main} to version 2 after its usual check.
 */
class IcebergPromoteITCase {
    @RegisterExtension
    static final MiniClusterExtension CLUSTER =
            new MiniClusterExtension(
                    new MiniClusterResourceConfiguration.Builder()
                            .setNumberTaskManagers(1)
                            .setNumberSlotsPerTaskManager(4)
                            .build());

    private static final String TABLE = "analytics.telemetry";

    @TempDir Path tmp;

    @Test
    void promoteMovesTheIcebergTablesMainToTheReplayedVersion() throws Exception {
        StoreSpec store = StoreSpec.local(tmp.resolve("store"));
        Map<String, String> catalog = IcebergCatalogs.sqlite(tmp.resolve("catalog.db"));
        String catalogFlag =
                catalog.entrySet().stream()
                        .map(e -> e.getKey() + "=" + e.getValue())
                        .collect(Collectors.joining(","));
        run(store, catalogFlag, "1");
        run(store, catalogFlag, "2");

        IcebergTable table = IcebergTable.in(catalog, TABLE);
        IcebergTable.Opened iceberg = table.open(store);
        Table t = iceberg.catalog().loadTable(table.identifier());
        assertThat(t.snapshot("v2")).as("version 2's branch").isNotNull();
        assertThat(t.currentSnapshot().snapshotId())
                .as("main before promote: version 1")
                .isEqualTo(t.snapshot("v1").snapshotId());

        ByteArrayOutputStream out = new ByteArrayOutputStream();
        int code =
                Cli.run(
                        new String[] {
                            "promote",
                            store.uri().toString(),
                            "--job-version",
                            "2",
                            "--iceberg-table",
                            TABLE,
                            "--iceberg-catalog",
                            catalogFlag
                        },
                        new PrintStream(out, true, StandardCharsets.UTF_8),
                        new PrintStream(out, true, StandardCharsets.UTF_8),
                        Cli.commands(Map.of()),
                        "snapshots");
        assertThat(code).as(out.toString(StandardCharsets.UTF_8)).isZero();
        t.refresh();
        assertThat(t.currentSnapshot().snapshotId())
                .as("main after promote")
                .isEqualTo(t.snapshot("v2").snapshotId());
        iceberg.close();
    }

    private static void run(StoreSpec store, String catalog, String jobVersion) throws Exception {
        JobConfig config =
                JobConfig.parse(
                        new String[] {
                            "--store",
                            store.uri().toString(),
                            "--job-version",
                            jobVersion,
                            "--windows",
                            "3",
                            "--checkpoint-interval",
                            "300ms",
                            "--iceberg-table",
                            TABLE,
                            "--iceberg-catalog",
                            catalog
                        });
        SnapshotJob.start(StreamExecutionEnvironment.getExecutionEnvironment(), config)
                .getJobExecutionResult()
                .get();
    }
}
