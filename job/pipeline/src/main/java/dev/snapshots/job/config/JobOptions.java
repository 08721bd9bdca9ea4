package dev.snapshots.job.config;

import static org.apache.flink.configuration.ConfigOptions.key;

import dev.snapshots.job.source.TelemetryGenerator;
import dev.snapshots.job.source.kinesis.KinesisShardSource;
import dev.snapshots.sink.Bucketing;
import dev.snapshots.sink.CanonicalSnapshotSinkBuilder;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.apache.flink.annotation.Internal;
import org.apache.flink.configuration.ConfigOption;

/**
 * The job's options. Each is set, in this order of precedence, by its command-line flag ({@code
 * --window 5m}), by the Flink configuration the job is submitted with ({@code snapshots.window: 5m}
 * in flink-conf or {@code FLINK_PROPERTIES}), or by its default.
 */
@Internal
public final class JobOptions {
    private JobOptions() {}

    public static final ConfigOption<String> PIPELINE =
            key("snapshots.pipeline")
                    .stringType()
                    .defaultValue("telemetry")
                    .withDescription("pipeline name: the first segment of every key");
    public static final ConfigOption<Integer> JOB_VERSION =
            key("snapshots.job-version")
                    .intType()
                    .defaultValue(1)
                    .withDescription("bump to replay history into a new namespace (v=N)");
    public static final ConfigOption<Integer> SCHEMA_VERSION =
            key("snapshots.schema-version")
                    .intType()
                    .defaultValue(1)
                    .withDescription(
                            "bump when the row format changes; a new schema needs a new job version");
    public static final ConfigOption<Integer> BUCKETS =
            key("snapshots.buckets")
                    .intType()
                    .defaultValue(4)
                    .withDescription(
                            "bucket count B, fixed per job version; with key-group bucketing it"
                                    + " divides 128 and the parallelism keeps buckets whole (1, 2"
                                    + " or 4 subtasks for B = 4)");
    public static final ConfigOption<Bucketing> BUCKETING =
            key("snapshots.bucketing")
                    .enumType(Bucketing.class)
                    .defaultValue(Bucketing.KEY_GROUPS)
                    .withDescription(
                            "which rows share a part, fixed per job version: key_groups (parts"
                                    + " written where the window emits them) or hash (the first"
                                    + " release's: keep it for job versions it started)");
    public static final ConfigOption<Duration> WINDOW =
            key("snapshots.window")
                    .durationType()
                    .defaultValue(Duration.ofMinutes(5))
                    .withDescription("window length (minutes, dividing a day)");
    public static final ConfigOption<Duration> OUT_OF_ORDERNESS =
            key("snapshots.out-of-orderness")
                    .durationType()
                    .defaultValue(Duration.ofSeconds(10))
                    .withDescription(
                            "how far behind its shard's newest event an event may be and still count");
    public static final ConfigOption<Duration> IDLENESS =
            key("snapshots.idleness")
                    .durationType()
                    .defaultValue(Duration.ofSeconds(30))
                    .withDescription(
                            "a caught-up shard with no record for this long (by arrival time) stops holding windows back; 0s: never");
    public static final ConfigOption<Duration> MAX_DRIFT =
            key("snapshots.max-drift")
                    .durationType()
                    .defaultValue(Duration.ofMinutes(5))
                    .withDescription(
                            "watermark alignment: how far in event time a shard may run ahead of the slowest before it is paused;"
                                    + " 0s: off");
    public static final ConfigOption<String> STORE =
            key("snapshots.store")
                    .stringType()
                    .noDefaultValue()
                    .withDescription("file:///dir or s3://bucket/prefix (required)");
    public static final ConfigOption<String> ENDPOINT =
            key("snapshots.endpoint")
                    .stringType()
                    .defaultValue("")
                    .withDescription(
                            "S3-compatible endpoint for local S3, e.g. http://127.0.0.1:9000");
    public static final ConfigOption<String> REGION =
            key("snapshots.region")
                    .stringType()
                    .defaultValue("")
                    .withDescription("AWS region of the store (default: the SDK's chain)");
    public static final ConfigOption<String> ICEBERG_TABLE =
            key("snapshots.iceberg-table")
                    .stringType()
                    .defaultValue("")
                    .withDescription(
                            "an Iceberg table (namespace.name) kept up with the complete windows,"
                                    + " one commit per window, job version N on branch vN; needs"
                                    + " --iceberg-catalog, and Iceberg's iceberg-flink-runtime in"
                                    + " Flink's lib/");
    public static final ConfigOption<String> ICEBERG_CATALOG =
            key("snapshots.iceberg-catalog")
                    .stringType()
                    .defaultValue("")
                    .withDescription(
                            "the Iceberg catalog's properties as key=value pairs separated by"
                                    + " commas, e.g. type=glue or type=jdbc,uri=jdbc:postgresql://..."
                                    + " (Iceberg's CatalogUtil names them)");
    public static final ConfigOption<Duration> CHECKPOINT_INTERVAL =
            key("snapshots.checkpoint-interval")
                    .durationType()
                    .defaultValue(Duration.ofSeconds(10))
                    .withDescription("how often parts are committed");
    public static final ConfigOption<Integer> PUBLISH_CONCURRENCY =
            key("snapshots.publish-concurrency")
                    .intType()
                    .defaultValue(CanonicalSnapshotSinkBuilder.DEFAULT_PUBLISH_CONCURRENCY)
                    .withDescription("parts of a commit published to the store at a time");
    public static final ConfigOption<Integer> INLINE_THRESHOLD =
            key("snapshots.inline-threshold")
                    .intType()
                    .defaultValue(CanonicalSnapshotSinkBuilder.DEFAULT_INLINE_THRESHOLD_BYTES)
                    .withDescription(
                            "parts up to this many bytes travel in the checkpoint; larger ones are staged in the store first (0: all)");
    public static final ConfigOption<Integer> PARALLELISM =
            key("snapshots.parallelism")
                    .intType()
                    .noDefaultValue()
                    .withDescription(
                            "operator parallelism (keys never depend on it); by default the cluster's parallelism.default");
    public static final ConfigOption<Integer> MAX_RECORD_BYTES =
            key("snapshots.max-record-bytes")
                    .intType()
                    .defaultValue(65_536)
                    .withDescription("larger records are dead-lettered as oversized");
    public static final ConfigOption<Duration> FUTURE_HORIZON =
            key("snapshots.future-horizon")
                    .durationType()
                    .defaultValue(Duration.ofHours(1))
                    .withDescription("events this far after their arrival are dead-lettered");
    public static final ConfigOption<Duration> PAST_HORIZON =
            key("snapshots.past-horizon")
                    .durationType()
                    .defaultValue(Duration.ofDays(7))
                    .withDescription("events this far before their arrival are dead-lettered");
    public static final ConfigOption<String> SOURCE =
            key("snapshots.source")
                    .stringType()
                    .defaultValue("generator")
                    .withDescription("generator | kinesis | file");
    public static final ConfigOption<Long> SEED =
            key("snapshots.seed").longType().defaultValue(42L).withDescription("generator: seed");
    public static final ConfigOption<String> START =
            key("snapshots.start")
                    .stringType()
                    .defaultValue(Instant.ofEpochMilli(TelemetryGenerator.START_MILLIS).toString())
                    .withDescription(
                            "generator: where event time starts (ISO-8601, aligned to the window)");
    public static final ConfigOption<Integer> KEYS =
            key("snapshots.keys")
                    .intType()
                    .defaultValue(200)
                    .withDescription("generator: number of devices");
    public static final ConfigOption<Long> WINDOWS =
            key("snapshots.windows")
                    .longType()
                    .defaultValue(24L)
                    .withDescription("generator: windows of event time to produce (0 = unbounded)");
    public static final ConfigOption<Integer> EVENTS_PER_WINDOW =
            key("snapshots.events-per-window")
                    .intType()
                    .defaultValue(2000)
                    .withDescription("generator: events per window of event time");
    public static final ConfigOption<Long> EVENTS_PER_SECOND =
            key("snapshots.events-per-second")
                    .longType()
                    .defaultValue(20_000L)
                    .withDescription("generator: emission rate");
    public static final ConfigOption<Integer> BAD_EVERY =
            key("snapshots.bad-every")
                    .intType()
                    .defaultValue(97)
                    .withDescription("generator: every Nth record is malformed (0 = none)");
    public static final ConfigOption<Integer> LATE_EVERY =
            key("snapshots.late-every")
                    .intType()
                    .defaultValue(251)
                    .withDescription("generator: every Nth record is late (0 = none)");
    public static final ConfigOption<String> FILE =
            key("snapshots.file")
                    .stringType()
                    .defaultValue("")
                    .withDescription("file: JSON-lines file to replay");
    public static final ConfigOption<String> STREAM_ARN =
            key("snapshots.stream-arn")
                    .stringType()
                    .defaultValue("")
                    .withDescription("kinesis: stream ARN");
    public static final ConfigOption<String> KINESIS_ENDPOINT =
            key("snapshots.kinesis-endpoint")
                    .stringType()
                    .defaultValue("")
                    .withDescription("kinesis: endpoint override, e.g. http://127.0.0.1:4567");
    public static final ConfigOption<String> INITIAL_POSITION =
            key("snapshots.initial-position")
                    .stringType()
                    .defaultValue("TRIM_HORIZON")
                    .withDescription("kinesis: TRIM_HORIZON or LATEST");
    public static final ConfigOption<Duration> SHARD_DISCOVERY =
            key("snapshots.shard-discovery")
                    .durationType()
                    .defaultValue(Duration.ofSeconds(10))
                    .withDescription(
                            "kinesis: how often the stream's shards are listed, to find the children of a split or merge");
    public static final ConfigOption<Duration> SHARD_POLL_INTERVAL =
            key("snapshots.shard-poll-interval")
                    .durationType()
                    .defaultValue(KinesisShardSource.Settings.DEFAULT_POLL_INTERVAL)
                    .withDescription(
                            "kinesis: the shortest time between two GetRecords calls on a shard. Kinesis allows 5 calls"
                                    + " per second per shard, shared by every consumer: 200ms alone, 400ms each for two"
                                    + " (a replay beside the running version)");

    /** Every option, in the order {@code --help} lists them. */
    public static final List<ConfigOption<?>> ALL =
            List.of(
                    PIPELINE,
                    JOB_VERSION,
                    SCHEMA_VERSION,
                    BUCKETS,
                    BUCKETING,
                    WINDOW,
                    OUT_OF_ORDERNESS,
                    IDLENESS,
                    MAX_DRIFT,
                    STORE,
                    ENDPOINT,
                    REGION,
                    ICEBERG_TABLE,
                    ICEBERG_CATALOG,
                    CHECKPOINT_INTERVAL,
                    PUBLISH_CONCURRENCY,
                    INLINE_THRESHOLD,
                    PARALLELISM,
                    MAX_RECORD_BYTES,
                    FUTURE_HORIZON,
                    PAST_HORIZON,
                    SOURCE,
                    SEED,
                    START,
                    KEYS,
                    WINDOWS,
                    EVENTS_PER_WINDOW,
                    EVENTS_PER_SECOND,
                    BAD_EVERY,
                    LATE_EVERY,
                    FILE,
                    STREAM_ARN,
                    KINESIS_ENDPOINT,
                    INITIAL_POSITION,
                    SHARD_DISCOVERY,
                    SHARD_POLL_INTERVAL);
}
