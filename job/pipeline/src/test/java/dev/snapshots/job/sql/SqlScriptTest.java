package dev.snapshots.job.sql;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.tuple;

import dev.snapshots.job.sql.SqlScript.Kind;
import dev.snapshots.job.sql.SqlScript.Statement;
import java.util.Map;
import org.junit.jupiter.api.Test;

class SqlScriptTest {
    @Test
    void statementsEndAtSemicolonsThatAreCodeWithTheLineTheyStartOn() {
        SqlScript script =
                SqlScript.parse(
                        """
                        -- orders; per hour
                        SET 'pipeline.name' = 'it''s; mine';
                        /* a comment; with a semicolon */
                        CREATE TABLE `a;b` (x STRING COMMENT 'one; two')
                          WITH ('connector' = 'datagen');

                        create temporary view v AS SELECT "x;y" FROM `a;b`;
                        INSERT INTO t /*+ OPTIONS('job-version' = '2') */ SELECT * FROM v
                        """);

        assertThat(script.statements())
                .extracting(Statement::line, Statement::kind)
                .containsExactly(
                        tuple(2, Kind.SET),
                        tuple(4, Kind.CREATE),
                        tuple(7, Kind.CREATE),
                        tuple(8, Kind.INSERT));
        assertThat(script.statements().get(1).text())
                .isEqualTo(
                        "CREATE TABLE `a;b` (x STRING COMMENT 'one; two')\n"
                                + "  WITH ('connector' = 'datagen')");
        assertThat(script.statements().get(3).text())
                .as("a hint is kept")
                .contains("/*+ OPTIONS('job-version' = '2') */");
        assertThat(script.settings()).isEqualTo(Map.of("pipeline.name", "it's; mine"));
    }

    @Test
    void aStatementOfAnotherKindIsRefusedWithItsLine() {
        assertThatThrownBy(
                        () ->
                                SqlScript.parse(
                                        "CREATE TABLE a (x INT);\n\nSELECT * FROM a;\nINSERT INTO b"
                                                + " SELECT * FROM a;"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage(
                        "line 3: a script holds CREATE TABLE, CREATE VIEW, SET and one INSERT INTO;"
                                + " found: SELECT * FROM a");
    }

    @Test
    void aScriptWritesExactlyOneTable() {
        assertThatThrownBy(() -> SqlScript.parse("CREATE VIEW v AS SELECT 1;"))
                .hasMessageContaining("has no INSERT INTO");
        assertThatThrownBy(
                        () -> SqlScript.parse("INSERT INTO a SELECT 1;\nINSERT INTO b SELECT 2;"))
                .hasMessageContaining("2 INSERT INTO statements (lines 1, 2)");
    }

    @Test
    void anUnclosedStringOrCommentIsNamed() {
        assertThatThrownBy(() -> SqlScript.parse("INSERT INTO a\nSELECT 'x;"))
                .hasMessage("line 2: a '-quoted text is never closed");
        assertThatThrownBy(() -> SqlScript.parse("/* INSERT INTO a SELECT 1;"))
                .hasMessage("line 1: a comment is never closed");
        assertThatThrownBy(() -> SqlScript.parse("SET parallelism = 2; INSERT INTO a SELECT 1"))
                .hasMessageContaining("write a setting as SET 'key' = 'value'");
    }

    @Test
    void theSinkOptionsAreTheWrittenTablesWithTheInsertsHintOverThem() {
        SqlScript script =
                SqlScript.parse(
                        """
                        CREATE TABLE other (x STRING) WITH ('pipeline' = 'not-this');
                        CREATE TABLE cat.db.`out``s` (
                          x STRING COMMENT 'a ) WITH ( in a comment',
                          PRIMARY KEY (x) NOT ENFORCED
                        ) WITH (
                          'connector' = 'canonical-snapshots',
                          'store' = 's3://b/it''s',
                          'pipeline' = 'orders',
                          'job-version' = '1'
                        );
                        INSERT INTO `out``s` /*+ OPTIONS('job-version'='2') */ SELECT * FROM other
                        """);

        assertThat(script.sinkOptions())
                .containsExactly(
                        Map.entry("connector", "canonical-snapshots"),
                        Map.entry("store", "s3://b/it's"),
                        Map.entry("pipeline", "orders"),
                        Map.entry("job-version", "2"));
    }

    @Test
    void aScriptThatWritesATableItDoesNotDeclareHasNoSinkOptions() {
        assertThatThrownBy(
                        () ->
                                SqlScript.parse(
                                                "CREATE TABLE a (x INT) WITH ('k' = 'v');\n"
                                                        + "INSERT INTO b SELECT * FROM a;")
                                        .sinkOptions())
                .hasMessage(
                        "the INSERT on line 2 writes b, which the script does not declare with"
                                + " CREATE TABLE");
    }
}
