package dev.snapshots.cli;

import dev.snapshots.format.PartEncoding;
import dev.snapshots.key.ObjectKeys;
import dev.snapshots.key.PartKind;
import dev.snapshots.progress.CompletionPointer;
import dev.snapshots.progress.VersionIdentity;
import dev.snapshots.store.ObjectStore;
import java.io.IOException;
import java.io.PrintStream;
import java.time.Instant;
import java.time.LocalTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.StringJoiner;
import java.util.TreeSet;
import java.util.function.UnaryOperator;
import org.apache.avro.LogicalTypes;
import org.apache.avro.Schema;
import org.apache.flink.annotation.Internal;

/**
 * {@code snapshots ddl}: the statements that let an engine read a pipeline's complete windows. For
 * Athena / Glue (the default), the table of each job version's snapshots as before, with the
 * columns of its parts' schema and {@code date} and {@code window} as projected partitions, so a
 * new window needs no {@code MSCK REPAIR} or crawler; for Spark and Trino, one table over every
 * version. Then, for each engine, tables of the readers' records ({@code complete/}, {@code
 * promoted/}) and a view of the complete windows of the promoted version: the data joined with
 * them, so it returns a window whole or not at all, and follows {@code promote}.
 */
@Internal
final class Ddl {
    static final String USAGE =
            String.join(
                    "\n",
                    "usage: snapshots ddl STORE_URI --pipeline P --job-version N [--table NAME]"
                            + " [--engine athena|spark|trino] [--endpoint URL]",
                    "  prints the statements that read the complete windows of the promoted job",
                    "  version: a view {P}_complete of the parts joined with the records of",
                    "  complete windows ({P}/complete/) and of promotions ({P}/promoted/), and what",
                    "  it reads. Every name quoted (date and window are reserved words); the window",
                    "  is text ('0005'). The view's columns are version N's. Reads each version's",
                    "  identity record and one of its parts. Run it again after a new version starts.",
                    "  --engine athena   (default) CREATE EXTERNAL TABLE per job version for Athena /",
                    "                    Glue, `date` and `window` as partitions with partition",
                    "                    projection, as before 0.3.0",
                    "  --engine spark    Spark SQL: temporary views over a basePath read of every",
                    "                    version, partition type inference off",
                    "  --engine trino    Trino's Hive connector: one table over every version,",
                    "                    partitions added by sync_partition_metadata",
                    "  --table NAME      Athena: version N's table [{P}_v{N}]; other versions' are",
                    "                    {P}_v{M}");

    private static final DateTimeFormatter HHMM = DateTimeFormatter.ofPattern("HHmm", Locale.ROOT);

    /** The readers' record of a complete window, as {@code CompleteWindow} writes it. */
    private static final List<Column> COMPLETE_WINDOW =
            List.of(
                    new Column("pipeline", "string"),
                    new Column("job_version", "int"),
                    new Column("schema_version", "int"),
                    new Column("date", "string"),
                    new Column("window", "string"),
                    new Column("window_start", "string"),
                    new Column("window_end", "string"),
                    new Column("window_start_millis", "bigint"),
                    new Column("window_end_millis", "bigint"),
                    new Column("previous_window_start", "string"),
                    new Column("buckets", "int"),
                    new Column("part_count", "int"),
                    new Column("row_count", "bigint"));

    /** The readers' record of a promotion, as {@code CurrentVersion} writes it. */
    private static final List<Column> PROMOTION =
            List.of(
                    new Column("pipeline", "string"),
                    new Column("job_version", "int"),
                    new Column("sequence", "bigint"),
                    new Column("promoted_at", "string"),
                    new Column("complete_through", "string"));

    enum Engine {
        ATHENA,
        SPARK,
        TRINO
    }

    /** A column and its Hive type name, as Athena and Spark spell it. */
    record Column(String name, String hiveType) {}

    /** What the statements need of one job version: its columns and where its windows are. */
    record Version(
            int jobVersion,
            List<Column> columns,
            String location,
            String firstDate,
            long windowMillis) {}

    private Ddl() {}

    static int run(String[] args, PrintStream out) throws IOException {
        StoreArgs parsed =
                StoreArgs.parse(args, USAGE, "pipeline", "job-version", "table", "engine");
        String pipeline = required(parsed, "pipeline");
        int jobVersion;
        try {
            jobVersion = Integer.parseInt(required(parsed, "job-version"));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("--job-version must be a number");
        }
        Engine engine;
        try {
            engine =
                    Engine.valueOf(
                            parsed.flags()
                                    .getOrDefault("engine", "athena")
                                    .toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("--engine must be athena, spark or trino\n" + USAGE);
        }
        String table = parsed.flags().getOrDefault("table", pipeline + "_v" + jobVersion);
        try (ObjectStore store = parsed.store().open()) {
            Version target =
                    version(store, parsed, pipeline, jobVersion)
                            .orElseThrow(
                                    () ->
                                            new IllegalArgumentException(
                                                    pipeline
                                                            + " v="
                                                            + jobVersion
                                                            + " has no identity record in "
                                                            + parsed.store()
                                                            + ": nothing written, or written"
                                                            + " before 0.2 and not run since"));
            out.println(
                    "-- "
                            + pipeline
                            + " v="
                            + jobVersion
                            + ": complete through "
                            + CompletionPointer.read(store, PartKind.SNAPSHOT, pipeline, jobVersion)
                                    .map(t -> Instant.ofEpochMilli(t).toString())
                                    .orElse("(no window yet)")
                            + ". The view "
                            + pipeline
                            + "_complete returns only complete windows of the promoted version.");
            String root = location(parsed, ObjectKeys.pipelinePrefix(pipeline));
            switch (engine) {
                case ATHENA -> {
                    Map<String, Version> tables = new LinkedHashMap<>();
                    tables.put(table, target);
                    for (Version other : otherVersions(store, parsed, pipeline, jobVersion)) {
                        tables.put(pipeline + "_v" + other.jobVersion(), other);
                    }
                    tables.forEach((name, version) -> out.print(ddl(name, version)));
                    out.print(athena(pipeline, root, target, tables));
                }
                case SPARK -> out.print(spark(pipeline, root, target));
                case TRINO -> out.print(trino(pipeline, root, target));
            }
        }
        return 0;
    }

    /** Athena's table of one version: as before 0.3.0, so existing users' tables stay. */
    static String ddl(String table, Version version) {
        StringJoiner columns = new StringJoiner(",\n");
        for (Column c : version.columns()) {
            columns.add("  " + quoted(c.name()) + " " + c.hiveType());
        }
        String location = version.location();
        String template = location + "date=${date}/window=${window}/";
        return "CREATE EXTERNAL TABLE IF NOT EXISTS "
                + quoted(table)
                + " (\n"
                + columns
                + "\n)\nPARTITIONED BY (`date` string, `window` string)\nSTORED AS PARQUET\n"
                + "LOCATION '"
                + location
                + "'\nTBLPROPERTIES (\n"
                + "  'projection.enabled' = 'true',\n"
                + "  'projection.date.type' = 'date',\n"
                + "  'projection.date.format' = 'yyyy-MM-dd',\n"
                + "  'projection.date.range' = '"
                + version.firstDate()
                + ",NOW',\n"
                + "  'projection.date.interval' = '1',\n"
                + "  'projection.date.interval.unit' = 'DAYS',\n"
                + "  'projection.window.type' = 'enum',\n"
                + "  'projection.window.values' = '"
                + String.join(",", windows(version.windowMillis()))
                + "',\n"
                + "  'storage.location.template' = '"
                + template
                + "'\n);\n";
    }

    /**
     * Athena: the records' tables (JSON lines) and a view over each version's table, a branch per
     * version, each joined with its own complete windows and kept only for the promoted version. A
     * version without one of the target's columns gives NULL for it.
     */
    static String athena(
            String pipeline, String root, Version target, Map<String, Version> tables) {
        StringBuilder sql = new StringBuilder();
        for (String records : List.of("complete_windows", "promotions")) {
            StringJoiner columns = new StringJoiner(",\n");
            for (Column c : records.equals("promotions") ? PROMOTION : COMPLETE_WINDOW) {
                columns.add("  " + quoted(c.name()) + " " + c.hiveType());
            }
            sql.append("CREATE EXTERNAL TABLE IF NOT EXISTS ")
                    .append(quoted(pipeline + "_" + records))
                    .append(" (\n")
                    .append(columns)
                    .append(
                            "\n)\nROW FORMAT SERDE 'org.openx.data.jsonserde.JsonSerDe'\nLOCATION '")
                    .append(root)
                    .append(
                            records.equals("promotions")
                                    ? ObjectKeys.PROMOTED_DIRECTORY
                                    : ObjectKeys.COMPLETE_DIRECTORY)
                    .append("';\n");
        }
        StringJoiner branches = new StringJoiner("\nUNION ALL\n");
        tables.forEach(
                (table, version) -> {
                    StringJoiner columns = new StringJoiner(", ");
                    for (Column c : target.columns()) {
                        columns.add(
                                version.columns().contains(c)
                                        ? "d." + doubleQuoted(c.name())
                                        : "CAST(NULL AS "
                                                + trinoType(c.hiveType())
                                                + ") AS "
                                                + doubleQuoted(c.name()));
                    }
                    branches.add(
                            completeRows(
                                    pipeline,
                                    columns.toString(),
                                    doubleQuoted(table),
                                    "\"date\", \"window\"",
                                    "c.job_version = " + version.jobVersion(),
                                    Ddl::doubleQuoted));
                });
        return sql.append("CREATE OR REPLACE VIEW ")
                .append(doubleQuoted(pipeline + "_complete"))
                .append(" AS\n")
                .append(branches)
                .append(";\n")
                .toString();
    }

    /**
     * Spark SQL: temporary views (per session) over a basePath read of every version, whose {@code
     * v}, {@code schema}, {@code date} and {@code window} directories become string columns (with
     * type inference Spark reads {@code window=0005} as the integer 5).
     */
    static String spark(String pipeline, String root, Version target) {
        String parts = quoted(pipeline + "_parts");
        return "SET spark.sql.sources.partitionColumnTypeInference.enabled = false;\n"
                + "CREATE OR REPLACE TEMPORARY VIEW "
                + parts
                + " USING parquet OPTIONS (\n  path '"
                + root
                + "v=*/schema=*/date=*/window=*/*.parquet',\n  basePath '"
                + root
                + "',\n  mergeSchema 'true'\n);\n"
                + sparkRecords(
                        pipeline + "_complete_windows",
                        COMPLETE_WINDOW,
                        root + ObjectKeys.COMPLETE_DIRECTORY)
                + sparkRecords(
                        pipeline + "_promotions", PROMOTION, root + ObjectKeys.PROMOTED_DIRECTORY)
                + "CREATE OR REPLACE TEMPORARY VIEW "
                + partsView(pipeline, target, parts, "STRING", Ddl::quoted);
    }

    private static String sparkRecords(String name, List<Column> columns, String location) {
        StringJoiner typed = new StringJoiner(", ");
        columns.forEach(c -> typed.add(quoted(c.name()) + " " + c.hiveType()));
        return "CREATE OR REPLACE TEMPORARY VIEW "
                + quoted(name)
                + " ("
                + typed
                + ")\n  USING json OPTIONS (path '"
                + location
                + "');\n";
    }

    /**
     * Trino's Hive connector: one table over every version, partitioned by its directories as text;
     * a window's partition is added by {@code sync_partition_metadata}, run again as windows
     * complete (or {@code register_partition} per window).
     */
    static String trino(String pipeline, String root, Version target) {
        String parts = doubleQuoted(pipeline + "_parts");
        StringJoiner columns = new StringJoiner(",\n");
        target.columns()
                .forEach(
                        c ->
                                columns.add(
                                        "  "
                                                + doubleQuoted(c.name())
                                                + " "
                                                + trinoType(c.hiveType())));
        for (String partition : List.of("v", "schema", "date", "window")) {
            columns.add("  " + doubleQuoted(partition) + " varchar");
        }
        return "CREATE TABLE IF NOT EXISTS "
                + parts
                + " (\n"
                + columns
                + "\n) WITH (\n  external_location = '"
                + root
                + "',\n  format = 'PARQUET',\n  partitioned_by = ARRAY['v', 'schema', 'date', 'window']\n);\n"
                + "-- 'default': the schema you create the tables in. Call it again as windows"
                + " complete\n-- (a schedule): a window is read once its partition is added.\n"
                + "CALL system.sync_partition_metadata('default', '"
                + pipeline
                + "_parts', 'ADD');\n"
                + trinoRecords(
                        pipeline + "_complete_windows",
                        COMPLETE_WINDOW,
                        root + ObjectKeys.COMPLETE_DIRECTORY)
                + trinoRecords(
                        pipeline + "_promotions", PROMOTION, root + ObjectKeys.PROMOTED_DIRECTORY)
                + "CREATE OR REPLACE VIEW "
                + partsView(pipeline, target, parts, "varchar", Ddl::doubleQuoted);
    }

    private static String trinoRecords(String name, List<Column> columns, String location) {
        StringJoiner typed = new StringJoiner(", ");
        columns.forEach(c -> typed.add(doubleQuoted(c.name()) + " " + trinoType(c.hiveType())));
        return "CREATE TABLE IF NOT EXISTS "
                + doubleQuoted(name)
                + " ("
                + typed
                + ")\n  WITH (external_location = '"
                + location
                + "', format = 'JSON');\n";
    }

    /**
     * The rows of {@code table}'s complete windows, kept only for the promoted version: the join
     * with the records of complete windows and of promotions every engine's view makes. A window is
     * kept only when the rows read equal the rows its record counts: an engine may list a window's
     * parts before its last one lands and read the record, written after it, later.
     */
    private static String completeRows(
            String pipeline,
            String columns,
            String table,
            String partitionBy,
            String sameVersion,
            UnaryOperator<String> quote) {
        String date = quote.apply("date");
        String window = quote.apply("window");
        return "SELECT "
                + columns
                + ", c.job_version, d."
                + date
                + ", d."
                + window
                + "\nFROM (SELECT *, count(*) OVER (PARTITION BY "
                + partitionBy
                + ") AS rows_read FROM "
                + table
                + ") d\nJOIN "
                + quote.apply(pipeline + "_complete_windows")
                + " c ON "
                + sameVersion
                + " AND c."
                + date
                + " = d."
                + date
                + " AND c."
                + window
                + " = d."
                + window
                + " AND c.row_count = d.rows_read"
                + "\nWHERE c.job_version = (SELECT max_by(job_version, "
                + quote.apply("sequence")
                + ") FROM "
                + quote.apply(pipeline + "_promotions")
                + ")";
    }

    /**
     * Spark's and Trino's view, after its {@code CREATE}: one table of every version, whose {@code
     * v} directory is text ({@code stringType}) to compare with the record's number.
     */
    private static String partsView(
            String pipeline,
            Version target,
            String parts,
            String stringType,
            UnaryOperator<String> quote) {
        StringJoiner columns = new StringJoiner(", ");
        target.columns().forEach(c -> columns.add("d." + quote.apply(c.name())));
        return quote.apply(pipeline + "_complete")
                + " AS\n"
                + completeRows(
                        pipeline,
                        columns.toString(),
                        parts,
                        "v, " + quote.apply("date") + ", " + quote.apply("window"),
                        "d.v = CAST(c.job_version AS " + stringType + ")",
                        quote)
                + ";\n";
    }

    /** Every window of a day as its directory names it: 0000, 0005, ... for five minutes. */
    static List<String> windows(long windowMillis) {
        List<String> names = new ArrayList<>();
        for (long t = 0; t < 86_400_000L; t += windowMillis) {
            names.add(LocalTime.ofSecondOfDay(t / 1000).format(HHMM));
        }
        return names;
    }

    /** Hive's name for an Avro type as the sink writes it; nullable is a union with null. */
    static String hiveType(Schema s) {
        if (s.getType() == Schema.Type.UNION) {
            return hiveType(
                    s.getTypes().stream()
                            .filter(t -> t.getType() != Schema.Type.NULL)
                            .findFirst()
                            .orElseThrow());
        }
        if (s.getLogicalType() instanceof LogicalTypes.Decimal d) {
            return "decimal(" + d.getPrecision() + "," + d.getScale() + ")";
        }
        if (s.getLogicalType() instanceof LogicalTypes.Date) {
            return "date";
        }
        if (s.getLogicalType() instanceof LogicalTypes.TimestampMillis
                || s.getLogicalType() instanceof LogicalTypes.TimestampMicros
                || s.getLogicalType() instanceof LogicalTypes.LocalTimestampMillis) {
            return "timestamp";
        }
        return switch (s.getType()) {
            case STRING -> "string";
            case LONG -> "bigint";
            case INT -> "int";
            case DOUBLE -> "double";
            case FLOAT -> "float";
            case BOOLEAN -> "boolean";
            case BYTES, FIXED -> "binary";
            default ->
                    throw new IllegalArgumentException(
                            "no Athena type for the parts' column type " + s);
        };
    }

    /** Trino's (and Athena's views') name for a Hive type. */
    static String trinoType(String hiveType) {
        return switch (hiveType) {
            case "string" -> "varchar";
            case "int" -> "integer";
            case "float" -> "real";
            case "binary" -> "varbinary";
            default -> hiveType; // bigint, double, boolean, date, timestamp, decimal(p,s)
        };
    }

    private static String quoted(String name) {
        return "`" + name.replace("`", "``") + "`";
    }

    private static String doubleQuoted(String name) {
        return "\"" + name.replace("\"", "\"\"") + "\"";
    }

    private static String required(StoreArgs parsed, String flag) {
        String value = parsed.flags().get(flag);
        if (value == null) {
            throw new IllegalArgumentException("--" + flag + " is required\n" + USAGE);
        }
        return value;
    }

    private static String location(StoreArgs parsed, String prefix) {
        String uri = parsed.store().uri().toString();
        return (uri.endsWith("/") ? uri : uri + "/") + prefix;
    }

    /**
     * A job version as the statements need it, from its identity record and its first part; empty
     * without an identity record.
     */
    private static Optional<Version> version(
            ObjectStore store, StoreArgs parsed, String pipeline, int jobVersion)
            throws IOException {
        Optional<VersionIdentity> identity =
                VersionIdentity.read(store, PartKind.SNAPSHOT, pipeline, jobVersion);
        if (identity.isEmpty()) {
            return Optional.empty();
        }
        String schemaPrefix =
                ObjectKeys.schemaPrefix(
                        PartKind.SNAPSHOT, pipeline, jobVersion, identity.get().schemaVersion());
        String firstDate = first(store, schemaPrefix, "dates");
        String part = firstPart(store, first(store, firstDate, "windows"));
        List<Column> columns = new ArrayList<>();
        for (Schema.Field f :
                PartEncoding.schema(store.get(part).orElseThrow().content()).getFields()) {
            columns.add(new Column(f.name(), hiveType(f.schema())));
        }
        return Optional.of(
                new Version(
                        jobVersion,
                        columns,
                        location(parsed, schemaPrefix),
                        firstDate.substring(firstDate.indexOf("date=") + 5, firstDate.length() - 1),
                        identity.get().windowLengthMillis()));
    }

    /** The pipeline's other job versions with an identity record and a part. */
    private static List<Version> otherVersions(
            ObjectStore store, StoreArgs parsed, String pipeline, int jobVersion)
            throws IOException {
        List<Integer> numbers = new ArrayList<>();
        store.listDirectories(
                ObjectKeys.pipelinePrefix(pipeline),
                d ->
                        ObjectKeys.jobVersion(pipeline, d).stream()
                                .filter(v -> v != jobVersion)
                                .forEach(numbers::add));
        List<Version> versions = new ArrayList<>();
        for (int v : new TreeSet<>(numbers)) {
            try {
                version(store, parsed, pipeline, v).ifPresent(versions::add);
            } catch (IllegalArgumentException e) {
                // a version that has written no part yet: nothing for a view to read
            }
        }
        return versions;
    }

    /** The first directory below {@code prefix}: a walk, not a listing of the version. */
    private static String first(ObjectStore store, String prefix, String what) throws IOException {
        List<String> found = new ArrayList<>();
        store.listDirectories(prefix, found::add);
        return found.stream()
                .sorted()
                .findFirst()
                .orElseThrow(() -> new IllegalArgumentException("no " + what + " under " + prefix));
    }

    private static String firstPart(ObjectStore store, String window) throws IOException {
        List<String> parts = new ArrayList<>();
        store.list(
                window,
                o -> {
                    if (ObjectKeys.parse(o.key()).isPresent()) {
                        parts.add(o.key());
                    }
                });
        return parts.stream()
                .findFirst()
                .orElseThrow(() -> new IllegalArgumentException("no part under " + window));
    }
}
