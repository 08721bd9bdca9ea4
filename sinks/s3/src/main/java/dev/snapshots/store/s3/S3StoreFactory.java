package dev.snapshots.store.s3;

import dev.snapshots.store.ObjectStore;
import dev.snapshots.store.ObjectStoreFactory;
import dev.snapshots.store.StoreSpec;
import java.net.URI;
import java.util.Set;
import org.apache.flink.annotation.PublicEvolving;

/**
 * {@code s3://bucket/prefix}: S3, credentials from the default chain. Options: {@code endpoint} for
 * an S3-compatible server such as {@code http://127.0.0.1:9000} (path-style access is then used),
 * {@code region}.
 */
@PublicEvolving
public final class S3StoreFactory implements ObjectStoreFactory {
    @Override
    public String scheme() {
        return "s3";
    }

    @Override
    public void validate(URI uri) {
        if (uri.getHost() == null || uri.getHost().isEmpty()) {
            throw new IllegalArgumentException(
                    "store URI '" + uri + "' needs a bucket, e.g. s3://my-bucket/snapshots");
        }
    }

    @Override
    public Set<String> options() {
        return Set.of(StoreSpec.ENDPOINT, StoreSpec.REGION);
    }

    @Override
    public ObjectStore open(StoreSpec spec) {
        return new S3ObjectStore(spec);
    }
}
