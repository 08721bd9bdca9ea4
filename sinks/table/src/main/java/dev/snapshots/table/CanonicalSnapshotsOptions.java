package dev.snapshots.table;

import static org.apache.flink.configuration.ConfigOptions.key;

import dev.snapshots.sink.CanonicalSnapshotSinkBuilder;
import dev.snapshots.store.StoreSpec;
import java.time.Duration;
import org.apache.flink.annotation.Internal;
import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.ReadableConfig;

/**
 * The options of a {@code 'connector' = 'canonical-snapshots'} table. {@link #STORE}, {@link
 * #PIPELINE}, {@link #JOB_VERSION} and {@link #BUCKETS} are required: together with the window's
 * length (the rows', or {@link #WINDOW}), the table's columns and its primary key they are the job
 * version's identity, which the store records at the first write and refuses to see changed.
 */
@PublicEvolving
public final class CanonicalSnapshotsOptions {
    private CanonicalSnapshotsOptions() {}

    public static final ConfigOption<String> STORE =
            key("store")
                    .stringType()
                    .noDefaultValue()
                    .withDescription(
                            "Where parts are published: file:///dir or s3://bucket/prefix. The store"
                                    + " must refuse a second create-if-absent; it is probed before"
                                    + " the first write.");

    public static final ConfigOption<String> STORE_ENDPOINT =
            key("store.endpoint")
                    .stringType()
                    .noDefaultValue()
                    .withDescription(
                            "An s3:// store's endpoint when not AWS's (a local S3 server, e.g."
                                    + " http://127.0.0.1:9000); path-style addressing is then used.");

    public static final ConfigOption<String> STORE_REGION =
            key("store.region")
                    .stringType()
                    .noDefaultValue()
                    .withDescription("An s3:// store's region, when not the environment's.");

    public static final ConfigOption<String> PIPELINE =
            key("pipeline")
                    .stringType()
                    .noDefaultValue()
                    .withDescription(
                            "The pipeline's name, the first segment of every key: 1-63 characters"
                                    + " of a-z, 0-9, '-' or '_'.");

    public static final ConfigOption<Integer> JOB_VERSION =
            key("job-version")
                    .intType()
                    .noDefaultValue()
                    .withDescription(
                            "The namespace (v=N) the job writes into. Bump it to replay history or to"
                                    + " change the query, the buckets, the window or the columns.");

    public static final ConfigOption<Integer> BUCKETS =
            key("buckets")
                    .intType()
                    .noDefaultValue()
                    .withDescription(
                            "B, the parts per window (1..99999): a row's bucket is a hash of its"
                                    + " primary key (the window columns left out), mod B. Fixed per"
                                    + " job version, independent of parallelism.");

    public static final ConfigOption<Duration> WINDOW =
            key("window")
                    .durationType()
                    .noDefaultValue()
                    .withDescription(
                            "The window's length, e.g. '1 h' or '15 min': whole minutes that"
                                    + " divide a day. Without it, the rows' window_end -"
                                    + " window_start gives it (or the 'window' of a"
                                    + " snapshots-kinesis table the query reads), and the job"
                                    + " version's first write records it in its identity. Either"
                                    + " way every row's window must be that long, in this run and"
                                    + " every later one of the job version: a row of another"
                                    + " length fails the job. A 'window' that differs from a"
                                    + " snapshots-kinesis source's is refused when the INSERT is"
                                    + " planned.");

    public static final ConfigOption<Integer> SCHEMA_VERSION =
            key("schema-version")
                    .intType()
                    .defaultValue(CanonicalSnapshotSinkBuilder.DEFAULT_SCHEMA_VERSION)
                    .withDescription(
                            "Part of every key; bump it (with the job version) when the columns"
                                    + " change.");

    public static final ConfigOption<Integer> INLINE_THRESHOLD =
            key("inline-threshold")
                    .intType()
                    .defaultValue(CanonicalSnapshotSinkBuilder.DEFAULT_INLINE_THRESHOLD_BYTES)
                    .withDescription(
                            "Parts up to this many bytes travel inside the checkpoint and are"
                                    + " published with one conditional PUT; larger ones are"
                                    + " uploaded before the checkpoint. 0 stages every part.");

    /** Options that start with this are the Iceberg catalog's properties, without it. */
    public static final String ICEBERG_CATALOG_PREFIX = "iceberg.catalog.";

    public static final ConfigOption<Integer> PUBLISH_CONCURRENCY =
            key("publish-concurrency")
                    .intType()
                    .defaultValue(CanonicalSnapshotSinkBuilder.DEFAULT_PUBLISH_CONCURRENCY)
                    .withDescription("Parts of one commit published at a time.");

    public static final ConfigOption<String> ICEBERG_TABLE =
            key("iceberg.table")
                    .stringType()
                    .noDefaultValue()
                    .withDescription(
                            "An Iceberg table (namespace.name) kept up with the complete windows:"
                                    + " one commit per window, job version N on branch vN. Its"
                                    + " catalog's properties are the options that start with '"
                                    + ICEBERG_CATALOG_PREFIX
                                    + "' ('iceberg.catalog.type' = 'glue', ...). Needs"
                                    + " snapshots-sink-iceberg and Iceberg's iceberg-flink-runtime"
                                    + " in Flink's lib/.");

    /**
     * The store a table's options name: {@link #STORE} with its endpoint and region, if set. Also
     * for a deploy tool that reads a script's table without planning it.
     */
    @Internal
    public static StoreSpec store(ReadableConfig options) {
        StoreSpec store = StoreSpec.parse(options.get(STORE));
        if (options.getOptional(STORE_ENDPOINT).isPresent()) {
            store = store.withEndpoint(options.get(STORE_ENDPOINT));
        }
        if (options.getOptional(STORE_REGION).isPresent()) {
            store = store.withRegion(options.get(STORE_REGION));
        }
        return store;
    }
}
