package dev.snapshots.job.source.kinesis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.snapshots.job.source.SplitProgress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.flink.connector.base.source.reader.splitreader.SplitsAddition;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.AwsCredentials;
import software.amazon.awssdk.auth.credentials.AwsCredentialsProvider;
import software.amazon.awssdk.core.exception.SdkClientException;

/**
 * The reader's Kinesis client is built by its fetcher, at the first fetch: making the split reader,
 * which Flink does on the task thread when splits arrive, builds nothing.
 */
class ShardFetcherTest {
    /** A user's CUSTOM provider: counts the clients that were built with it. */
    public static final class CountingCredentials implements AwsCredentialsProvider {
        static final AtomicInteger BUILT = new AtomicInteger();

        public CountingCredentials(Properties aws) {
            BUILT.incrementAndGet();
        }

        @Override
        public AwsCredentials resolveCredentials() {
            return AwsBasicCredentials.create("local", "local");
        }
    }

    @Test
    void theClientIsBuiltAtTheFirstFetchNotWhenTheSplitReaderIsMadeOrGivenSplits()
            throws Exception {
        int closedPort;
        try (ServerSocket socket = new ServerSocket(0)) {
            closedPort = socket.getLocalPort();
        }
        Properties aws = new Properties();
        aws.setProperty("aws.region", "us-east-1");
        aws.setProperty("aws.endpoint", "http://127.0.0.1:" + closedPort);
        aws.setProperty("aws.credentials.provider", "CUSTOM");
        aws.setProperty(
                "aws.credentials.provider.custom.class", CountingCredentials.class.getName());
        KinesisShardSource.Settings settings =
                new KinesisShardSource.Settings(
                        "arn:aws:kinesis:us-east-1:000000000000:stream/orders",
                        aws,
                        "TRIM_HORIZON",
                        Duration.ofSeconds(10),
                        Duration.ZERO,
                        0);
        CountingCredentials.BUILT.set(0);

        ShardFetcher fetcher =
                new ShardFetcher(
                        settings, ConcurrentHashMap.newKeySet(), new ConcurrentHashMap<>());
        fetcher.handleSplitsChanges(
                new SplitsAddition<>(
                        List.of(
                                new ShardSplit(
                                        "shardId-000000000000",
                                        ShardPosition.fromStart(),
                                        SplitProgress.none(),
                                        false))));
        assertThat(CountingCredentials.BUILT).as("clients built before any fetch").hasValue(0);

        // Nothing listens there: the call fails, on the fetcher's thread, after the client is made.
        assertThatThrownBy(fetcher::fetch).isInstanceOf(SdkClientException.class);
        assertThat(CountingCredentials.BUILT).as("clients built by the first fetch").hasValue(1);
        assertThatThrownBy(fetcher::fetch).isInstanceOf(SdkClientException.class);
        assertThat(CountingCredentials.BUILT).as("the same client for every fetch").hasValue(1);
        fetcher.close();
    }
}
