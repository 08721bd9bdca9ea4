package dev.snapshots.store;

import java.util.List;
import java.util.Objects;

/**
 * Content uploaded where nobody reads it, and what it takes to publish or abandon it.
 *
 * @param key the key it will be published at
 * @param handle the S3 multipart upload id, or the temp file name beside the target
 * @param partETags the S3 ETags of the uploaded parts, in order; empty for the filesystem
 */
public record StagedObject(String key, String handle, List<String> partETags) {
    public StagedObject {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(handle, "handle");
        partETags = List.copyOf(partETags);
    }
}
