package dev.snapshots.testkit;

import dev.snapshots.store.ObjectStore;
import dev.snapshots.store.StoreSpec;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

/**
 * What an earlier release left in its store beside a savepoint it took: its job versions' identity
 * records ({@code _identity.json}). A savepoint fixture restored into an empty store would find a
 * job version that looks new, and new versions get this release's fingerprint scheme; in production
 * the store keeps what the earlier release recorded, and its versions keep their scheme. So a
 * fixture holds those records under {@code store/}, by key, and a test puts them into its store
 * before it restores.
 */
public final class EarlierStore {
    private EarlierStore() {}

    /** Puts every file under {@code fixture} into {@code store}, keyed by its relative path. */
    public static void putInto(Path fixture, StoreSpec store) throws IOException {
        List<Path> files;
        try (Stream<Path> walk = Files.walk(fixture)) {
            files = walk.filter(Files::isRegularFile).toList();
        }
        if (files.isEmpty()) {
            throw new IOException("no records of the earlier release under " + fixture);
        }
        try (ObjectStore s = store.open()) {
            for (Path f : files) {
                String key = fixture.relativize(f).toString().replace('\\', '/');
                s.putIfAbsent(key, Files.readAllBytes(f), Map.of());
            }
        }
    }
}
