package dev.snapshots.job.config;

import static dev.snapshots.job.config.JobOptions.*;

import dev.snapshots.job.SnapshotPipeline;
import dev.snapshots.job.source.kinesis.KinesisShardSource;
import dev.snapshots.key.WorkIdentity;
import dev.snapshots.progress.ReaderTable;
import dev.snapshots.sink.Bucketing;
import dev.snapshots.store.StoreSpec;
import java.io.Serializable;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import org.apache.flink.annotation.Internal;
import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.ReadableConfig;

/**
 * The job's options ({@link JobOptions}) as one submission resolved them: command-line flags over
 * the Flink configuration over the defaults. Every value is checked here, with a message that names
 * its flag, so a bad setting never surfaces as a stack trace.
 */
@Internal
public final class JobConfig implements Serializable {
    private static final long serialVersionUID = 2L;

    private final Configuration values;

    private JobConfig(Configuration values) {
        this.values = values;
    }

    /**
     * From flags alone. @throws IllegalArgumentException with a message fit for the command line
     */
    public static JobConfig parse(String[] args) {
        return resolve(new Configuration(), args);
    }

    /** Flags over {@code flink}'s {@code snapshots.*} keys over the defaults. */
    public static JobConfig resolve(ReadableConfig flink, String[] args) {
        Configuration base = new Configuration();
        for (ConfigOption<?> option : ALL) {
            try {
                flink.getOptional(option)
                        .ifPresent(value -> base.setString(option.key(), CommandLine.text(value)));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException(
                        option.key() + " in the Flink configuration: " + e.getMessage(), e);
            }
        }
        return of(CommandLine.parse(args, ALL, Set.of(), 0, base).options());
    }

    /**
     * @param values the options as text, as {@link CommandLine} leaves them
     */
    public static JobConfig of(Configuration values) {
        JobConfig config = new JobConfig(new Configuration(values));
        config.validate();
        return config;
    }

    public <T> T get(ConfigOption<T> option) {
        return values.get(option);
    }

    /**
     * The flags that set this configuration away from the defaults: how it is handed to a cluster.
     */
    public List<String> toArgs() {
        List<String> args = new ArrayList<>();
        for (ConfigOption<?> option : ALL) {
            if (values.containsKey(option.key())) {
                args.add(CommandLine.flag(option));
                args.add(values.getString(option.key(), ""));
            }
        }
        return args;
    }

    /**
     * The flags with their help and defaults, for {@code --help}; {@code defaults} are a command's
     * own.
     */
    public static String usage(Configuration defaults) {
        return CommandLine.help(ALL, defaults);
    }

    public static String usage() {
        return usage(new Configuration());
    }

    private void validate() {
        if (!values.contains(STORE)) {
            throw new IllegalArgumentException(
                    "--store is required: " + "file:///dir or s3://bucket/prefix");
        }
        named(PIPELINE, () -> WorkIdentity.requirePipeline(pipeline()));
        atLeast(JOB_VERSION, 0);
        atLeast(SCHEMA_VERSION, 0);
        named(
                BUCKETS,
                () -> {
                    WorkIdentity.requireBuckets(0, buckets());
                    bucketing().requireWholeKeyGroups(buckets(), SnapshotPipeline.MAX_PARALLELISM);
                });
        named(WINDOW, () -> WorkIdentity.requireWindowLength(windowLength().toMillis()));
        if (values.contains(PARALLELISM)) {
            atLeast(PARALLELISM, 1);
        }
        atLeast(PUBLISH_CONCURRENCY, 1);
        atLeast(INLINE_THRESHOLD, 0);
        atLeast(MAX_RECORD_BYTES, 1);
        for (ConfigOption<Duration> d :
                List.of(
                        OUT_OF_ORDERNESS,
                        IDLENESS,
                        MAX_DRIFT,
                        CHECKPOINT_INTERVAL,
                        FUTURE_HORIZON,
                        PAST_HORIZON,
                        SHARD_DISCOVERY,
                        SHARD_POLL_INTERVAL)) {
            if (get(d).isNegative()) {
                throw new IllegalArgumentException(
                        CommandLine.flag(d) + " must not be negative, got " + text(d));
            }
        }
        if (get(SHARD_DISCOVERY).isZero()) {
            throw new IllegalArgumentException("--shard-discovery must be positive");
        }
        if (get(SHARD_POLL_INTERVAL).compareTo(KinesisShardSource.Settings.DEFAULT_POLL_INTERVAL)
                < 0) {
            throw new IllegalArgumentException(
                    "--shard-poll-interval must be at least 200ms (Kinesis allows 5 GetRecords calls per"
                            + " second per shard), got "
                            + text(SHARD_POLL_INTERVAL));
        }
        named(STORE, this::store);
        switch (source()) {
            case "generator":
                atLeast(KEYS, 1);
                atLeast(WINDOWS, 0);
                atLeast(EVENTS_PER_WINDOW, 1);
                atLeast(EVENTS_PER_SECOND, 1);
                atLeast(BAD_EVERY, 0);
                atLeast(LATE_EVERY, 0);
                if (start().toEpochMilli() % windowLength().toMillis() != 0) {
                    throw new IllegalArgumentException(
                            "--start must be aligned to the window length " + windowLength());
                }
                break;
            case "file":
                if (get(FILE).isEmpty()) {
                    throw new IllegalArgumentException("--source file needs --file PATH");
                }
                break;
            case "kinesis":
                if (!get(STREAM_ARN)
                        .matches("arn:aws[a-z-]*:kinesis:[a-z0-9-]+:\\d+:stream/[A-Za-z0-9_.-]+")) {
                    throw new IllegalArgumentException(
                            "--source kinesis needs --stream-arn arn:aws:kinesis:REGION:ACCOUNT:stream/NAME");
                }
                if (!Set.of("TRIM_HORIZON", "LATEST").contains(get(INITIAL_POSITION))) {
                    throw new IllegalArgumentException(
                            "--initial-position must be TRIM_HORIZON or LATEST");
                }
                break;
            default:
                throw new IllegalArgumentException(
                        "--source must be generator, kinesis or file, got '" + source() + "'");
        }
    }

    /** Runs a shared rule and names the flag it came from in the message. */
    private static void named(ConfigOption<?> option, Runnable rule) {
        try {
            rule.run();
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(
                    e.getMessage().startsWith("--")
                            ? e.getMessage()
                            : CommandLine.flag(option) + ": " + e.getMessage());
        }
    }

    private void atLeast(ConfigOption<? extends Number> option, long min) {
        if (get(option).longValue() < min) {
            throw new IllegalArgumentException(
                    CommandLine.flag(option) + " must be >= " + min + ", got " + text(option));
        }
    }

    private String text(ConfigOption<?> option) {
        return values.getString(option.key(), CommandLine.text(option.defaultValue()));
    }

    public String pipeline() {
        return get(PIPELINE);
    }

    public int jobVersion() {
        return get(JOB_VERSION);
    }

    public int schemaVersion() {
        return get(SCHEMA_VERSION);
    }

    public int buckets() {
        return get(BUCKETS);
    }

    public Bucketing bucketing() {
        return get(BUCKETING);
    }

    /** The bucket of a device's rows in this job's snapshots. */
    public int bucketOf(String device) {
        return bucketing().bucketOf(device, buckets(), SnapshotPipeline.MAX_PARALLELISM);
    }

    public Duration windowLength() {
        return get(WINDOW);
    }

    /** The parallelism asked for; empty: the cluster's {@code parallelism.default}. */
    public Optional<Integer> parallelism() {
        return values.getOptional(PARALLELISM);
    }

    public String source() {
        return get(SOURCE);
    }

    /** Where the generator's event time starts. */
    public Instant start() {
        try {
            return Instant.parse(get(START));
        } catch (DateTimeParseException e) {
            throw new IllegalArgumentException(
                    "--start must be an ISO-8601 instant like 2026-11-30T10:00:00Z, got '"
                            + get(START)
                            + "'");
        }
    }

    /** The Iceberg table {@code --iceberg-table} names, if any. */
    public Optional<ReaderTable> icebergTable() {
        return icebergTable(get(ICEBERG_TABLE), get(ICEBERG_CATALOG));
    }

    /**
     * The Iceberg table {@code table} (empty: none) in the catalog {@code catalog} names as
     * key=value pairs separated by commas: {@code --iceberg-table} and {@code --iceberg-catalog},
     * for the job and for {@code promote}.
     */
    public static Optional<ReaderTable> icebergTable(String table, String catalog) {
        if (table == null || table.isEmpty()) {
            return Optional.empty();
        }
        return Optional.of(ReaderTable.of("iceberg", table, icebergCatalog(catalog)));
    }

    /** The catalog's properties {@code --iceberg-catalog} gives as key=value pairs. */
    public static Map<String, String> icebergCatalog(String catalog) {
        Map<String, String> properties = new TreeMap<>();
        for (String pair : catalog == null ? new String[] {""} : catalog.split(",")) {
            int equals = pair.indexOf('=');
            if (equals < 1) {
                throw new IllegalArgumentException(
                        "--iceberg-catalog takes key=value pairs separated by commas, got '"
                                + catalog
                                + "'");
            }
            properties.put(pair.substring(0, equals).trim(), pair.substring(equals + 1).trim());
        }
        return properties;
    }

    public StoreSpec store() {
        StoreSpec spec = StoreSpec.parse(get(STORE));
        if (!get(ENDPOINT).isEmpty()) {
            spec = spec.withEndpoint(get(ENDPOINT));
        }
        if (!get(REGION).isEmpty()) {
            spec = spec.withRegion(get(REGION));
        }
        return spec;
    }
}
