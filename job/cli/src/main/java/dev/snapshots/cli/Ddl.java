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
import java.util.List;
import java.util.Locale;
import java.util.StringJoiner;
import org.apache.avro.LogicalTypes;
import org.apache.avro.Schema;
import org.apache.flink.annotation.Internal;

/**
 * {@code snapshots ddl}: the Athena / Glue table of one job version's snapshots, with the columns
 * of its parts' schema and {@code date} and {@code window} as projected partitions, so a new window
 * needs no {@code MSCK REPAIR} or crawler.
 */
@Internal
final class Ddl {
    static final String USAGE =
            String.join(
                    "\n",
                    "usage: snapshots ddl STORE_URI --pipeline P --job-version N [--table NAME]"
                            + " [--endpoint URL]",
                    "  prints CREATE EXTERNAL TABLE for Athena / Glue: the parts' columns, `date` and",
                    "  `window` as partitions with partition projection, every name quoted (date and",
                    "  window are reserved words). Reads the version's identity record and one part.",
                    "  --table NAME   the table's name [{pipeline}_v{N}]");

    private static final DateTimeFormatter HHMM = DateTimeFormatter.ofPattern("HHmm", Locale.ROOT);

    private Ddl() {}

    static int run(String[] args, PrintStream out) throws IOException {
        StoreArgs parsed = StoreArgs.parse(args, USAGE, "pipeline", "job-version", "table");
        String pipeline = required(parsed, "pipeline");
        int jobVersion;
        try {
            jobVersion = Integer.parseInt(required(parsed, "job-version"));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("--job-version must be a number");
        }
        String table = parsed.flags().getOrDefault("table", pipeline + "_v" + jobVersion);
        try (ObjectStore store = parsed.store().open()) {
            VersionIdentity identity =
                    VersionIdentity.read(store, PartKind.SNAPSHOT, pipeline, jobVersion)
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
            String schemaPrefix =
                    ObjectKeys.schemaPrefix(
                            PartKind.SNAPSHOT, pipeline, jobVersion, identity.schemaVersion());
            String firstDate = first(store, schemaPrefix, "dates");
            String part = firstPart(store, first(store, firstDate, "windows"));
            Schema schema = PartEncoding.schema(store.get(part).orElseThrow().content());
            String location = location(parsed, schemaPrefix);
            out.println(
                    "-- "
                            + pipeline
                            + " v="
                            + jobVersion
                            + ", schema "
                            + identity.schemaVersion()
                            + ": complete through "
                            + CompletionPointer.read(store, PartKind.SNAPSHOT, pipeline, jobVersion)
                                    .map(t -> Instant.ofEpochMilli(t).toString())
                                    .orElse("(no window yet)")
                            + ". Windows after that may be partly published: query up to it.");
            out.print(
                    ddl(
                            table,
                            schema,
                            location,
                            firstDate.substring(
                                    firstDate.indexOf("date=") + 5, firstDate.length() - 1),
                            identity.windowLengthMillis()));
        }
        return 0;
    }

    static String ddl(
            String table, Schema schema, String location, String firstDate, long windowMillis) {
        StringJoiner columns = new StringJoiner(",\n");
        for (Schema.Field f : schema.getFields()) {
            columns.add("  " + quoted(f.name()) + " " + hiveType(f.schema()));
        }
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
                + firstDate
                + ",NOW',\n"
                + "  'projection.date.interval' = '1',\n"
                + "  'projection.date.interval.unit' = 'DAYS',\n"
                + "  'projection.window.type' = 'enum',\n"
                + "  'projection.window.values' = '"
                + String.join(",", windows(windowMillis))
                + "',\n"
                + "  'storage.location.template' = '"
                + template
                + "'\n);\n";
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

    private static String quoted(String name) {
        return "`" + name.replace("`", "``") + "`";
    }

    private static String required(StoreArgs parsed, String flag) {
        String value = parsed.flags().get(flag);
        if (value == null) {
            throw new IllegalArgumentException("--" + flag + " is required\n" + USAGE);
        }
        return value;
    }

    private static String location(StoreArgs parsed, String schemaPrefix) {
        String uri = parsed.store().uri().toString();
        return (uri.endsWith("/") ? uri : uri + "/") + schemaPrefix;
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
