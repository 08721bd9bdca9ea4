package dev.snapshots.store;

import java.util.List;
import java.util.Objects;
import org.apache.flink.annotation.PublicEvolving;

/**
 * Content uploaded where nobody reads it, and what it takes to publish or abandon it.
 *
 * @param key the key it will be published at
 * @param handle the S3 multipart upload id, or the temp file name beside the target
 * @param partETags the S3 ETags of the uploaded parts, in order; empty for the filesystem
 * @param copy where a durable copy of the content waits (S3: an object under {@code _staging/}),
 *     from which an upload that vanished is started again; empty where the handle itself is durable
 *     (a temp file), and for parts staged before copies existed
 */
@PublicEvolving
public record StagedObject(String key, String handle, List<String> partETags, String copy) {
    public StagedObject {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(handle, "handle");
        Objects.requireNonNull(copy, "copy");
        partETags = List.copyOf(partETags);
    }

    public StagedObject(String key, String handle, List<String> partETags) {
        this(key, handle, partETags, "");
    }
}
