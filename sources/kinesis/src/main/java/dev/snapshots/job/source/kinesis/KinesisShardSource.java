package dev.snapshots.job.source.kinesis;

import dev.snapshots.job.source.RecordJudge;
import dev.snapshots.sink.WindowedSource;
import java.io.Serializable;
import java.net.URI;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.flink.annotation.Internal;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.connector.source.Boundedness;
import org.apache.flink.api.connector.source.Source;
import org.apache.flink.api.connector.source.SourceReader;
import org.apache.flink.api.connector.source.SourceReaderContext;
import org.apache.flink.api.connector.source.SplitEnumerator;
import org.apache.flink.api.connector.source.SplitEnumeratorContext;
import org.apache.flink.api.java.typeutils.ResultTypeQueryable;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.io.SimpleVersionedSerializer;
import org.apache.flink.metrics.Gauge;
import org.apache.flink.runtime.util.EnvironmentInformation;
import software.amazon.awssdk.auth.credentials.AwsCredentialsProvider;
import software.amazon.awssdk.core.client.config.SdkAdvancedClientOption;
import software.amazon.awssdk.http.apache.ApacheHttpClient;
import software.amazon.awssdk.services.kinesis.KinesisClient;
import software.amazon.awssdk.services.kinesis.KinesisClientBuilder;

/**
 * A Kinesis Data Streams source that judges every record against its own shard's progress.
 *
 * <pre>
 *   enumerator (JobManager)                         readers (one per subtask, several shards each)
 *   ListShards every discovery interval  ─assign─►  fetcher thread: GetRecords per shard, 5 per second at most
 *   a child shard waits for all its parents          │  (paused shards are skipped: watermark alignment)
 *   and starts from their progress                   ▼
 *                                         ◄─Finished─ emitter: de-aggregate KPL records, judge each one
 *                                         ◄─Started──  against its shard's progress, emit it with the
 *                                         ─Release─►  shard's watermark on the shard's own output
 * </pre>
 *
 * <p>Why not flink-connector-kinesis 4.3.0's KinesisStreamsSource: it reads children alongside
 * their parents, cannot pause a shard for watermark alignment, and knows nothing of KPL
 * aggregation; its splits carry no progress, so lateness could only be judged per subtask. Its
 * checkpointed splits and enumerator state are read by this source ({@link Connector430State}); the
 * connector itself is not used, and the AWS SDK v2 is used directly, so that one source builds on
 * Flink 1.20 and Flink 2.
 */
@Internal
public final class KinesisShardSource<T>
        implements Source<T, ShardSplit, ShardEnumeratorState>,
                ResultTypeQueryable<T>,
                WindowedSource {
    private static final long serialVersionUID = 1L;

    /**
     * @param aws the connector's AWS client properties ({@code aws.region}, {@code aws.endpoint},
     *     {@code aws.credentials.provider}, ...)
     * @param initialPosition where a new job starts reading: TRIM_HORIZON, LATEST or AT_TIMESTAMP
     * @param initialTimestamp AT_TIMESTAMP's time, null for the others
     * @param assignmentSeed 0: shards are assigned in shard id order; otherwise in an order
     *     shuffled by it
     */
    public record Settings(
            String streamArn,
            Properties aws,
            String initialPosition,
            Instant initialTimestamp,
            Duration discoveryInterval,
            Duration pollInterval,
            long assignmentSeed)
            implements Serializable {
        public static final Duration DEFAULT_DISCOVERY_INTERVAL = Duration.ofSeconds(10);

        /** Kinesis allows five GetRecords calls per second per shard. */
        public static final Duration DEFAULT_POLL_INTERVAL = Duration.ofMillis(200);

        public Settings {
            if (!Set.of("TRIM_HORIZON", "LATEST", "AT_TIMESTAMP").contains(initialPosition)) {
                throw new IllegalArgumentException(
                        "the initial position must be TRIM_HORIZON, LATEST or AT_TIMESTAMP, got "
                                + initialPosition);
            }
            if (initialPosition.equals("AT_TIMESTAMP") != (initialTimestamp != null)) {
                throw new IllegalArgumentException(
                        "a timestamp goes with the initial position AT_TIMESTAMP, and only with"
                                + " it; got "
                                + initialPosition
                                + " and "
                                + initialTimestamp);
            }
            KinesisCredentials.validate(aws);
        }

        /** TRIM_HORIZON or LATEST. */
        public Settings(
                String streamArn,
                Properties aws,
                String initialPosition,
                Duration discoveryInterval,
                Duration pollInterval,
                long assignmentSeed) {
            this(
                    streamArn,
                    aws,
                    initialPosition,
                    null,
                    discoveryInterval,
                    pollInterval,
                    assignmentSeed);
        }

        /**
         * Where a shard starts whose parents have been read, or that has none: at its start, or,
         * for AT_TIMESTAMP, at its first record that arrived at or after the timestamp (the same
         * for a shard opened after it).
         */
        ShardPosition startOfShard() {
            return initialTimestamp == null
                    ? ShardPosition.fromStart()
                    : ShardPosition.fromTimestamp(initialTimestamp);
        }

        /**
         * A client of the AWS SDK v2 with the credentials of {@link KinesisCredentials}, in the
         * region {@code aws.region}, at {@code aws.endpoint} if set; its user agent names the job
         * as Flink's Kinesis connector does, unless {@code aws.kinesis.client.user-agent-prefix}
         * says otherwise.
         */
        KinesisClient client() {
            String userAgent =
                    aws.getProperty(
                            "aws.kinesis.client.user-agent-prefix",
                            String.format(
                                    "Canonical snapshots %s (%s) Kinesis source",
                                    EnvironmentInformation.getVersion(),
                                    EnvironmentInformation.getRevisionInformation().commitId));
            AwsCredentialsProvider credentials = KinesisCredentials.provider(aws);
            // Fails the task now, as Flink's client does, rather than every call later.
            credentials.resolveCredentials();
            KinesisClientBuilder builder =
                    KinesisClient.builder()
                            .httpClientBuilder(ApacheHttpClient.builder())
                            .credentialsProvider(credentials)
                            .region(KinesisCredentials.region(aws))
                            .overrideConfiguration(
                                    o ->
                                            o.putAdvancedOption(
                                                    SdkAdvancedClientOption.USER_AGENT_PREFIX,
                                                    userAgent));
            if (aws.containsKey("aws.endpoint")) {
                builder.endpointOverride(URI.create(aws.getProperty("aws.endpoint")));
            }
            return builder.build();
        }
    }

    /** The reader's gauge: the largest MillisBehindLatest of its shards' last GetRecords. */
    public static final String MILLIS_BEHIND_LATEST = "millisBehindLatest";

    private final Settings settings;
    private final RecordJudge<T> judge;
    private final TypeInformation<T> type;

    public KinesisShardSource(Settings settings, RecordJudge<T> judge, TypeInformation<T> type) {
        this.settings = settings;
        this.judge = judge;
        this.type = type;
    }

    /** The windows its judge's lateness rule closes. */
    @Override
    public Duration windowLength() {
        return Duration.ofMillis(judge.rule().windowMillis());
    }

    @Override
    public Boundedness getBoundedness() {
        return Boundedness.CONTINUOUS_UNBOUNDED;
    }

    @Override
    public SourceReader<T, ShardSplit> createReader(SourceReaderContext context) throws Exception {
        judge.open(context);
        Set<String> released = ConcurrentHashMap.newKeySet();
        // How far behind the tip this reader's last GetRecords was, per shard; the gauge is the
        // largest. This consumer's own lag: CloudWatch's iterator age is the oldest of every
        // consumer of the stream, so a replay reading beside this job would hide this job's lag.
        Map<String, Long> behind = new ConcurrentHashMap<>();
        context.metricGroup()
                .gauge(
                        MILLIS_BEHIND_LATEST,
                        (Gauge<Long>)
                                () ->
                                        behind.values().stream()
                                                .mapToLong(Long::longValue)
                                                .max()
                                                .orElse(0L));
        return new ShardReader<>(
                () -> new ShardFetcher(settings, released, behind),
                new ShardEmitter<>(judge, context),
                released,
                new Configuration(),
                context);
    }

    @Override
    public SplitEnumerator<ShardSplit, ShardEnumeratorState> createEnumerator(
            SplitEnumeratorContext<ShardSplit> context) {
        return new ShardEnumerator(context, settings, ShardEnumeratorState.initial());
    }

    @Override
    public SplitEnumerator<ShardSplit, ShardEnumeratorState> restoreEnumerator(
            SplitEnumeratorContext<ShardSplit> context, ShardEnumeratorState state) {
        return new ShardEnumerator(context, settings, state);
    }

    @Override
    public SimpleVersionedSerializer<ShardSplit> getSplitSerializer() {
        return new ShardSplit.Serializer();
    }

    @Override
    public SimpleVersionedSerializer<ShardEnumeratorState> getEnumeratorCheckpointSerializer() {
        return new ShardEnumeratorState.Serializer();
    }

    @Override
    public TypeInformation<T> getProducedType() {
        return type;
    }
}
