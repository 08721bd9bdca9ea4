package dev.snapshots.sink;

import dev.snapshots.store.StoreException;
import java.io.IOException;
import java.io.Serializable;
import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;
import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.metrics.Counter;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Bounded retries with exponential backoff and full jitter. The committer retries inside {@code
 * commit()} because Flink 1.20's {@code retryLater()} re-calls it in a tight loop (FLINK-36455);
 * once attempts run out the failure goes to Flink, which restarts the job and re-commits from the
 * checkpoint, so nothing is lost.
 */
@PublicEvolving
public final class Backoff implements Serializable {
    private static final long serialVersionUID = 1L;

    private static final Logger LOG = LoggerFactory.getLogger(Backoff.class);

    public static final Backoff DEFAULT =
            new Backoff(8, Duration.ofMillis(100), Duration.ofSeconds(5));

    private final int maxAttempts;
    private final long initialMillis;
    private final long maxMillis;

    public Backoff(int maxAttempts, Duration initial, Duration max) {
        if (maxAttempts < 1) {
            throw new IllegalArgumentException("max attempts must be >= 1, got " + maxAttempts);
        }
        if (initial.isNegative() || max.compareTo(initial) < 0) {
            throw new IllegalArgumentException(
                    "backoff needs 0 <= initial <= max, got " + initial + " and " + max);
        }
        this.maxAttempts = maxAttempts;
        this.initialMillis = initial.toMillis();
        this.maxMillis = max.toMillis();
    }

    public int maxAttempts() {
        return maxAttempts;
    }

    /**
     * Sleeps before attempt {@code attempt + 1}: a random time up to min(max, initial * 2^attempt).
     */
    public void pause(int attempt) throws InterruptedException {
        long ceiling = Math.min(maxMillis, initialMillis << Math.min(attempt, 20));
        Thread.sleep(ThreadLocalRandom.current().nextLong(ceiling / 2, ceiling + 1));
    }

    /**
     * Runs {@code call}, retrying retryable store failures; counts and logs each retry, and logs
     * once, with what to check, when it gives up.
     */
    public <T> T run(Counter retries, String what, StoreCall<T> call)
            throws IOException, InterruptedException {
        for (int attempt = 1; ; attempt++) {
            try {
                return call.run();
            } catch (StoreException e) {
                if (!e.isRetryable() || attempt >= maxAttempts) {
                    LOG.error(
                            "Giving up on {} after {} attempts ({}); the job will restart and redo it from the last"
                                    + " checkpoint. Check the store's health and permissions.",
                            what,
                            attempt,
                            e.kind(),
                            e);
                    throw e;
                }
                retries.inc();
                LOG.warn(
                        "Attempt {} to {} failed ({}), retrying: {}",
                        attempt,
                        what,
                        e.kind(),
                        e.getMessage());
                pause(attempt);
            }
        }
    }

    @FunctionalInterface
    public interface StoreCall<T> {
        T run() throws IOException;
    }

    @Override
    public String toString() {
        return maxAttempts + " attempts, backoff " + initialMillis + ".." + maxMillis + " ms";
    }
}
