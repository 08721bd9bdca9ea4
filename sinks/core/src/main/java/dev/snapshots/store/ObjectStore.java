package dev.snapshots.store;

import java.io.IOException;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import java.util.function.Consumer;
import org.apache.flink.annotation.PublicEvolving;

/**
 * The few operations the commit protocol needs from an object store. Two real implementations:
 * {@code S3ObjectStore} (conditional writes, module snapshots-sink-s3) and {@link LocalObjectStore}
 * (hard links).
 *
 * <p>Failures are {@link StoreException}s whose {@link StoreException.Kind} tells the caller
 * whether to retry, re-evaluate or give up. Implementations never retry by themselves: the caller
 * owns backoff, so every retry is counted once.
 */
@PublicEvolving
public interface ObjectStore extends AutoCloseable {

    /**
     * Uploads content where no reader looks, ready to be published at {@code key}. The content is
     * the caller's buffer: read it (as often as needed) before returning, and keep no reference.
     */
    StagedObject stage(String key, Chunks content, Map<String, String> metadata) throws IOException;

    /**
     * Publishes staged content at its key if no object is there.
     *
     * @return true if this call created the object, false if an object already existed
     * @throws StoreException of kind {@code STAGED_GONE} if the staged upload no longer exists
     */
    boolean promote(StagedObject staged) throws IOException;

    /** Removes staged content that will not be published. Absent staging is not an error. */
    void abort(StagedObject staged) throws IOException;

    /** Writes the object only if no object exists at the key; false if one did. */
    boolean putIfAbsent(String key, byte[] content, Map<String, String> metadata)
            throws IOException;

    /**
     * Replaces the object only if its current version is {@code expectedVersion} (or, when that is
     * empty, only if there is none).
     *
     * @return the version the object has now, what the next swap expects without reading it again;
     *     empty if the object changed in between (someone else won the swap)
     */
    Optional<String> compareAndSwap(String key, byte[] content, Optional<String> expectedVersion)
            throws IOException;

    Optional<ObjectInfo> head(String key) throws IOException;

    /**
     * Removes a published object; an absent one is not an error. Used for locks, never for parts.
     */
    void delete(String key) throws IOException;

    /** Content and the version a later {@link #compareAndSwap} expects. */
    Optional<VersionedContent> get(String key) throws IOException;

    /** Every published object whose key starts with {@code prefix}, in key order, page by page. */
    void list(String prefix, Consumer<ObjectInfo> consumer) throws IOException;

    /**
     * The "directories" right below {@code prefix} (which ends in '/' or is empty), each ending in
     * '/': keys that continue past one more '/'. What lets a reader walk to the windows it needs
     * instead of listing a whole history.
     */
    void listDirectories(String prefix, Consumer<String> consumer) throws IOException;

    /**
     * Staged content never promoted or aborted (a writer died between staging and its checkpoint).
     */
    void listStaged(String prefix, Consumer<StagedInfo> consumer) throws IOException;

    /** Where this store points, for logs and reports. */
    String describe();

    @Override
    void close();

    /** What a reader of the store sees of one object. */
    record ObjectInfo(String key, long size, String version, Map<String, String> metadata) {}

    record VersionedContent(byte[] content, String version) {}

    /** A staged upload or temp file, and when it was started. */
    record StagedInfo(String key, String handle, Instant started) {}
}
