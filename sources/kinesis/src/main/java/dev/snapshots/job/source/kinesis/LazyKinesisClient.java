package dev.snapshots.job.source.kinesis;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import software.amazon.awssdk.services.kinesis.KinesisClient;

/**
 * A Kinesis client built on its first call, on the thread that makes it: a reader's fetcher thread,
 * or the enumerator's worker thread. Building it (the SDK's classes loaded, the credentials
 * resolved) took 4.7 s on a TaskManager new to the job; built in the reader's constructor, that was
 * 4.7 s of the task thread before it took its splits, answered a checkpoint or emitted a watermark.
 * Now the task runs at once, and the first GetRecords waits instead.
 */
final class LazyKinesisClient implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(LazyKinesisClient.class);

    private final KinesisShardSource.Settings settings;
    private final String user;
    private KinesisClient client;

    /**
     * @param user who uses it, for the log line
     */
    LazyKinesisClient(KinesisShardSource.Settings settings, String user) {
        this.settings = settings;
        this.user = user;
    }

    synchronized KinesisClient get() {
        if (client == null) {
            long start = System.nanoTime();
            client = settings.client();
            LOG.info(
                    "Kinesis client of the {} for {} started in {} ms on {}",
                    user,
                    settings.streamArn(),
                    (System.nanoTime() - start) / 1_000_000,
                    Thread.currentThread().getName());
        }
        return client;
    }

    @Override
    public synchronized void close() {
        if (client != null) {
            client.close();
        }
    }
}
