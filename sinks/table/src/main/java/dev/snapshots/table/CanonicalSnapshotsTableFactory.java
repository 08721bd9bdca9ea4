package dev.snapshots.table;

import static dev.snapshots.table.CanonicalSnapshotsOptions.BUCKETS;
import static dev.snapshots.table.CanonicalSnapshotsOptions.ICEBERG_CATALOG_PREFIX;
import static dev.snapshots.table.CanonicalSnapshotsOptions.ICEBERG_TABLE;
import static dev.snapshots.table.CanonicalSnapshotsOptions.INLINE_THRESHOLD;
import static dev.snapshots.table.CanonicalSnapshotsOptions.JOB_VERSION;
import static dev.snapshots.table.CanonicalSnapshotsOptions.PIPELINE;
import static dev.snapshots.table.CanonicalSnapshotsOptions.PUBLISH_CONCURRENCY;
import static dev.snapshots.table.CanonicalSnapshotsOptions.SCHEMA_VERSION;
import static dev.snapshots.table.CanonicalSnapshotsOptions.STORE;
import static dev.snapshots.table.CanonicalSnapshotsOptions.STORE_ENDPOINT;
import static dev.snapshots.table.CanonicalSnapshotsOptions.STORE_REGION;
import static dev.snapshots.table.CanonicalSnapshotsOptions.WINDOW;

import dev.snapshots.progress.ReaderTable;
import dev.snapshots.sink.Bucketing;
import dev.snapshots.sink.CanonicalSnapshotSink;
import dev.snapshots.sink.CanonicalSnapshotSinkBuilder;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.ReadableConfig;
import org.apache.flink.table.api.ValidationException;
import org.apache.flink.table.connector.sink.DynamicTableSink;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.factories.DynamicTableSinkFactory;
import org.apache.flink.table.factories.FactoryUtil;

/**
 * {@code 'connector' = 'canonical-snapshots'}: a table whose rows are published as exactly one
 * Parquet object per (window, bucket), however many executions compute them. Options: {@link
 * CanonicalSnapshotsOptions}.
 *
 * <pre>{@code
 * CREATE TABLE customer_hourly (
 *   window_start TIMESTAMP(3) NOT NULL, window_end TIMESTAMP(3) NOT NULL,
 *   customer STRING NOT NULL, revenue DECIMAL(38, 2),
 *   PRIMARY KEY (window_start, window_end, customer) NOT ENFORCED
 * ) WITH ('connector' = 'canonical-snapshots', 'store' = 's3://bucket/snapshots',
 *         'pipeline' = 'orders', 'job-version' = '1', 'buckets' = '4');
 * }</pre>
 */
@PublicEvolving
public final class CanonicalSnapshotsTableFactory implements DynamicTableSinkFactory {
    public static final String IDENTIFIER = "canonical-snapshots";

    @Override
    public String factoryIdentifier() {
        return IDENTIFIER;
    }

    @Override
    public Set<ConfigOption<?>> requiredOptions() {
        return Set.of(STORE, PIPELINE, JOB_VERSION, BUCKETS);
    }

    @Override
    public Set<ConfigOption<?>> optionalOptions() {
        return Set.of(
                STORE_ENDPOINT,
                STORE_REGION,
                SCHEMA_VERSION,
                INLINE_THRESHOLD,
                PUBLISH_CONCURRENCY,
                ICEBERG_TABLE,
                WINDOW);
    }

    @Override
    public DynamicTableSink createDynamicTableSink(Context context) {
        FactoryUtil.TableFactoryHelper helper = FactoryUtil.createTableFactoryHelper(this, context);
        helper.validateExcept(ICEBERG_CATALOG_PREFIX);
        ReadableConfig options = helper.getOptions();
        String table = context.getObjectIdentifier().getObjectName();
        TableRowFormat format =
                TableRowFormat.of(
                        context.getObjectIdentifier().asSummaryString(),
                        context.getCatalogTable().getResolvedSchema());
        CanonicalSnapshotSink<RowData> sink;
        try {
            CanonicalSnapshotSinkBuilder<RowData> builder =
                    CanonicalSnapshotSink.<RowData>builder()
                            .store(CanonicalSnapshotsOptions.store(options))
                            .pipeline(options.get(PIPELINE))
                            .jobVersion(options.get(JOB_VERSION))
                            .schemaVersion(options.get(SCHEMA_VERSION))
                            .bucketCount(options.get(BUCKETS))
                            .bucketing(Bucketing.HASH)
                            .rowWindow(format)
                            .inlineThresholdBytes(options.get(INLINE_THRESHOLD))
                            .publishConcurrency(options.get(PUBLISH_CONCURRENCY))
                            .rowFormat(format)
                            // Savepoints know the assembling window and the sink by these.
                            .uids("snapshot-parts-" + table, "snapshots-" + table);
            options.getOptional(WINDOW).ifPresent(builder::windowLength);
            if (options.getOptional(ICEBERG_TABLE).isPresent()) {
                builder.readerTable(
                        ReaderTable.of(
                                "iceberg",
                                options.get(ICEBERG_TABLE),
                                icebergCatalog(context.getCatalogTable().getOptions())));
            }
            sink = builder.build();
        } catch (IllegalArgumentException e) {
            throw new ValidationException(
                    "table "
                            + context.getObjectIdentifier().asSummaryString()
                            + ": "
                            + e.getMessage(),
                    e);
        }
        return new CanonicalSnapshotsTableSink(table, sink, format);
    }

    private static Map<String, String> icebergCatalog(Map<String, String> options) {
        Map<String, String> catalog = new TreeMap<>();
        options.forEach(
                (key, value) -> {
                    if (key.startsWith(ICEBERG_CATALOG_PREFIX)) {
                        catalog.put(key.substring(ICEBERG_CATALOG_PREFIX.length()), value);
                    }
                });
        return catalog;
    }
}
