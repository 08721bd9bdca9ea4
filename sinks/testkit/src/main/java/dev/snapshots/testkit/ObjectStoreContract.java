package dev.snapshots.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.snapshots.store.Chunks;
import dev.snapshots.store.ObjectStore;
import dev.snapshots.store.StagedObject;
import dev.snapshots.store.StoreException;
import dev.snapshots.store.StoreSpec;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.Callable;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.apache.flink.annotation.PublicEvolving;
import org.junit.jupiter.api.Test;

/**
 * The contract every {@link ObjectStore} meets, and the commit protocol rests on: create-if-absent
 * has exactly one winner under contention, for plain writes and for promoted staged content; an
 * abort never harms the winner; compare-and-swap only moves forward; listings walk every page in
 * key order and name directories one level down. A store module's tests extend it with a fresh
 * store of their kind: that is what makes a new store (GCS, say) one module and one test class.
 */
@PublicEvolving
public abstract class ObjectStoreContract {
    private static final int ROUNDS = 10;
    private static final int WRITERS = 20;

    /** A new, empty store of the kind under test. */
    protected abstract StoreSpec freshStore();

    @Test
    void racingCreateIfAbsentWritersHaveExactlyOneWinnerEveryRound() throws Exception {
        try (ObjectStore store = freshStore().open()) {
            for (int round = 0; round < ROUNDS; round++) {
                String key = "race/put-" + round + ".bin";
                List<Boolean> won =
                        race(
                                i ->
                                        store.putIfAbsent(
                                                key,
                                                bytes("writer-" + i),
                                                Map.of("writer", "w" + i)));

                assertThat(won.stream().filter(w -> w).count())
                        .as("winners in round %s", round)
                        .isEqualTo(1);
                int winner = won.indexOf(true);
                assertThat(store.get(key).orElseThrow().content())
                        .isEqualTo(bytes("writer-" + winner));
                assertThat(store.head(key).orElseThrow().metadata())
                        .containsEntry("writer", "w" + winner);
            }
        }
    }

    @Test
    void racingPromotionsOfStagedContentHaveOneWinnerAndTheLosersAbortsLeaveItIntact()
            throws Exception {
        try (ObjectStore store = freshStore().open()) {
            for (int round = 0; round < ROUNDS; round++) {
                String key = "race/staged-" + round + ".bin";
                List<StagedObject> staged = new ArrayList<>();
                for (int i = 0; i < WRITERS; i++) {
                    staged.add(
                            store.stage(
                                    key,
                                    Chunks.of(bytes("staged-" + i)),
                                    Map.of("writer", "w" + i)));
                }
                assertThat(store.head(key)).as("staged content is invisible").isEmpty();

                List<Boolean> won = race(i -> store.promote(staged.get(i)));
                for (int i = 0; i < WRITERS; i++) {
                    if (!won.get(i)) {
                        store.abort(staged.get(i));
                    }
                }

                assertThat(won.stream().filter(w -> w).count())
                        .as("winners in round %s", round)
                        .isEqualTo(1);
                int winner = won.indexOf(true);
                assertThat(store.get(key).orElseThrow().content())
                        .isEqualTo(bytes("staged-" + winner));
                assertThat(store.head(key).orElseThrow().metadata())
                        .containsEntry("writer", "w" + winner);
            }
            List<String> listed = new ArrayList<>();
            store.list("race/", o -> listed.add(o.key()));
            assertThat(listed).as("only published objects are listed").hasSize(ROUNDS);
        }
    }

    /**
     * A writer builds every part in one buffer: the store reads a part of several chunks whole
     * while staging it, and keeps nothing of the buffer once it returns.
     */
    @Test
    void stagedContentIsReadWholeBeforeStagingReturns() throws Exception {
        byte[] part = new byte[200_000];
        new Random(7).nextBytes(part);
        Chunks buffer = Chunks.of(part);
        try (ObjectStore store = freshStore().open()) {
            StagedObject staged = store.stage("reuse/part.bin", buffer, Map.of());
            buffer.reset();
            buffer.write(bytes("the next part"), 0, 13);
            byte[] overwritten = new byte[150_000];
            buffer.write(overwritten, 0, overwritten.length);

            assertThat(store.promote(staged)).isTrue();
            assertThat(store.get("reuse/part.bin").orElseThrow().content()).isEqualTo(part);
        }
    }

    @Test
    void promotingAnAbortedStageReportsItGoneAndPublishesNothing() throws Exception {
        try (ObjectStore store = freshStore().open()) {
            StagedObject staged = store.stage("gone/k.bin", Chunks.of(bytes("x")), Map.of());
            store.abort(staged);
            store.abort(staged); // twice is fine

            assertThatThrownBy(() -> store.promote(staged))
                    .isInstanceOfSatisfying(
                            StoreException.class,
                            e -> assertThat(e.kind()).isEqualTo(StoreException.Kind.STAGED_GONE));
            assertThat(store.head("gone/k.bin")).isEmpty();
        }
    }

    @Test
    void compareAndSwapSucceedsOnlyAgainstTheVersionRead() throws Exception {
        try (ObjectStore store = freshStore().open()) {
            Optional<String> created = store.compareAndSwap("p.json", bytes("1"), Optional.empty());
            assertThat(created).isPresent();
            assertThat(store.compareAndSwap("p.json", bytes("1b"), Optional.empty()))
                    .as("create when it exists")
                    .isEmpty();
            String v1 = store.get("p.json").orElseThrow().version();
            assertThat(created)
                    .as("the version a swap returns is the one a read gives")
                    .hasValue(v1);

            Optional<String> v2 = store.compareAndSwap("p.json", bytes("2"), Optional.of(v1));
            assertThat(v2).isPresent();
            assertThat(store.compareAndSwap("p.json", bytes("3"), Optional.of(v1)))
                    .as("stale version")
                    .isEmpty();
            assertThat(
                            new String(
                                    store.get("p.json").orElseThrow().content(),
                                    StandardCharsets.UTF_8))
                    .isEqualTo("2");
            assertThat(store.compareAndSwap("p.json", bytes("4"), v2))
                    .as("a swap from the version the last swap returned, without a read")
                    .isPresent();
        }
    }

    @Test
    void listingWalksEveryPageInKeyOrder() throws Exception {
        try (ObjectStore store = freshStore().open()) {
            int objects = 1_050; // more than one 1,000-key page of ListObjectsV2
            ExecutorService pool = Executors.newFixedThreadPool(8);
            List<Future<Boolean>> puts = new ArrayList<>();
            for (int i = 0; i < objects; i++) {
                String key = String.format(Locale.ROOT, "many/%05d.bin", i);
                puts.add(pool.submit(() -> store.putIfAbsent(key, bytes("x"), Map.of())));
            }
            for (Future<Boolean> f : puts) {
                assertThat(f.get()).isTrue();
            }
            pool.shutdown();
            List<String> listed = new ArrayList<>();
            store.list("many/", o -> listed.add(o.key()));
            assertThat(listed).hasSize(objects).isSorted();
        }
    }

    @Test
    void directoriesAreListedOneLevelDownAndMissingKeysReadAsEmpty() throws Exception {
        try (ObjectStore store = freshStore().open()) {
            for (String key :
                    List.of("a/b/x.bin", "a/b/y.bin", "a/c/z.bin", "a/top.bin", "d/e.bin")) {
                assertThat(store.putIfAbsent(key, bytes(key), Map.of())).isTrue();
            }
            List<String> directories = new ArrayList<>();
            store.listDirectories("a/", directories::add);
            assertThat(directories).containsExactly("a/b/", "a/c/");

            assertThat(store.get("a/missing.bin")).isEmpty();
            assertThat(store.head("a/missing.bin")).isEmpty();
            store.delete("a/missing.bin"); // deleting what is not there is fine
            store.delete("a/top.bin");
            assertThat(store.get("a/top.bin")).isEmpty();
        }
    }

    private static List<Boolean> race(Writer writer) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(WRITERS);
        CyclicBarrier start = new CyclicBarrier(WRITERS);
        try {
            List<Future<Boolean>> results = new ArrayList<>();
            for (int i = 0; i < WRITERS; i++) {
                int id = i;
                results.add(
                        pool.submit(
                                (Callable<Boolean>)
                                        () -> {
                                            start.await();
                                            return writer.write(id);
                                        }));
            }
            List<Boolean> won = new ArrayList<>();
            for (Future<Boolean> f : results) {
                won.add(f.get());
            }
            return won;
        } finally {
            pool.shutdownNow();
        }
    }

    @FunctionalInterface
    private interface Writer {
        boolean write(int writer) throws Exception;
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
