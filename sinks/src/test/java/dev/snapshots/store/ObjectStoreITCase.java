package dev.snapshots.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.snapshots.testutils.StoreKind;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The store contract the commit protocol rests on, against S3Proxy over HTTP and the local
 * filesystem: create-if-absent has exactly one winner under contention, for plain writes and for
 * promoted staged uploads; an abort never harms the winner; compare-and-swap only moves forward.
 */
class ObjectStoreITCase {
    private static final int ROUNDS = 10;
    private static final int WRITERS = 20;

    @ParameterizedTest(name = "{0}")
    @EnumSource(value = StoreKind.class, names = {"S3_INLINE", "FILESYSTEM"})
    void racingCreateIfAbsentWritersHaveExactlyOneWinnerEveryRound(StoreKind kind) throws Exception {
        try (ObjectStore store = kind.fresh().open()) {
            for (int round = 0; round < ROUNDS; round++) {
                String key = "race/put-" + round + ".bin";
                List<Boolean> won = race(i -> store.putIfAbsent(key, bytes("writer-" + i), Map.of("writer", "w" + i)));

                assertThat(won.stream().filter(w -> w).count()).as("winners in round %s", round).isEqualTo(1);
                int winner = won.indexOf(true);
                assertThat(store.get(key).orElseThrow().content()).isEqualTo(bytes("writer-" + winner));
                assertThat(store.head(key).orElseThrow().metadata()).containsEntry("writer", "w" + winner);
            }
        }
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(value = StoreKind.class, names = {"S3_INLINE", "FILESYSTEM"})
    void racingPromotionsOfStagedContentHaveOneWinnerAndTheLosersAbortsLeaveItIntact(StoreKind kind) throws Exception {
        try (ObjectStore store = kind.fresh().open()) {
            for (int round = 0; round < ROUNDS; round++) {
                String key = "race/staged-" + round + ".bin";
                List<StagedObject> staged = new ArrayList<>();
                for (int i = 0; i < WRITERS; i++) {
                    staged.add(store.stage(key, bytes("staged-" + i), Map.of("writer", "w" + i)));
                }
                assertThat(store.head(key)).as("staged content is invisible").isEmpty();

                List<Boolean> won = race(i -> store.promote(staged.get(i)));
                for (int i = 0; i < WRITERS; i++) {
                    if (!won.get(i)) {
                        store.abort(staged.get(i));
                    }
                }

                assertThat(won.stream().filter(w -> w).count()).as("winners in round %s", round).isEqualTo(1);
                int winner = won.indexOf(true);
                assertThat(store.get(key).orElseThrow().content()).isEqualTo(bytes("staged-" + winner));
                assertThat(store.head(key).orElseThrow().metadata()).containsEntry("writer", "w" + winner);
            }
            List<String> listed = new ArrayList<>();
            store.list("race/", o -> listed.add(o.key()));
            assertThat(listed).as("only published objects are listed").hasSize(ROUNDS);
        }
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(value = StoreKind.class, names = {"S3_INLINE", "FILESYSTEM"})
    void promotingAnAbortedStageReportsItGoneAndPublishesNothing(StoreKind kind) throws Exception {
        try (ObjectStore store = kind.fresh().open()) {
            StagedObject staged = store.stage("gone/k.bin", bytes("x"), Map.of());
            store.abort(staged);
            store.abort(staged); // twice is fine

            assertThatThrownBy(() -> store.promote(staged))
                    .isInstanceOfSatisfying(StoreException.class, e -> assertThat(e.kind()).isEqualTo(StoreException.Kind.STAGED_GONE));
            assertThat(store.head("gone/k.bin")).isEmpty();
        }
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(value = StoreKind.class, names = {"S3_INLINE", "FILESYSTEM"})
    void compareAndSwapSucceedsOnlyAgainstTheVersionRead(StoreKind kind) throws Exception {
        try (ObjectStore store = kind.fresh().open()) {
            assertThat(store.compareAndSwap("p.json", bytes("1"), Optional.empty())).isTrue();
            assertThat(store.compareAndSwap("p.json", bytes("1b"), Optional.empty())).as("create when it exists").isFalse();
            String v1 = store.get("p.json").orElseThrow().version();

            assertThat(store.compareAndSwap("p.json", bytes("2"), Optional.of(v1))).isTrue();
            assertThat(store.compareAndSwap("p.json", bytes("3"), Optional.of(v1))).as("stale version").isFalse();
            assertThat(new String(store.get("p.json").orElseThrow().content(), StandardCharsets.UTF_8)).isEqualTo("2");
        }
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(value = StoreKind.class, names = {"S3_INLINE", "FILESYSTEM"})
    void listingWalksEveryPageInKeyOrder(StoreKind kind) throws Exception {
        try (ObjectStore store = kind.fresh().open()) {
            int objects = 1_050; // more than one 1,000-key page of ListObjectsV2
            ExecutorService pool = Executors.newFixedThreadPool(8);
            List<Future<Boolean>> puts = new ArrayList<>();
            for (int i = 0; i < objects; i++) {
                String key = String.format("many/%05d.bin", i);
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

    private static List<Boolean> race(Writer writer) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(WRITERS);
        CyclicBarrier start = new CyclicBarrier(WRITERS);
        try {
            List<Future<Boolean>> results = new ArrayList<>();
            for (int i = 0; i < WRITERS; i++) {
                int id = i;
                results.add(pool.submit((Callable<Boolean>) () -> {
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
