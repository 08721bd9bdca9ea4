package dev.snapshots.job.sql;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.api.bridge.java.StreamStatementSet;
import org.apache.flink.table.api.bridge.java.StreamTableEnvironment;
import org.junit.jupiter.api.Test;

/**
 * The README's "What it refuses": each row's case is planned here, as Flink plans an INSERT (the
 * run-only rows by {@code ./snapshots run --sql}'s parser), and its refusal holds the words the
 * README quotes. A row without a case here, or a case without a row, fails.
 */
class RefusalsITCase {
    private static final Pattern ROW =
            Pattern.compile("^\\| (.+?) \\| .+? \\| `([^`]+)` \\|$", Pattern.MULTILINE);

    /** A bounded source of payments; {@code %s}: the sink's columns and options. */
    private static final String PAYMENTS =
            """
            CREATE TABLE payments (merchant STRING, amount DECIMAL(10, 2), paid_at TIMESTAMP(3),
              WATERMARK FOR paid_at AS paid_at - INTERVAL '5' SECOND)
            WITH ('connector' = 'filesystem', 'path' = 'target/no-payments.jsonl', 'format' = 'json');
            """;

    /** Planning probes the store: it is the build's, not /tmp's. */
    private static final String STORE =
            Path.of("target/snapshots-refusals").toAbsolutePath().toUri().toString();

    private static final String SINK_OPTIONS =
            "'connector' = 'canonical-snapshots', 'store' = '"
                    + STORE
                    + "', 'pipeline' = 'refusals', 'job-version' = '1', 'buckets' = '4'";

    private static final String PER_MINUTE =
            " SELECT window_start, window_end, merchant, SUM(amount) FROM TABLE(TUMBLE(TABLE"
                    + " payments, DESCRIPTOR(paid_at), INTERVAL '1' MINUTE)) GROUP BY window_start,"
                    + " window_end, merchant;";

    /** The README's first column, word for word, to the script it stands for. */
    private static final Map<String, String> CASES = new LinkedHashMap<>();

    static {
        CASES.put(
                "no `PRIMARY KEY (...) NOT ENFORCED`",
                sink(
                                "window_start TIMESTAMP(3), window_end TIMESTAMP(3), merchant STRING,"
                                        + " total DECIMAL(38, 2)")
                        + "INSERT INTO per_minute"
                        + PER_MINUTE);
        CASES.put(
                "no `window_start` and `window_end` (`TIMESTAMP(3)`)",
                sink("merchant STRING, total DECIMAL(38, 2), PRIMARY KEY (merchant) NOT ENFORCED")
                        + "INSERT INTO per_minute SELECT merchant, SUM(amount) FROM TABLE(TUMBLE(TABLE"
                        + " payments, DESCRIPTOR(paid_at), INTERVAL '1' MINUTE)) GROUP BY"
                        + " window_start, window_end, merchant;");
        CASES.put(
                "a type other than `STRING`, `BOOLEAN`, `INT`, `BIGINT`, `DOUBLE`, `DECIMAL(p, s)`,"
                        + " `DATE`, `TIMESTAMP(3)`, `TIMESTAMP_LTZ(3)` (e.g. `FLOAT`,"
                        + " `TIMESTAMP(6)`, `ARRAY`)",
                sink(keyed("total FLOAT"))
                        + "INSERT INTO per_minute"
                        + cast(" CAST(SUM(amount) AS FLOAT)"));
        CASES.put(
                "a column name beyond letters, digits and `_`",
                sink(keyed("`total amount` DECIMAL(38, 2)"))
                        + "INSERT INTO per_minute"
                        + PER_MINUTE);
        CASES.put(
                "a `GROUP BY` without a window, or anything else that updates or retracts rows",
                sink(keyed("total DECIMAL(38, 2)"))
                        + "INSERT INTO per_minute SELECT TIMESTAMP '2026-12-01 00:00:00', TIMESTAMP"
                        + " '2026-12-01 00:01:00', merchant, SUM(amount) FROM payments GROUP BY"
                        + " merchant;");
        CASES.put(
                "an unbounded source without checkpointing",
                """
                CREATE TABLE ticks (merchant STRING, amount DECIMAL(10, 2), paid_at TIMESTAMP(3),
                  WATERMARK FOR paid_at AS paid_at) WITH ('connector' = 'datagen');
                """
                        + sink(keyed("total DECIMAL(38, 2)"))
                        + "INSERT INTO per_minute"
                        + PER_MINUTE.replace("TABLE payments", "TABLE ticks"));
        CASES.put(
                "no `store`, `pipeline`, `job-version` or `buckets`",
                PAYMENTS
                        + "CREATE TABLE per_minute ("
                        + keyed("total DECIMAL(38, 2)")
                        + ") WITH ('connector' = 'canonical-snapshots', 'store' = '"
                        + STORE
                        + "', 'pipeline' = 'refusals', 'job-version' = '1');\nINSERT INTO per_minute"
                        + PER_MINUTE);
        CASES.put(
                "`./snapshots run --sql` only: a statement other than `CREATE TABLE`, `CREATE"
                        + " VIEW`, `SET` and one `INSERT INTO` (Flink's SQL Client runs any)",
                sink(keyed("total DECIMAL(38, 2)"))
                        + "SELECT * FROM payments;\nINSERT INTO per_minute"
                        + PER_MINUTE);
        CASES.put(
                "`./snapshots run --sql` only: two `INSERT INTO`",
                sink(keyed("total DECIMAL(38, 2)"))
                        + "INSERT INTO per_minute"
                        + PER_MINUTE
                        + "\nINSERT INTO per_minute"
                        + PER_MINUTE);
    }

    private static String keyed(String columns) {
        return "window_start TIMESTAMP(3) NOT NULL, window_end TIMESTAMP(3) NOT NULL, merchant"
                + " STRING NOT NULL, "
                + columns
                + ", PRIMARY KEY (window_start, window_end, merchant) NOT ENFORCED";
    }

    private static String sink(String columns) {
        return PAYMENTS
                + "CREATE TABLE per_minute ("
                + columns
                + ") WITH ("
                + SINK_OPTIONS
                + ");\n";
    }

    private static String cast(String total) {
        return PER_MINUTE.replace(" SUM(amount)", total);
    }

    @Test
    void everyRowOfTheReadmesListIsRefusedWithTheWordsItQuotes() throws Exception {
        String readme =
                Files.readString(Path.of(System.getProperty("snapshots.root"), "README.md"));
        String section =
                readme.substring(
                        readme.indexOf("### What it refuses"),
                        readme.indexOf("## Your pipeline in Java"));
        Map<String, String> quoted = new LinkedHashMap<>();
        Matcher row = ROW.matcher(section);
        while (row.find()) {
            if (!row.group(1).equals("You write") && !row.group(1).startsWith("---")) {
                quoted.put(row.group(1), row.group(2));
            }
        }
        assertThat(quoted.keySet()).containsExactlyElementsOf(CASES.keySet());
        for (Map.Entry<String, String> c : quoted.entrySet()) {
            assertThat(refusal(CASES.get(c.getKey())))
                    .as("the refusal of: %s", c.getKey())
                    .contains(c.getValue());
        }
    }

    /** What planning {@code script} reports, as {@code run --sql} plans it without checkpoints. */
    private static String refusal(String script) {
        try {
            SqlScript parsed = SqlScript.parse(script);
            StreamExecutionEnvironment env =
                    StreamExecutionEnvironment.getExecutionEnvironment(new Configuration());
            StreamTableEnvironment tables = StreamTableEnvironment.create(env);
            tables.getConfig().set("table.local-time-zone", "UTC");
            StreamStatementSet insert = tables.createStatementSet();
            for (SqlScript.Statement s : parsed.statements()) {
                if (s.kind() == SqlScript.Kind.INSERT) {
                    insert.addInsertSql(s.text());
                } else if (s.kind() != SqlScript.Kind.SET) {
                    tables.executeSql(s.text());
                }
            }
            insert.attachAsDataStream();
            return "planned without a refusal";
        } catch (RuntimeException e) {
            StringBuilder all = new StringBuilder();
            for (Throwable t = e; t != null; t = t.getCause()) {
                all.append(t.getMessage()).append('\n');
            }
            return all.toString();
        }
    }
}
