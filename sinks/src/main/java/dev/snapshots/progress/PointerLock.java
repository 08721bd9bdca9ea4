package dev.snapshots.progress;

import dev.snapshots.store.ObjectStore;
import dev.snapshots.store.StoreException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;

/**
 * A mutual-exclusion lock made of one object created with create-if-absent. A holder that died
 * leaves it behind; after {@link #STALE} it is broken. Holding it only orders updates of the
 * completion pointer: a lock broken too early costs at most one swap that the pointer's own
 * compare-and-swap then rejects (on stores where that is atomic) or a mark recorded late.
 */
final class PointerLock implements AutoCloseable {
    static final Duration STALE = Duration.ofSeconds(30);
    private static final Duration WAIT = Duration.ofSeconds(90);

    private final ObjectStore store;
    private final String key;

    private PointerLock(ObjectStore store, String key) {
        this.store = store;
        this.key = key;
    }

    static PointerLock acquire(ObjectStore store, String key) throws IOException {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (System.nanoTime() < deadline) {
            byte[] stamp = Long.toString(System.currentTimeMillis()).getBytes(StandardCharsets.UTF_8);
            if (store.putIfAbsent(key, stamp, Map.of())) {
                return new PointerLock(store, key);
            }
            Optional<ObjectStore.VersionedContent> held = store.get(key);
            if (held.isPresent() && takenAt(held.get().content()) < System.currentTimeMillis() - STALE.toMillis()) {
                store.delete(key); // its holder died mid-update
                continue;
            }
            try {
                Thread.sleep(ThreadLocalRandom.current().nextLong(2, 20));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new StoreException(StoreException.Kind.TRANSIENT, "interrupted waiting for " + key, e);
            }
        }
        throw new StoreException(StoreException.Kind.TRANSIENT, key + " stayed locked for " + WAIT.toSeconds() + " s", null);
    }

    private static long takenAt(byte[] content) {
        try {
            return Long.parseLong(new String(content, StandardCharsets.UTF_8).trim());
        } catch (NumberFormatException e) {
            return 0; // not ours to understand: old enough to break
        }
    }

    @Override
    public void close() throws IOException {
        store.delete(key);
    }
}
