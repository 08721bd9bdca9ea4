package dev.snapshots.kinesis;

import static org.apache.flink.configuration.ConfigOptions.key;

import dev.snapshots.job.source.kinesis.KinesisShardSource;
import java.time.Duration;
import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.configuration.ConfigOption;

/**
 * The options of a {@code 'connector' = 'snapshots-kinesis'} table, besides {@code 'format'}. Every
 * other {@code aws.*} key (e.g. {@code aws.credentials.provider.role.arn}) goes to the AWS client
 * as it is, as for Flink's own Kinesis connector.
 */
@PublicEvolving
public final class SnapshotsKinesisOptions {
    private SnapshotsKinesisOptions() {}

    public static final ConfigOption<String> STREAM_ARN =
            key("stream.arn")
                    .stringType()
                    .noDefaultValue()
                    .withDescription(
                            "The stream's ARN, arn:aws:kinesis:REGION:ACCOUNT:stream/NAME.");

    public static final ConfigOption<String> AWS_REGION =
            key("aws.region")
                    .stringType()
                    .noDefaultValue()
                    .withDescription("The stream's region; the ARN's when not set.");

    public static final ConfigOption<String> AWS_ENDPOINT =
            key("aws.endpoint")
                    .stringType()
                    .noDefaultValue()
                    .withDescription(
                            "A Kinesis endpoint that is not AWS's (a local Kinesis, e.g."
                                    + " http://127.0.0.1:4567).");

    public static final ConfigOption<String> AWS_CREDENTIALS_PROVIDER =
            key("aws.credentials.provider")
                    .stringType()
                    .defaultValue("AUTO")
                    .withDescription(
                            "Flink's Kinesis connector's values and keys under it: AUTO (the"
                                    + " SDK's default chain), CONTAINER (the ECS task's role),"
                                    + " ASSUME_ROLE (aws.credentials.provider.role.arn and"
                                    + " .role.sessionName, over .role.provider), WEB_IDENTITY_TOKEN"
                                    + " (EKS: .role.arn and .webIdentityToken.file, or"
                                    + " AWS_ROLE_ARN and AWS_WEB_IDENTITY_TOKEN_FILE), BASIC,"
                                    + " ENV_VAR, SYS_PROP, PROFILE, CUSTOM. See REFERENCE.md.");

    public static final ConfigOption<String> INITIAL_POSITION =
            key("source.init.position")
                    .stringType()
                    .defaultValue("TRIM_HORIZON")
                    .withDescription(
                            "Where a job without a checkpoint starts reading each shard:"
                                    + " TRIM_HORIZON, LATEST, or AT_TIMESTAMP (the first record"
                                    + " that arrived at or after 'source.init.timestamp'). A job"
                                    + " restored from a checkpoint or savepoint continues where"
                                    + " it was.");

    public static final ConfigOption<String> INITIAL_TIMESTAMP =
            key("source.init.timestamp")
                    .stringType()
                    .noDefaultValue()
                    .withDescription(
                            "AT_TIMESTAMP's time, not in the future: ISO-8601 with an offset"
                                    + " (2026-12-01T00:00:00Z, 2026-12-01T01:00:00.250+01:00) or"
                                    + " epoch seconds (1796083200, 1796083200.25); milliseconds"
                                    + " count. Shards the job starts later (a reshard's"
                                    + " children, after a restore too) start there as well: keep"
                                    + " it when you restore.");

    public static final ConfigOption<Duration> SHARD_DISCOVERY =
            key("source.shard.discovery-interval")
                    .durationType()
                    .defaultValue(KinesisShardSource.Settings.DEFAULT_DISCOVERY_INTERVAL)
                    .withDescription("How often the shards are listed (new shards, reshards).");

    public static final ConfigOption<Duration> SHARD_POLL_INTERVAL =
            key("source.shard.poll-interval")
                    .durationType()
                    .defaultValue(KinesisShardSource.Settings.DEFAULT_POLL_INTERVAL)
                    .withDescription(
                            "The least time between two GetRecords calls on one shard; Kinesis"
                                    + " allows 5 per second per shard, shared by every consumer.");

    public static final ConfigOption<Duration> WINDOW =
            key("window")
                    .durationType()
                    .noDefaultValue()
                    .withDescription(
                            "The length of the query's tumbling window. A row is late, and a dead"
                                    + " letter, when its window ends at or before its shard's"
                                    + " watermark; dead letters are published per window of this"
                                    + " length. A canonical-snapshots table the query writes is"
                                    + " held to it: one whose 'window' differs is refused when the"
                                    + " INSERT is planned, a row of another window length fails"
                                    + " the job.");

    public static final ConfigOption<Duration> IDLENESS =
            key("source.idleness")
                    .durationType()
                    .defaultValue(Duration.ofSeconds(30))
                    .withDescription(
                            "A shard caught up and without records for this long, by arrival time,"
                                    + " stops holding windows back; a record arriving after such a"
                                    + " spell is late if its event time is more than this before"
                                    + " its arrival. Set it above the WATERMARK's delay plus your"
                                    + " producers' delay. 0 s: never idle.");

    public static final ConfigOption<Duration> MAX_DRIFT =
            key("source.max-drift")
                    .durationType()
                    .defaultValue(Duration.ofMinutes(5))
                    .withDescription(
                            "Watermark alignment: a shard more than this ahead of the slowest is"
                                    + " paused. 0 s: no alignment.");

    public static final ConfigOption<String> DEAD_LETTERS_STORE =
            key("dead-letters.store")
                    .stringType()
                    .noDefaultValue()
                    .withDescription(
                            "Where dead letters are published, as the bundled job publishes them:"
                                    + " file:///dir or s3://bucket/prefix, JSON lines under"
                                    + " _deadletter/PIPELINE/v=N/.");

    public static final ConfigOption<String> DEAD_LETTERS_STORE_ENDPOINT =
            key("dead-letters.store.endpoint")
                    .stringType()
                    .noDefaultValue()
                    .withDescription("An s3:// store's endpoint when not AWS's.");

    public static final ConfigOption<String> DEAD_LETTERS_STORE_REGION =
            key("dead-letters.store.region")
                    .stringType()
                    .noDefaultValue()
                    .withDescription("An s3:// store's region, when not the environment's.");

    public static final ConfigOption<String> DEAD_LETTERS_PIPELINE =
            key("dead-letters.pipeline")
                    .stringType()
                    .noDefaultValue()
                    .withDescription(
                            "The pipeline the dead letters belong to; name the one your"
                                    + " canonical-snapshots table writes, so audit and inspect show"
                                    + " both.");

    public static final ConfigOption<Integer> DEAD_LETTERS_JOB_VERSION =
            key("dead-letters.job-version")
                    .intType()
                    .noDefaultValue()
                    .withDescription("The job version (v=N) the dead letters are published in.");
}
