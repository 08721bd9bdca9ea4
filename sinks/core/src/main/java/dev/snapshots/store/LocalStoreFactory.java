package dev.snapshots.store;

import java.net.URI;
import java.nio.file.Path;
import java.util.Set;
import org.apache.flink.annotation.PublicEvolving;

/** {@code file:///var/snapshots}: the local filesystem, the embedded default. */
@PublicEvolving
public final class LocalStoreFactory implements ObjectStoreFactory {
    @Override
    public String scheme() {
        return "file";
    }

    @Override
    public void validate(URI uri) {
        if (uri.getPath() == null || uri.getPath().isEmpty()) {
            throw new IllegalArgumentException(
                    "store URI '" + uri + "' needs an absolute path, e.g. file:///tmp/snapshots");
        }
    }

    @Override
    public Set<String> options() {
        return Set.of();
    }

    @Override
    public ObjectStore open(StoreSpec spec) {
        return new LocalObjectStore(Path.of(spec.uri()));
    }
}
