package dev.snapshots.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.snapshots.harness.JobOutput;
import dev.snapshots.harness.Snapshots;
import dev.snapshots.harness.testutils.WindowRows;
import dev.snapshots.job.SnapshotJob;
import dev.snapshots.job.config.JobConfig;
import dev.snapshots.store.StoreSpec;
import dev.snapshots.testkit.StoreKind;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@code snapshots ddl}'s table, read by DuckDB through exactly the partitions and types it
 * declares: the columns and their types as DuckDB reads the parts, every stored date and window
 * inside the projection, and the rows a reference computed from the input says were published.
 */
class DdlITCase {
    @RegisterExtension
    static final MiniClusterExtension CLUSTER =
            new MiniClusterExtension(
                    new MiniClusterResourceConfiguration.Builder()
                            .setNumberTaskManagers(1)
                            .setNumberSlotsPerTaskManager(4)
                            .build());

    private static final Pattern COLUMN = Pattern.compile("^  `([^`]+)` (\\S+?),?$");
    private static final Pattern PROPERTY = Pattern.compile("^  '([^']+)' = '([^']*)',?$");
    private static final Map<String, String> DUCKDB =
            Map.of(
                    "string", "VARCHAR",
                    "bigint", "BIGINT",
                    "double", "DOUBLE",
                    "int", "INTEGER",
                    // Parquet's timestamps from Avro's timestamp-millis are adjusted to UTC.
                    "timestamp", "TIMESTAMP WITH TIME ZONE");

    private static StoreSpec store;
    private static JobConfig config;

    /** One run of the job, its version promoted, for every test. */
    @BeforeAll
    static void publish() throws Exception {
        store = StoreKind.FILESYSTEM.fresh();
        config =
                JobConfig.parse(
                        new String[] {
                            "--store", store.uri().toString(),
                            "--windows", "3",
                            "--checkpoint-interval", "300ms"
                        });
        SnapshotJob.start(StreamExecutionEnvironment.getExecutionEnvironment(), config)
                .getJobExecutionResult()
                .get();
        run("promote", store.uri().toString(), "--job-version", "1");
    }

    @Test
    void duckDbReadsTheStoreThroughTheTablesPartitionsAndTypes() throws Exception {
        String ddl =
                run("ddl", store.uri().toString(), "--pipeline", "telemetry", "--job-version", "1");
        Map<String, String> columns = new LinkedHashMap<>();
        Map<String, String> properties = new LinkedHashMap<>();
        // The version's table comes first, as before 0.3.0; the records' tables and the view after.
        for (String line : ddl.substring(0, ddl.indexOf(";\n")).lines().toList()) {
            Matcher c = COLUMN.matcher(line);
            Matcher p = PROPERTY.matcher(line);
            if (c.matches()) {
                columns.put(c.group(1), c.group(2));
            } else if (p.matches()) {
                properties.put(p.group(1), p.group(2));
            }
        }
        assertThat(ddl)
                .contains("CREATE EXTERNAL TABLE IF NOT EXISTS `telemetry_v1`")
                .contains("PARTITIONED BY (`date` string, `window` string)");
        assertThat(columns).containsEntry("device", "string").containsEntry("count", "bigint");
        String location = ddl.substring(ddl.indexOf("LOCATION '") + 10);
        location = location.substring(0, location.indexOf('\''));
        assertThat(properties.get("storage.location.template"))
                .isEqualTo(location + "date=${date}/window=${window}/");
        Set<String> windows =
                Set.copyOf(Arrays.asList(properties.get("projection.window.values").split(",")));
        assertThat(windows).hasSize(288).contains("0000", "1005", "2355");

        String files = Path.of(java.net.URI.create(location)) + "/date=*/window=*/*.parquet";
        String from =
                "read_parquet('"
                        + files
                        + "', hive_partitioning = true, hive_types = {'date': VARCHAR, 'window': VARCHAR})";
        try (Connection duckdb = DriverManager.getConnection("jdbc:duckdb:");
                Statement st = duckdb.createStatement()) {
            Map<String, String> read = new LinkedHashMap<>();
            try (ResultSet rs = st.executeQuery("DESCRIBE SELECT * FROM " + from)) {
                while (rs.next()) {
                    read.put(rs.getString("column_name"), rs.getString("column_type"));
                }
            }
            // DuckDB takes every key=value directory of the path as a partition; the table's
            // location starts below v= and schema=.
            read.keySet().removeAll(Set.of("v", "schema"));
            columns.forEach(
                    (name, type) ->
                            assertThat(read.get(name)).as(name).isEqualTo(DUCKDB.get(type)));
            assertThat(read).containsEntry("date", "VARCHAR").containsEntry("window", "VARCHAR");
            assertThat(read.keySet())
                    .as("no column the table leaves out")
                    .containsExactlyElementsOf(
                            Stream.concat(columns.keySet().stream(), Stream.of("date", "window"))
                                    .toList());

            String firstDate = properties.get("projection.date.range").split(",")[0];
            try (ResultSet rs =
                    st.executeQuery(
                            "SELECT count(*) AS n, min(date) AS first,"
                                    + " list(DISTINCT \"window\") AS windows FROM "
                                    + from)) {
                rs.next();
                long published =
                        JobOutput.expected(config).parts.values().stream()
                                .mapToLong(Set::size)
                                .sum();
                assertThat(rs.getLong("n")).as("rows").isEqualTo(published);
                assertThat(rs.getString("first")).isEqualTo(firstDate);
                List<?> stored = List.of((Object[]) rs.getArray("windows").getArray());
                assertThat(stored)
                        .isNotEmpty()
                        .allSatisfy(w -> assertThat(windows).contains((String) w));
            }
        }
    }

    /**
     * Each engine's view, run by DuckDB over stand-ins of the tables it reads (DuckDB reads Trino's
     * SQL, and Spark's with its backticks as double quotes): every complete window of the promoted
     * version, whole; a window without its record, or with a part its engine did not list, is left
     * out; and nothing of a version that is not promoted.
     */
    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"athena", "spark", "trino"})
    void theViewReturnsTheCompleteWindowsOfThePromotedVersionWhole(String engine) throws Exception {
        String ddl =
                run(
                        "ddl",
                        store.uri().toString(),
                        "--pipeline",
                        "telemetry",
                        "--job-version",
                        "1",
                        "--engine",
                        engine);
        Matcher view =
                Pattern.compile(
                                "(?s)CREATE OR REPLACE (TEMPORARY )?VIEW [`\"]telemetry_complete[`\"] AS\n.*?;\n")
                        .matcher(ddl);
        assertThat(view.find()).as(ddl).isTrue();
        String statement = view.group().replace("TEMPORARY ", "").replace('`', '"');
        Map<String, List<String>> expected = WindowRows.expected(config);
        Map<String, List<String>> withoutRecord = new TreeMap<>(expected);
        withoutRecord.remove("2026-11-30/1005");
        Map<String, List<String>> withoutPart = new TreeMap<>(expected);
        withoutPart.remove("2026-11-30/1010");

        try (Connection duckdb = DriverManager.getConnection("jdbc:duckdb:")) {
            assertThat(complete(duckdb, engine, statement, "true", "true", 0)).isEqualTo(expected);
            assertThat(complete(duckdb, engine, statement, "\"window\" <> '1005'", "true", 0))
                    .as("window 1005 without its record")
                    .isEqualTo(withoutRecord);
            assertThat(
                            complete(
                                    duckdb,
                                    engine,
                                    statement,
                                    "true",
                                    "NOT (\"window\" = '1010' AND filename LIKE '%/part-00000-%')",
                                    0))
                    .as("window 1010 with one part not listed")
                    .isEqualTo(withoutPart);
            assertThat(complete(duckdb, engine, statement, "true", "true", 1))
                    .as("v=2 promoted")
                    .isEmpty();
        }
    }

    /**
     * The view's rows over stand-ins of its tables: the parts where {@code parts} holds, the
     * records of complete windows where {@code records} holds, and the promoted version moved by
     * {@code promotedOffset}.
     */
    private static Map<String, List<String>> complete(
            Connection duckdb,
            String engine,
            String view,
            String records,
            String parts,
            int promotedOffset)
            throws Exception {
        String root = Path.of(store.uri()) + "/telemetry/";
        String data = engine.equals("athena") ? "telemetry_v1" : "telemetry_parts";
        try (Statement st = duckdb.createStatement()) {
            st.execute(
                    "CREATE OR REPLACE VIEW "
                            + data
                            + " AS SELECT * FROM read_parquet('"
                            + root
                            + "v=*/schema=*/date=*/window=*/*.parquet', hive_partitioning = true,"
                            + " hive_types_autocast = false, filename = true) WHERE "
                            + parts);
            st.execute(
                    "CREATE OR REPLACE VIEW telemetry_complete_windows AS SELECT * FROM read_json('"
                            + root
                            + "complete/*.json') WHERE "
                            + records);
            st.execute(
                    "CREATE OR REPLACE VIEW telemetry_promotions AS SELECT job_version + "
                            + promotedOffset
                            + " AS job_version, sequence FROM read_json('"
                            + root
                            + "promoted/*.json')");
            st.execute(view);
        }
        return WindowRows.query(duckdb, "SELECT * FROM telemetry_complete");
    }

    private static String run(String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        int code =
                Snapshots.run(args, new PrintStream(out, true, StandardCharsets.UTF_8), System.err);
        String printed = out.toString(StandardCharsets.UTF_8);
        assertThat(code).as(printed).isZero();
        return printed;
    }
}
