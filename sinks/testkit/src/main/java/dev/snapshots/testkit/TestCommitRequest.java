package dev.snapshots.testkit;

import org.apache.flink.api.connector.sink2.Committer.CommitRequest;

/**
 * A commit request as Flink hands it to a committer, recording what the committer signalled: for
 * the committer tests and the benchmark's commit shapes, which drive a committer without Flink.
 */
public final class TestCommitRequest<T> implements CommitRequest<T> {
    private final T committable;
    public boolean alreadyCommitted;
    public Throwable failure;
    public boolean retryLater;

    public TestCommitRequest(T committable) {
        this.committable = committable;
    }

    @Override
    public T getCommittable() {
        return committable;
    }

    @Override
    public int getNumberOfRetries() {
        return 0;
    }

    @Override
    public void signalFailedWithKnownReason(Throwable t) {
        failure = t;
    }

    @Override
    public void signalFailedWithUnknownReason(Throwable t) {
        failure = t;
    }

    @Override
    public void retryLater() {
        retryLater = true;
    }

    @Override
    public void updateAndRetryLater(T committable) {
        retryLater = true;
    }

    @Override
    public void signalAlreadyCommitted() {
        alreadyCommitted = true;
    }
}
