package dev.snapshots.sink;

import dev.snapshots.progress.VersionIdentity;
import dev.snapshots.store.ObjectStore;
import dev.snapshots.store.StoreConformance;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.io.UncheckedIOException;
import java.util.Optional;
import org.apache.flink.metrics.Counter;
import org.apache.flink.runtime.execution.SuppressRestartsException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What the guarantee rests on, checked before anything is published: a store that refuses a second
 * create-if-absent ({@link StoreConformance}) and one identity per job version ({@link
 * VersionIdentity}). Run as the topology is built, so a refusal stops a submission before it
 * starts, and by every writer as it opens, for a job built some other way or restored from a
 * savepoint under changed settings. A writer that restores a checkpoint of its own run skips the
 * store's probe: its run's writers proved that store before that checkpoint could be taken. It
 * reads the identity only if that checkpoint does not carry what the identity told its run (the
 * fingerprint scheme; a writer state of version 1), see {@link SnapshotWriter}.
 *
 * <p>Only a writer records a job version's identity. A build may be one that never runs: the deploy
 * tool's check before it stops the running version, a JobManager's plan, a submission refused
 * afterwards. Recorded there, a mistyped setting would pin its version for good; so a build
 * compares with a recorded identity and records none ({@link VersionIdentity#verify}).
 */
final class Preflight {
    private static final Logger LOG = LoggerFactory.getLogger(Preflight.class);

    private Preflight() {}

    /**
     * @param probeStore whether to prove the store's conformance here: not when the caller knows it
     *     proven for this run (see {@link SnapshotWriter})
     * @return {@code config}, with the window length its job version recorded when it had none (if
     *     the version recorded none either, the rows give it, and the identity is recorded with the
     *     first part; until then it is compared on everything else), and the fingerprint scheme the
     *     version recorded, or is recorded with
     */
    static <T> SnapshotSinkConfig<T> check(
            SnapshotSinkConfig<T> config, int maxParallelism, ObjectStore store, boolean probeStore)
            throws IOException {
        if (probeStore) {
            StoreConformance.require(store);
        }
        SnapshotSinkConfig<T> known = config;
        if (!config.windowLengthKnown()) {
            Optional<VersionIdentity> recorded =
                    VersionIdentity.read(
                            store, config.kind(), config.pipeline(), config.jobVersion());
            if (recorded.isPresent()) {
                known = config.withWindowLength(recorded.get().windowLengthMillis());
            }
        }
        VersionIdentity identity = known.versionIdentity(maxParallelism);
        VersionIdentity inForce =
                known.windowLengthKnown() ? identity.require(store) : identity.verify(store);
        return known.withFingerprintScheme(inForce.fingerprintScheme());
    }

    /** As {@link #check}, recording no identity: for a job that is being built, not run. */
    static void verify(SnapshotSinkConfig<?> config, int maxParallelism, ObjectStore store)
            throws IOException {
        StoreConformance.require(store);
        config.versionIdentity(maxParallelism).verify(store);
    }

    /**
     * Where the job is built: a refusal throws; a store out of reach from here (a client outside
     * the job's network) is left to the writers.
     */
    static void atBuild(SnapshotSinkConfig<?> config, int maxParallelism) {
        try (ObjectStore store = config.store().open()) {
            verify(config, maxParallelism, store);
        } catch (IOException | UncheckedIOException e) {
            LOG.warn(
                    "Could not check {} before building the job ({}); its writers check it before"
                            + " they publish",
                    config.store(),
                    e.toString());
        }
    }

    /**
     * In a writer, with the sink's retries for a store that is only failing for now. A refusal
     * fails the job without restarts, which could only repeat it.
     *
     * @return as {@link #check}
     */
    static <T> SnapshotSinkConfig<T> inWriter(
            SnapshotSinkConfig<T> config,
            int maxParallelism,
            ObjectStore store,
            Counter retries,
            boolean probeStore)
            throws IOException {
        try {
            return config.backoff()
                    .run(
                            retries,
                            "check " + store.describe() + " before publishing",
                            () -> check(config, maxParallelism, store, probeStore));
        } catch (StoreConformance.NonConformingStoreException
                | VersionIdentity.IdentityMismatchException e) {
            throw new SuppressRestartsException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InterruptedIOException("interrupted while checking " + store.describe());
        }
    }
}
