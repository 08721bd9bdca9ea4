package dev.snapshots.kinesis;

import static dev.snapshots.kinesis.SnapshotsKinesisOptions.AWS_CREDENTIALS_PROVIDER;
import static dev.snapshots.kinesis.SnapshotsKinesisOptions.AWS_ENDPOINT;
import static dev.snapshots.kinesis.SnapshotsKinesisOptions.AWS_REGION;
import static dev.snapshots.kinesis.SnapshotsKinesisOptions.DEAD_LETTERS_JOB_VERSION;
import static dev.snapshots.kinesis.SnapshotsKinesisOptions.DEAD_LETTERS_PIPELINE;
import static dev.snapshots.kinesis.SnapshotsKinesisOptions.DEAD_LETTERS_STORE;
import static dev.snapshots.kinesis.SnapshotsKinesisOptions.DEAD_LETTERS_STORE_ENDPOINT;
import static dev.snapshots.kinesis.SnapshotsKinesisOptions.DEAD_LETTERS_STORE_REGION;
import static dev.snapshots.kinesis.SnapshotsKinesisOptions.IDLENESS;
import static dev.snapshots.kinesis.SnapshotsKinesisOptions.INITIAL_POSITION;
import static dev.snapshots.kinesis.SnapshotsKinesisOptions.INITIAL_TIMESTAMP;
import static dev.snapshots.kinesis.SnapshotsKinesisOptions.MAX_DRIFT;
import static dev.snapshots.kinesis.SnapshotsKinesisOptions.SHARD_DISCOVERY;
import static dev.snapshots.kinesis.SnapshotsKinesisOptions.SHARD_POLL_INTERVAL;
import static dev.snapshots.kinesis.SnapshotsKinesisOptions.STREAM_ARN;
import static dev.snapshots.kinesis.SnapshotsKinesisOptions.WINDOW;

import dev.snapshots.job.source.LatenessRule;
import dev.snapshots.job.source.kinesis.KinesisShardSource;
import dev.snapshots.sink.CanonicalSnapshotSink;
import dev.snapshots.store.StoreSpec;
import java.math.BigDecimal;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.format.DateTimeParseException;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Properties;
import java.util.Set;
import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.ReadableConfig;
import org.apache.flink.table.api.ValidationException;
import org.apache.flink.table.catalog.Column;
import org.apache.flink.table.catalog.ResolvedSchema;
import org.apache.flink.table.catalog.WatermarkSpec;
import org.apache.flink.table.connector.source.DynamicTableSource;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.factories.DeserializationFormatFactory;
import org.apache.flink.table.factories.DynamicTableSourceFactory;
import org.apache.flink.table.factories.FactoryUtil;
import org.apache.flink.table.types.DataType;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.LogicalTypeRoot;
import org.apache.flink.table.types.logical.utils.LogicalTypeChecks;

/**
 * {@code 'connector' = 'snapshots-kinesis'}: the deterministic Kinesis source as a table. Each
 * shard's records are read by the table's {@code 'format'}, judged late by the shard's own rule and
 * watermarked by the table's {@code WATERMARK} applied to the shard's rows; what the format rejects
 * and what is late become dead letters, published to {@code 'dead-letters.store'}. Options: {@link
 * SnapshotsKinesisOptions}.
 *
 * <pre>{@code
 * CREATE TABLE orders (customer STRING, amount DECIMAL(10, 2), order_time TIMESTAMP(3),
 *   WATERMARK FOR order_time AS order_time - INTERVAL '5' SECOND
 * ) WITH ('connector' = 'snapshots-kinesis', 'format' = 'json',
 *         'stream.arn' = 'arn:aws:kinesis:eu-west-1:123456789012:stream/orders', 'window' = '1 h',
 *         'dead-letters.store' = 's3://bucket/snapshots', 'dead-letters.pipeline' = 'orders',
 *         'dead-letters.job-version' = '1');
 * }</pre>
 */
@PublicEvolving
public final class SnapshotsKinesisTableFactory implements DynamicTableSourceFactory {
    public static final String IDENTIFIER = "snapshots-kinesis";

    /** Passed to the AWS client as they are, as Flink's Kinesis connector does. */
    private static final String AWS_PREFIX = "aws.";

    @Override
    public String factoryIdentifier() {
        return IDENTIFIER;
    }

    @Override
    public Set<ConfigOption<?>> requiredOptions() {
        return Set.of(
                FactoryUtil.FORMAT,
                STREAM_ARN,
                WINDOW,
                DEAD_LETTERS_STORE,
                DEAD_LETTERS_PIPELINE,
                DEAD_LETTERS_JOB_VERSION);
    }

    @Override
    public Set<ConfigOption<?>> optionalOptions() {
        return Set.of(
                AWS_REGION,
                AWS_ENDPOINT,
                AWS_CREDENTIALS_PROVIDER,
                INITIAL_POSITION,
                INITIAL_TIMESTAMP,
                SHARD_DISCOVERY,
                SHARD_POLL_INTERVAL,
                IDLENESS,
                MAX_DRIFT,
                DEAD_LETTERS_STORE_ENDPOINT,
                DEAD_LETTERS_STORE_REGION);
    }

    @Override
    public DynamicTableSource createDynamicTableSource(Context context) {
        FactoryUtil.TableFactoryHelper helper = FactoryUtil.createTableFactoryHelper(this, context);
        var format =
                helper.discoverDecodingFormat(
                        DeserializationFormatFactory.class, FactoryUtil.FORMAT);
        helper.validateExcept(AWS_PREFIX);
        ReadableConfig options = helper.getOptions();
        String name = context.getObjectIdentifier().getObjectName();
        String table = context.getObjectIdentifier().asSummaryString();
        DataType physical = context.getPhysicalRowDataType();
        int rowtime = rowtime(table, context.getCatalogTable().getResolvedSchema(), physical);
        LogicalType rowtimeType = physical.getChildren().get(rowtime).getLogicalType();
        try {
            return new SnapshotsKinesisTableSource(
                    name,
                    settings(options, context.getCatalogTable().getOptions()),
                    format,
                    physical,
                    rowtime,
                    LogicalTypeChecks.getPrecision(rowtimeType),
                    new LatenessRule(
                            options.get(WINDOW).toMillis(), 0, options.get(IDLENESS).toMillis()),
                    options.get(MAX_DRIFT),
                    deadLetters(options, name));
        } catch (IllegalArgumentException e) {
            throw new ValidationException("table " + table + ": " + e.getMessage(), e);
        }
    }

    /** The WATERMARK's rowtime column: the source judges lateness by it, so it must be read. */
    private static int rowtime(String table, ResolvedSchema schema, DataType physical) {
        List<WatermarkSpec> specs = schema.getWatermarkSpecs();
        if (specs.isEmpty()) {
            throw new ValidationException(
                    "table "
                            + table
                            + ": a snapshots-kinesis table needs a WATERMARK (e.g. WATERMARK FOR ts"
                            + " AS ts - INTERVAL '5' SECOND): each shard's watermark and its"
                            + " lateness rule are computed from it");
        }
        String column = specs.get(0).getRowtimeAttribute();
        int index = DataType.getFieldNames(physical).indexOf(column);
        boolean physicalColumn =
                schema.getColumn(column).map(Column::isPhysical).orElse(false) && index >= 0;
        LogicalTypeRoot root =
                index < 0 ? null : physical.getChildren().get(index).getLogicalType().getTypeRoot();
        if (!physicalColumn
                || !(root == LogicalTypeRoot.TIMESTAMP_WITHOUT_TIME_ZONE
                        || root == LogicalTypeRoot.TIMESTAMP_WITH_LOCAL_TIME_ZONE)) {
            throw new ValidationException(
                    "table "
                            + table
                            + ": the WATERMARK's column "
                            + column
                            + " must be a physical TIMESTAMP or TIMESTAMP_LTZ column, read by the"
                            + " format (the source judges each row by it)");
        }
        return index;
    }

    private static KinesisShardSource.Settings settings(
            ReadableConfig options, java.util.Map<String, String> all) {
        String arn = options.get(STREAM_ARN);
        String[] parts = arn.split(":");
        if (parts.length < 6 || !parts[5].startsWith("stream/")) {
            throw new IllegalArgumentException(
                    "stream.arn must look like arn:aws:kinesis:REGION:ACCOUNT:stream/NAME, got "
                            + arn);
        }
        Properties aws = new Properties();
        all.forEach(
                (k, v) -> {
                    if (k.startsWith(AWS_PREFIX)) {
                        aws.setProperty(k, v);
                    }
                });
        aws.setProperty(AWS_REGION.key(), options.getOptional(AWS_REGION).orElse(parts[3]));
        return new KinesisShardSource.Settings(
                arn,
                aws,
                options.get(INITIAL_POSITION),
                initialTimestamp(options),
                options.get(SHARD_DISCOVERY),
                options.get(SHARD_POLL_INTERVAL),
                0);
    }

    /** {@code source.init.timestamp}, given with AT_TIMESTAMP and only then, in the past. */
    private static Instant initialTimestamp(ReadableConfig options) {
        boolean atTimestamp = options.get(INITIAL_POSITION).equals("AT_TIMESTAMP");
        String text = options.getOptional(INITIAL_TIMESTAMP).orElse(null);
        if (atTimestamp != (text != null)) {
            throw new IllegalArgumentException(
                    atTimestamp
                            ? "source.init.position AT_TIMESTAMP needs source.init.timestamp"
                            : "source.init.timestamp goes with source.init.position"
                                    + " AT_TIMESTAMP, not "
                                    + options.get(INITIAL_POSITION));
        }
        if (text == null) {
            return null;
        }
        Instant at;
        try {
            at =
                    text.matches("\\d+(\\.\\d*)?")
                            ? Instant.ofEpochMilli(
                                    new BigDecimal(text).movePointRight(3).longValue())
                            : OffsetDateTime.parse(text).toInstant();
        } catch (DateTimeParseException e) {
            throw new IllegalArgumentException(
                    "source.init.timestamp must be ISO-8601 with an offset"
                            + " (2026-12-01T00:00:00Z) or epoch seconds, got "
                            + text);
        }
        if (at.isAfter(Instant.now())) {
            throw new IllegalArgumentException(
                    "source.init.timestamp " + at + " is in the future; Kinesis refuses it");
        }
        return at.truncatedTo(ChronoUnit.MILLIS);
    }

    private static CanonicalSnapshotSink<RowData> deadLetters(ReadableConfig options, String name) {
        StoreSpec store = StoreSpec.parse(options.get(DEAD_LETTERS_STORE));
        if (options.getOptional(DEAD_LETTERS_STORE_ENDPOINT).isPresent()) {
            store = store.withEndpoint(options.get(DEAD_LETTERS_STORE_ENDPOINT));
        }
        if (options.getOptional(DEAD_LETTERS_STORE_REGION).isPresent()) {
            store = store.withRegion(options.get(DEAD_LETTERS_STORE_REGION));
        }
        return CanonicalSnapshotSink.<RowData>builder()
                .store(store)
                .pipeline(options.get(DEAD_LETTERS_PIPELINE))
                .jobVersion(options.get(DEAD_LETTERS_JOB_VERSION))
                .bucketCount(1)
                .windowLength(options.get(WINDOW))
                .rowFormat(new DeadLetterRow.Format())
                .deadLetters()
                // Savepoints know the assembling window and the sink by these.
                .uids("dead-letter-parts-" + name, "dead-letters-" + name)
                .build();
    }
}
