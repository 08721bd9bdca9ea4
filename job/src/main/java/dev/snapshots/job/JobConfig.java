package dev.snapshots.job;

import dev.snapshots.key.WorkIdentity;
import dev.snapshots.sink.CanonicalSnapshotSinkBuilder;
import dev.snapshots.store.StoreSpec;
import java.io.Serializable;
import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

/**
 * Everything the job is configured with, parsed from {@code --name value} flags. Every flag is
 * checked here, with a message that names it, so a bad flag never surfaces as a stack trace.
 */
public final class JobConfig implements Serializable {
    private static final long serialVersionUID = 1L;

    /** Flag, default (null = required), help. */
    static final String[][] FLAGS = {
        {"pipeline", "telemetry", "pipeline name: the first segment of every key"},
        {"job-version", "1", "bump to replay history into a new namespace (v=N)"},
        {"schema-version", "1", "bump when the row format changes"},
        {"buckets", "4", "bucket count B, fixed per job version"},
        {"window", "5m", "window length (minutes, dividing a day)"},
        {"out-of-orderness", "10s", "how far behind its shard's newest event an event may be and still count"},
        {"idleness", "30s", "a caught-up shard with no record for this long (by arrival time) stops holding windows back; 0s: never"},
        {"max-drift", "5m", "watermark alignment: how far in event time a shard may run ahead of the slowest before it is paused; 0s: off"},
        {"store", null, "file:///dir or s3://bucket/prefix"},
        {"endpoint", "", "S3-compatible endpoint for local S3, e.g. http://127.0.0.1:9000"},
        {"region", "", "AWS region of the store (default: the SDK's chain)"},
        {"checkpoint-interval", "10s", "how often parts are committed"},
        {"publish-concurrency", Integer.toString(CanonicalSnapshotSinkBuilder.DEFAULT_PUBLISH_CONCURRENCY),
            "parts of a commit published to the store at a time"},
        {"inline-threshold", Integer.toString(CanonicalSnapshotSinkBuilder.DEFAULT_INLINE_THRESHOLD_BYTES),
            "parts up to this many bytes travel in the checkpoint; larger ones are staged in the store first (0: all)"},
        {"parallelism", "2", "operator parallelism (keys never depend on it)"},
        {"max-record-bytes", "65536", "larger records are dead-lettered as oversized"},
        {"future-horizon", "1h", "events this far after their arrival are dead-lettered"},
        {"past-horizon", "7d", "events this far before their arrival are dead-lettered"},
        {"source", "generator", "generator | kinesis | file"},
        {"seed", "42", "generator: seed"},
        {"start", java.time.Instant.ofEpochMilli(TelemetryGenerator.START_MILLIS).toString(), "generator: where event time starts (ISO-8601, aligned to the window)"},
        {"keys", "200", "generator: number of devices"},
        {"windows", "24", "generator: windows of event time to produce (0 = unbounded)"},
        {"events-per-window", "2000", "generator: events per window of event time"},
        {"events-per-second", "20000", "generator: emission rate"},
        {"bad-every", "97", "generator: every Nth record is malformed (0 = none)"},
        {"late-every", "251", "generator: every Nth record is late (0 = none)"},
        {"file", "", "file: JSON-lines file to replay"},
        {"stream-arn", "", "kinesis: stream ARN"},
        {"kinesis-endpoint", "", "kinesis: endpoint override, e.g. http://127.0.0.1:4567"},
        {"initial-position", "TRIM_HORIZON", "kinesis: TRIM_HORIZON or LATEST"},
        {"shard-discovery", "10s", "kinesis: how often the stream's shards are listed, to find the children of a split or merge"},
    };

    private final Map<String, String> values;

    private JobConfig(Map<String, String> values) {
        this.values = values;
    }

    /** @throws IllegalArgumentException with a message fit for the command line */
    public static JobConfig parse(String[] args) {
        Map<String, String> values = new LinkedHashMap<>();
        for (String[] flag : FLAGS) {
            if (flag[1] != null) {
                values.put(flag[0], flag[1]);
            }
        }
        Set<String> known = new java.util.HashSet<>();
        for (String[] flag : FLAGS) {
            known.add(flag[0]);
        }
        for (int i = 0; i < args.length; i++) {
            String arg = args[i];
            if (!arg.startsWith("--")) {
                throw new IllegalArgumentException("unexpected argument '" + arg + "': flags look like --name value");
            }
            String name = arg.substring(2);
            String value;
            int eq = name.indexOf('=');
            if (eq >= 0) {
                value = name.substring(eq + 1);
                name = name.substring(0, eq);
            } else if (i + 1 < args.length) {
                value = args[++i];
            } else {
                throw new IllegalArgumentException("--" + name + " needs a value");
            }
            if (!known.contains(name)) {
                throw new IllegalArgumentException("unknown flag --" + name);
            }
            values.put(name, value);
        }
        for (String[] flag : FLAGS) {
            if (!values.containsKey(flag[0])) {
                throw new IllegalArgumentException("--" + flag[0] + " is required: " + flag[2]);
            }
        }
        JobConfig config = new JobConfig(values);
        config.validate();
        return config;
    }

    private void validate() {
        named("pipeline", () -> WorkIdentity.requirePipeline(pipeline()));
        requireAtLeast("job-version", 0);
        requireAtLeast("schema-version", 0);
        named("buckets", () -> WorkIdentity.requireBuckets(0, buckets()));
        named("window", () -> WorkIdentity.requireWindowLength(windowLength().toMillis()));
        requireAtLeast("parallelism", 1);
        requireAtLeast("publish-concurrency", 1);
        requireAtLeast("inline-threshold", 0);
        if (number("inline-threshold") > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("--inline-threshold must be at most " + Integer.MAX_VALUE + " bytes, got "
                    + string("inline-threshold"));
        }
        requireAtLeast("max-record-bytes", 1);
        for (String d : new String[] {"out-of-orderness", "idleness", "max-drift", "checkpoint-interval", "future-horizon", "past-horizon",
            "shard-discovery"}) {
            if (duration(d).isNegative()) {
                throw new IllegalArgumentException("--" + d + " must not be negative, got " + string(d));
            }
        }
        if (duration("shard-discovery").isZero()) {
            throw new IllegalArgumentException("--shard-discovery must be positive");
        }
        named("store", this::store);
        switch (source()) {
            case "generator":
                requireAtLeast("keys", 1);
                requireAtLeast("windows", 0);
                requireAtLeast("events-per-window", 1);
                requireAtLeast("events-per-second", 1);
                requireAtLeast("bad-every", 0);
                requireAtLeast("late-every", 0);
                number("seed");
                if (instant("start").toEpochMilli() % windowLength().toMillis() != 0) {
                    throw new IllegalArgumentException("--start must be aligned to the window length " + windowLength());
                }
                break;
            case "file":
                if (string("file").isEmpty()) {
                    throw new IllegalArgumentException("--source file needs --file PATH");
                }
                break;
            case "kinesis":
                if (!string("stream-arn").matches("arn:aws[a-z-]*:kinesis:[a-z0-9-]+:\\d+:stream/[A-Za-z0-9_.-]+")) {
                    throw new IllegalArgumentException("--source kinesis needs --stream-arn arn:aws:kinesis:REGION:ACCOUNT:stream/NAME");
                }
                if (!Set.of("TRIM_HORIZON", "LATEST").contains(string("initial-position"))) {
                    throw new IllegalArgumentException("--initial-position must be TRIM_HORIZON or LATEST");
                }
                break;
            default:
                throw new IllegalArgumentException("--source must be generator, kinesis or file, got '" + source() + "'");
        }
    }

    /** Runs a shared rule and names the flag it came from in the message. */
    private static void named(String flag, Runnable rule) {
        try {
            rule.run();
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(e.getMessage().startsWith("--") ? e.getMessage() : "--" + flag + ": " + e.getMessage());
        }
    }

    private void requireAtLeast(String flag, long min) {
        if (number(flag) < min) {
            throw new IllegalArgumentException("--" + flag + " must be >= " + min + ", got " + string(flag));
        }
    }

    public String string(String flag) {
        return values.get(flag);
    }

    public long number(String flag) {
        try {
            return Long.parseLong(string(flag));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("--" + flag + " must be a whole number, got '" + string(flag) + "'");
        }
    }

    /** Durations as 500ms, 10s, 5m, 1h, 7d, or ISO-8601 (PT5M). */
    public Duration duration(String flag) {
        return parseDuration(flag, string(flag));
    }

    static Duration parseDuration(String flag, String value) {
        String v = value.trim();
        try {
            if (v.startsWith("P") || v.startsWith("p")) {
                return Duration.parse(v);
            }
            String unit = v.replaceAll("^[0-9]+", "");
            long n = Long.parseLong(v.substring(0, v.length() - unit.length()));
            switch (unit) {
                case "ms": return Duration.ofMillis(n);
                case "s": return Duration.ofSeconds(n);
                case "m": return Duration.ofMinutes(n);
                case "h": return Duration.ofHours(n);
                case "d": return Duration.ofDays(n);
                default: throw new NumberFormatException(unit);
            }
        } catch (NumberFormatException | DateTimeParseException e) {
            throw new IllegalArgumentException("--" + flag + " must be a duration like 500ms, 10s, 5m, 1h or 7d, got '" + v + "'");
        }
    }

    public java.time.Instant instant(String flag) {
        try {
            return java.time.Instant.parse(string(flag));
        } catch (DateTimeParseException e) {
            throw new IllegalArgumentException("--" + flag + " must be an ISO-8601 instant like 2026-11-30T10:00:00Z, got '" + string(flag) + "'");
        }
    }

    public String pipeline() {
        return string("pipeline");
    }

    public int jobVersion() {
        return (int) number("job-version");
    }

    public int schemaVersion() {
        return (int) number("schema-version");
    }

    public int buckets() {
        return (int) number("buckets");
    }

    public Duration windowLength() {
        return duration("window");
    }

    public int parallelism() {
        return (int) number("parallelism");
    }

    public String source() {
        return string("source");
    }

    public StoreSpec store() {
        StoreSpec spec = StoreSpec.parse(string("store"));
        if (!string("endpoint").isEmpty()) {
            spec = spec.withEndpoint(string("endpoint"));
        }
        if (!string("region").isEmpty()) {
            spec = spec.withRegion(string("region"));
        }
        return spec;
    }

    /** The flags with their defaults and help, for {@code --help}. */
    public static String usage() {
        StringBuilder sb = new StringBuilder();
        for (String[] flag : FLAGS) {
            sb.append(String.format("  --%-20s %s%s%n", flag[0], flag[2], flag[1] == null ? " (required)" : flag[1].isEmpty() ? "" : " [" + flag[1] + "]"));
        }
        return sb.toString();
    }
}
