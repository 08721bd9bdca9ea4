package dev.snapshots.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Athena view follows promotion across job versions, each with its own table, and a version
 * whose schema lacks a column of the named version's gives NULL for it. (DdlITCase runs every
 * engine's view over a job's output.)
 */
class DdlTest {
    @TempDir Path dir;

    @Test
    void theAthenaViewHasABranchPerVersionAndNullForAColumnAVersionLacks() {
        Ddl.Column device = new Ddl.Column("device", "string");
        Ddl.Column region = new Ddl.Column("region", "string");
        Ddl.Version v1 = new Ddl.Version(1, List.of(device), "s3://b/t/v=1/schema=1/", "", 300_000);
        Ddl.Version v2 =
                new Ddl.Version(2, List.of(device, region), "s3://b/t/v=2/schema=2/", "", 300_000);
        Map<String, Ddl.Version> tables = new LinkedHashMap<>();
        tables.put("t_v2", v2);
        tables.put("t_v1", v1);

        String sql = Ddl.athena("t", "s3://b/t/", v2, tables);

        assertThat(sql)
                .contains("LOCATION 's3://b/t/complete/'", "LOCATION 's3://b/t/promoted/'")
                .contains(
                        "SELECT d.\"device\", d.\"region\", c.job_version",
                        "FROM \"t_v2\") d",
                        "c.job_version = 2 AND",
                        "\nUNION ALL\n",
                        "SELECT d.\"device\", CAST(NULL AS varchar) AS \"region\", c.job_version",
                        "FROM \"t_v1\") d",
                        "c.job_version = 1 AND");
        assertThat(sql.split("max_by\\(job_version, \"sequence\"\\)")).hasSize(3);
    }

    @Test
    void anUnknownEngineIsRefusedNamingTheOnesThereAre() {
        assertThatThrownBy(
                        () ->
                                Ddl.run(
                                        new String[] {
                                            dir.toUri().toString(),
                                            "--pipeline",
                                            "t",
                                            "--job-version",
                                            "1",
                                            "--engine",
                                            "hive"
                                        },
                                        new PrintStream(
                                                new ByteArrayOutputStream(),
                                                true,
                                                StandardCharsets.UTF_8)))
                .hasMessageContaining("--engine must be athena, spark or trino");
    }
}
