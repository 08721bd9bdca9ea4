package dev.snapshots.iceberg;

import dev.snapshots.key.ObjectKeys;
import dev.snapshots.store.Chunks;
import dev.snapshots.store.LocalObjectStore;
import dev.snapshots.store.ObjectStore;
import dev.snapshots.store.ObjectStoreFactory;
import dev.snapshots.store.StagedObject;
import dev.snapshots.store.StoreSpec;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Consumer;

/**
 * {@code lagging-file:///dir}: the directory as the local store, except that each part of bucket 0
 * lands {@link #LAG} after the committer publishes it, as one writer's upload can trail another's
 * on S3. A reader of the same directory through {@code file://} sees every window for that long
 * with some of its parts, not only for the instant between two local hard links.
 */
public final class LaggingStoreFactory implements ObjectStoreFactory {
    static final Duration LAG = Duration.ofMillis(1_500);

    private static final String SCHEME = "lagging-file";

    /** The store a job writes {@code dir} through. */
    static StoreSpec over(Path dir) {
        return StoreSpec.parse(SCHEME + "://" + dir.toAbsolutePath().toUri().getPath());
    }

    @Override
    public String scheme() {
        return SCHEME;
    }

    @Override
    public void validate(URI uri) {
        if (uri.getPath() == null || uri.getPath().isEmpty()) {
            throw new IllegalArgumentException("store URI '" + uri + "' needs an absolute path");
        }
    }

    @Override
    public Set<String> options() {
        return Set.of();
    }

    @Override
    public ObjectStore open(StoreSpec spec) {
        return new LaggingStore(new LocalObjectStore(Path.of(spec.uri().getPath())));
    }

    private record LaggingStore(LocalObjectStore local) implements ObjectStore {
        private static void lag(String key) throws IOException {
            if (ObjectKeys.parse(key).filter(part -> part.bucket() == 0).isPresent()) {
                try {
                    Thread.sleep(LAG.toMillis());
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new InterruptedIOException("interrupted before publishing " + key);
                }
            }
        }

        @Override
        public StagedObject stage(String key, Chunks content, Map<String, String> metadata)
                throws IOException {
            return local.stage(key, content, metadata);
        }

        @Override
        public boolean promote(StagedObject staged) throws IOException {
            lag(staged.key());
            return local.promote(staged);
        }

        @Override
        public void abort(StagedObject staged) throws IOException {
            local.abort(staged);
        }

        @Override
        public boolean putIfAbsent(String key, byte[] content, Map<String, String> metadata)
                throws IOException {
            lag(key);
            return local.putIfAbsent(key, content, metadata);
        }

        @Override
        public Optional<String> compareAndSwap(
                String key, byte[] content, Optional<String> expectedVersion) throws IOException {
            return local.compareAndSwap(key, content, expectedVersion);
        }

        @Override
        public Optional<ObjectInfo> head(String key) throws IOException {
            return local.head(key);
        }

        @Override
        public void delete(String key) throws IOException {
            local.delete(key);
        }

        @Override
        public Optional<VersionedContent> get(String key) throws IOException {
            return local.get(key);
        }

        @Override
        public void list(String prefix, Consumer<ObjectInfo> consumer) throws IOException {
            local.list(prefix, consumer);
        }

        @Override
        public void listDirectories(String prefix, Consumer<String> consumer) throws IOException {
            local.listDirectories(prefix, consumer);
        }

        @Override
        public void listStaged(String prefix, Consumer<StagedInfo> consumer) throws IOException {
            local.listStaged(prefix, consumer);
        }

        @Override
        public String describe() {
            return "lagging " + local.describe();
        }

        @Override
        public void close() {
            local.close();
        }
    }
}
