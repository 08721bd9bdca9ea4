package dev.snapshots.job;

import static org.assertj.core.api.Assertions.assertThat;

import dev.snapshots.harness.JobOutput;
import dev.snapshots.job.config.JobConfig;
import dev.snapshots.store.StoreSpec;
import dev.snapshots.testkit.StoreKind;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The README's reader query, run as written by DuckDB over what the job published: only the bucket
 * ({@code s3://my-bucket/snapshots/}) becomes the local store's directory. Its rows must equal a
 * reference computed from the generator's truth, not from the job.
 */
class ReadmeQueryITCase {
    @RegisterExtension
    static final MiniClusterExtension CLUSTER =
            new MiniClusterExtension(
                    new MiniClusterResourceConfiguration.Builder()
                            .setNumberTaskManagers(1)
                            .setNumberSlotsPerTaskManager(4)
                            .build());

    private static final String BUCKET = "s3://my-bucket/snapshots/";

    @Test
    void theDuckDbQueryReturnsTheWindowsRowsAsTheReferenceHasThem() throws Exception {
        String readme =
                Files.readString(Path.of(System.getProperty("snapshots.root"), "README.md"));
        String sql = readme.substring(readme.indexOf("```sql\n-- DuckDB\n") + "```sql\n".length());
        sql = sql.substring(0, sql.indexOf("```")).trim();
        assertThat(sql).contains(BUCKET, "\"window\" = '1005'");

        StoreSpec store = StoreKind.FILESYSTEM.fresh();
        JobConfig config =
                JobConfig.parse(
                        new String[] {
                            "--store",
                            store.uri().toString(),
                            "--windows",
                            "3",
                            "--checkpoint-interval",
                            "300ms"
                        });
        SnapshotJob.start(StreamExecutionEnvironment.getExecutionEnvironment(), config)
                .getJobExecutionResult()
                .get();

        List<String> rows = new ArrayList<>();
        try (Connection duckdb = DriverManager.getConnection("jdbc:duckdb:");
                Statement st = duckdb.createStatement();
                ResultSet rs = st.executeQuery(sql.replace(BUCKET, Path.of(store.uri()) + "/"))) {
            while (rs.next()) {
                rows.add(
                        rs.getString("device")
                                + ","
                                + rs.getLong("count")
                                + ","
                                + Math.round(rs.getDouble("value_sum") * 1e6));
            }
        }

        long window = Instant.parse("2026-11-30T10:05:00Z").toEpochMilli();
        List<String> expected = new ArrayList<>();
        JobOutput reference = JobOutput.expected(config);
        for (Map.Entry<String, Set<String>> part : reference.parts.entrySet()) {
            if (part.getKey().startsWith(window + "/")) {
                for (String row : part.getValue()) {
                    String[] f = row.split(",");
                    expected.add(f[0] + "," + f[2] + "," + f[3]);
                }
            }
        }
        assertThat(expected)
                .as("the reference has rows in the queried window")
                .hasSizeGreaterThan(100);
        assertThat(rows)
                .as("the query's rows, ordered by device")
                .isEqualTo(expected.stream().sorted().toList());
    }
}
