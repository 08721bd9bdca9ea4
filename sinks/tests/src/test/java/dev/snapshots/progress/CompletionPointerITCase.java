package dev.snapshots.progress;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.snapshots.key.ObjectKeys;
import dev.snapshots.key.PartKind;
import dev.snapshots.key.PartMetadata;
import dev.snapshots.key.WorkIdentity;
import dev.snapshots.progress.CompletionPointer.Mark;
import dev.snapshots.progress.CompletionPointer.PublishedPart;
import dev.snapshots.progress.CompletionPointer.Scope;
import dev.snapshots.store.ObjectStore;
import dev.snapshots.testkit.StoreKind;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The completion pointer against real stores: what a mark proves (one run, all its subtasks),
 * manifests for every window it passes, no lock and no regression under racing updates, and the
 * pointers it refuses to touch.
 */
class CompletionPointerITCase {
    private static final long W = 60_000;
    private static final Scope SCOPE = new Scope(PartKind.SNAPSHOT, "p", 1, 1, 4, W);

    @ParameterizedTest(name = "{0}")
    @EnumSource(
            value = StoreKind.class,
            names = {"S3_INLINE", "FILESYSTEM"})
    void aFinishedRunDoesNotLetALaterRunOfTheSameVersionSkipPastWindowsItHasNotPublished(
            StoreKind kind) throws Exception {
        try (ObjectStore store = kind.fresh().open()) {
            // Run A (two subtasks) published windows 0..2 and reached the end of its input.
            for (int s = 0; s < 2; s++) {
                CompletionPointer.record(
                        store,
                        SCOPE,
                        List.of(new Mark("run-a", 2, s, Long.MAX_VALUE, 3 * W)),
                        parts(0, 3, s));
            }
            assertThat(CompletionPointer.read(store, PartKind.SNAPSHOT, "p", 1)).contains(3 * W);
            // Run B: its subtask 0 has committed window 5, subtask 1 has not reached it.
            CompletionPointer.record(
                    store,
                    SCOPE,
                    List.of(new Mark("run-b", 2, 0, 6 * W - 1, 6 * W)),
                    parts(3, 6, 0));
            assertThat(CompletionPointer.read(store, PartKind.SNAPSHOT, "p", 1))
                    .as("run A's end of input says nothing of run B")
                    .contains(3 * W);
            CompletionPointer.record(
                    store,
                    SCOPE,
                    List.of(new Mark("run-b", 2, 1, 4 * W - 1, 4 * W)),
                    parts(3, 4, 1));
            assertThat(CompletionPointer.read(store, PartKind.SNAPSHOT, "p", 1)).contains(4 * W);
        }
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(
            value = StoreKind.class,
            names = {"S3_INLINE", "FILESYSTEM"})
    void everyWindowThePointerPassesGetsAManifestOfItsPartsAndOnlyThose(StoreKind kind)
            throws Exception {
        try (ObjectStore store = kind.fresh().open()) {
            List<PublishedPart> published = new ArrayList<>(parts(0, 3, 0));
            published.add(
                    new PublishedPart(
                            W,
                            3,
                            "p/v=1/x-3",
                            "fp-w1-b3",
                            7)); // window 1 has a part in bucket 3 too
            CompletionPointer.record(
                    store, SCOPE, List.of(new Mark("r", 1, 0, 3 * W - 1, 3 * W)), published);

            for (long w = 0; w < 3 * W; w += W) {
                WindowManifest.Manifest m = manifest(store, w).orElseThrow();
                assertThat(m.buckets()).isEqualTo(4);
                assertThat(m.parts().keySet())
                        .as("window %d", w / W)
                        .isEqualTo(w == W ? Set.of(0, 3) : Set.of(0));
                assertThat(m.parts().get(0).fingerprint()).isEqualTo("fp-" + w / W + "-0");
                assertThat(m.previousWindowStartMillis())
                        .isEqualTo(w == 0 ? OptionalLong.empty() : OptionalLong.of(w - W));
            }
            assertThat(store.get(ObjectKeys.manifestKey(PartKind.SNAPSHOT, "p", 1, 1, 3 * W)))
                    .as("not complete yet")
                    .isEmpty();
        }
    }

    /**
     * A catch-up passes many windows in one update: their manifests are written all at once, each
     * still naming the window before it, and if one cannot be written the pointer does not move
     * past any of them; the next update writes what is missing.
     */
    @ParameterizedTest(name = "{0}")
    @EnumSource(
            value = StoreKind.class,
            names = {"S3_INLINE", "FILESYSTEM"})
    void theManifestsOfOneUpdateAreWrittenAtOnceAndThePointerWaitsForAll(StoreKind kind)
            throws Exception {
        int windows = 24;
        ExecutorService writers = Executors.newFixedThreadPool(8);
        try (ObjectStore store = kind.fresh().open()) {
            List<PublishedPart> published = allBuckets(0, windows);
            Mark through = new Mark("r", 1, 0, windows * W - 1, windows * W);
            String refused = ObjectKeys.manifestKey(PartKind.SNAPSHOT, "p", 1, 1, 17 * W);
            AtomicLong inFlight = new AtomicLong();
            AtomicLong peak = new AtomicLong();
            ObjectStore failingOnce =
                    watched(
                            store,
                            (method, key) -> {
                                if (key.endsWith("_manifest.json")) {
                                    peak.accumulateAndGet(inFlight.incrementAndGet(), Math::max);
                                    Thread.sleep(20);
                                    inFlight.decrementAndGet();
                                    if (key.equals(refused)) {
                                        throw new java.io.IOException("injected: " + key);
                                    }
                                }
                            });

            assertThatThrownBy(
                            () ->
                                    CompletionPointer.record(
                                            failingOnce,
                                            SCOPE,
                                            List.of(through),
                                            published,
                                            writers))
                    .hasMessageContaining("injected");
            assertThat(CompletionPointer.read(store, PartKind.SNAPSHOT, "p", 1))
                    .as("not past a window without its manifest")
                    .isEmpty();
            assertThat(peak.get()).as("manifests in flight at once").isGreaterThan(1);

            CompletionPointer.record(store, SCOPE, List.of(through), published, writers);

            assertThat(CompletionPointer.read(store, PartKind.SNAPSHOT, "p", 1))
                    .contains(windows * W);
            for (int w = 0; w < windows; w++) {
                WindowManifest.Manifest m = manifest(store, w * W).orElseThrow();
                assertThat(m.parts().keySet()).as("window %d", w).containsExactly(0, 1, 2, 3);
                assertThat(m.previousWindowStartMillis())
                        .isEqualTo(w == 0 ? OptionalLong.empty() : OptionalLong.of((w - 1) * W));
            }
        } finally {
            writers.shutdownNow();
        }
    }

    /**
     * Dead letters are sparse: one in 1970 (a record before any watermark), the next decades later.
     * Only windows with parts get manifests, chained to each other, and the pointer's jump costs
     * two, not one per window in between.
     */
    @ParameterizedTest(name = "{0}")
    @EnumSource(
            value = StoreKind.class,
            names = {"S3_INLINE", "FILESYSTEM"})
    void aSparseOutputGetsManifestsForItsWindowsWithPartsOnly(StoreKind kind) throws Exception {
        try (ObjectStore store = kind.fresh().open()) {
            long later = 29_933_900L * W; // 2026-11-30
            CompletionPointer.record(
                    store,
                    SCOPE,
                    List.of(new Mark("r", 1, 0, later + W - 1, later + W)),
                    List.of(
                            new PublishedPart(0, 0, "p/v=1/early", "fp-early", 1),
                            new PublishedPart(later, 2, "p/v=1/late", "fp-late", 1)));

            assertThat(CompletionPointer.read(store, PartKind.SNAPSHOT, "p", 1))
                    .contains(later + W);
            List<String> manifests = new ArrayList<>();
            store.list(
                    "p/",
                    o -> ObjectKeys.parseManifest(o.key()).ifPresent(m -> manifests.add(o.key())));
            assertThat(manifests)
                    .containsExactlyInAnyOrder(
                            ObjectKeys.manifestKey(PartKind.SNAPSHOT, "p", 1, 1, 0),
                            ObjectKeys.manifestKey(PartKind.SNAPSHOT, "p", 1, 1, later));
            assertThat(
                            WindowManifest.read(
                                    store,
                                    manifests.stream()
                                            .filter(k -> k.contains("2026"))
                                            .findFirst()
                                            .orElseThrow()))
                    .hasValueSatisfying(m -> assertThat(m.previousWindowStartMillis()).hasValue(0));
            assertThat(CompletionPointer.state(store, PartKind.SNAPSHOT, "p", 1))
                    .hasValueSatisfying(
                            st -> {
                                assertThat(st.manifestsFromMillis()).isZero();
                                assertThat(st.lastManifestMillis()).isEqualTo(later);
                            });
        }
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(
            value = StoreKind.class,
            names = {"S3_INLINE", "FILESYSTEM"})
    void racingUpdatesWithoutALockNeverMoveThePointerBackAndAllLand(StoreKind kind)
            throws Exception {
        var spec = kind.fresh();
        int writers = 8;
        int steps = 30;
        AtomicBoolean done = new AtomicBoolean();
        AtomicLong lastSeen = new AtomicLong(Long.MIN_VALUE);
        List<String> regressions = new CopyOnWriteArrayList<>();
        ExecutorService pool = Executors.newFixedThreadPool(writers + 1);
        long started = System.nanoTime();
        try (ObjectStore reader = spec.open()) {
            Future<?> watcher =
                    pool.submit(
                            () -> {
                                while (!done.get()) {
                                    Optional<Long> now =
                                            CompletionPointer.read(
                                                    reader, PartKind.SNAPSHOT, "p", 1);
                                    if (now.isPresent()
                                            && now.get() < lastSeen.getAndSet(now.get())) {
                                        regressions.add("went back to " + now.get());
                                    }
                                }
                                return null;
                            });
            // Two runs of four subtasks each (an old and a new deployment), every subtask its own
            // committer.
            List<Future<?>> all = new ArrayList<>();
            for (int i = 0; i < writers; i++) {
                int subtask = i % 4;
                String run = i < 4 ? "old" : "new";
                all.add(
                        pool.submit(
                                () -> {
                                    try (ObjectStore store = spec.open()) {
                                        for (int w = 1; w <= steps; w++) {
                                            CompletionPointer.record(
                                                    store,
                                                    SCOPE,
                                                    List.of(
                                                            new Mark(
                                                                    run, 4, subtask, w * W - 1,
                                                                    w * W)),
                                                    List.of(
                                                            new PublishedPart(
                                                                    (w - 1) * W,
                                                                    subtask,
                                                                    "k-" + w + "-" + subtask,
                                                                    "fp",
                                                                    1)));
                                        }
                                    }
                                    return null;
                                }));
            }
            for (Future<?> f : all) {
                f.get();
            }
            done.set(true);
            watcher.get();
            System.out.printf(
                    "FIGURES pointer without a lock [%s]: %d writers x %d marks in %.1f s%n",
                    kind, writers, steps, (System.nanoTime() - started) / 1e9);
            assertThat(regressions).isEmpty();
            assertThat(CompletionPointer.read(reader, PartKind.SNAPSHOT, "p", 1))
                    .contains(steps * W);
            for (int w = 0; w < steps; w++) {
                assertThat(manifest(reader, w * W))
                        .as("manifest %d", w)
                        .hasValueSatisfying(m -> assertThat(m.parts()).hasSize(4));
            }
        } finally {
            pool.shutdownNow();
        }
    }

    /**
     * What a lock's staleness limit broke: an updater that stalls (a GC pause, a socket timeout)
     * between reading the pointer and writing it, while others move on. Without a lock it loses
     * nothing: its write finds its position taken, and it merges into what the others wrote.
     */
    @ParameterizedTest(name = "{0}")
    @EnumSource(
            value = StoreKind.class,
            names = {"S3_INLINE", "FILESYSTEM"})
    void anUpdaterStalledBetweenReadAndWriteMergesIntoWhatOthersWroteMeanwhile(StoreKind kind)
            throws Exception {
        var spec = kind.fresh();
        CountDownLatch stalled = new CountDownLatch(1);
        CountDownLatch othersDone = new CountDownLatch(1);
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try (ObjectStore store = spec.open();
                ObjectStore other = spec.open()) {
            AtomicBoolean first = new AtomicBoolean(true);
            ObjectStore stalling =
                    watched(
                            store,
                            (method, key) -> {
                                if (method.equals("putIfAbsent")
                                        && key.contains("/_progress/")
                                        && first.getAndSet(false)) {
                                    stalled.countDown();
                                    othersDone.await();
                                }
                            });
            Future<Optional<Long>> slow =
                    pool.submit(
                            () ->
                                    CompletionPointer.record(
                                            stalling,
                                            SCOPE,
                                            List.of(new Mark("r", 2, 0, 5 * W - 1, 5 * W)),
                                            parts(0, 5, 0)));
            stalled.await();
            for (int w = 1; w <= 6; w++) {
                CompletionPointer.record(
                        other,
                        SCOPE,
                        List.of(new Mark("r", 2, 1, w * W - 1, w * W)),
                        parts(w - 1, w, 1));
            }
            assertThat(CompletionPointer.read(other, PartKind.SNAPSHOT, "p", 1))
                    .as("subtask 0 has not landed")
                    .isEmpty();
            othersDone.countDown();

            assertThat(slow.get()).contains(5 * W);
            for (int w = 0; w < 5; w++) {
                assertThat(manifest(other, w * W))
                        .as("manifest %d", w)
                        .hasValueSatisfying(
                                m -> assertThat(m.parts().keySet()).containsExactly(0, 1));
            }
        } finally {
            pool.shutdownNow();
        }
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(
            value = StoreKind.class,
            names = {"S3_INLINE", "FILESYSTEM"})
    void aPointerItCannotReadIsLeftAloneAndSaysWhy(StoreKind kind) throws Exception {
        try (ObjectStore store = kind.fresh().open()) {
            String key = ObjectKeys.progressKey(PartKind.SNAPSHOT, "p", 1);
            for (String content :
                    List.of(
                            "{not json",
                            "{\"format\": 3, \"pipeline\": \"p\", \"jobVersion\": 1}")) {
                store.delete(key);
                store.putIfAbsent(key, content.getBytes(StandardCharsets.UTF_8), Map.of());
                assertThatThrownBy(
                                () ->
                                        CompletionPointer.record(
                                                store,
                                                SCOPE,
                                                List.of(new Mark("r", 1, 0, W - 1, W)),
                                                parts(0, 1, 0)))
                        .isInstanceOf(CompletionPointer.ProgressException.class)
                        .hasMessageContaining(
                                content.startsWith("{not") ? "cannot be read" : "newer release");
                assertThat(
                                new String(
                                        store.get(key).orElseThrow().content(),
                                        StandardCharsets.UTF_8))
                        .isEqualTo(content);
            }
        }
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(
            value = StoreKind.class,
            names = {"S3_INLINE", "FILESYSTEM"})
    void aSecondSchemaInOneJobVersionIsRefused(StoreKind kind) throws Exception {
        try (ObjectStore store = kind.fresh().open()) {
            CompletionPointer.record(
                    store, SCOPE, List.of(new Mark("r", 1, 0, W - 1, W)), parts(0, 1, 0));
            Scope schema2 = new Scope(PartKind.SNAPSHOT, "p", 1, 2, 4, W);
            assertThatThrownBy(
                            () ->
                                    CompletionPointer.record(
                                            store,
                                            schema2,
                                            List.of(new Mark("r2", 1, 0, 2 * W - 1, 2 * W)),
                                            List.of()))
                    .hasMessageContaining("a new schema needs a new job version");
            assertThat(CompletionPointer.schemaVersion(store, PartKind.SNAPSHOT, "p", 1))
                    .contains(1);
        }
    }

    /**
     * A committer that published a part and died before recording it: the store is asked, and the
     * manifest lists the part all the same. A window with every bucket recorded is not listed: no
     * request beyond what its manifest needs.
     */
    @ParameterizedTest(name = "{0}")
    @EnumSource(
            value = StoreKind.class,
            names = {"S3_INLINE", "FILESYSTEM"})
    void aPartPublishedButNeverRecordedIsFoundAndAWholeWindowCostsNoListing(StoreKind kind)
            throws Exception {
        try (ObjectStore store = kind.fresh().open()) {
            String unrecorded = publishedUnrecorded(store, 0, 3);
            List<String> windowsListed = new CopyOnWriteArrayList<>();
            ObjectStore counting =
                    watched(
                            store,
                            (method, key) -> {
                                if (method.equals("list") && key.contains("window=")) {
                                    windowsListed.add(key);
                                }
                            });
            List<PublishedPart> published = new ArrayList<>();
            for (int bucket = 0; bucket < 4; bucket++) {
                if (bucket < 3) {
                    published.addAll(parts(0, 1, bucket)); // window 0: bucket 3 not recorded
                }
                published.addAll(parts(1, 2, bucket)); // window 1: every bucket recorded
            }
            CompletionPointer.record(
                    counting, SCOPE, List.of(new Mark("r", 1, 0, 2 * W - 1, 2 * W)), published);

            WindowManifest.Manifest first = manifest(store, 0).orElseThrow();
            assertThat(first.parts().keySet()).containsExactly(0, 1, 2, 3);
            assertThat(first.parts().get(3).key()).isEqualTo(unrecorded);
            assertThat(first.parts().get(3).fingerprint()).isEqualTo("fp-died");
            assertThat(first.parts().get(3).rows()).isEqualTo(5);
            assertThat(manifest(store, W).orElseThrow().parts().keySet())
                    .containsExactly(0, 1, 2, 3);
            assertThat(windowsListed)
                    .as("only the window with a bucket not recorded is listed")
                    .containsExactly(ObjectKeys.windowPrefix(PartKind.SNAPSHOT, "p", 1, 1, 0));
        }
    }

    /**
     * The pointer's usual step is a window or a few: the date directories of its span are known
     * without listing the days, and a window nobody recorded (its committer died before the pointer
     * heard of its part) is still found, here on the day after the pointer's last window.
     */
    @ParameterizedTest(name = "{0}")
    @EnumSource(
            value = StoreKind.class,
            names = {"S3_INLINE", "FILESYSTEM"})
    void aWindowNobodyRecordedIsFoundAcrossMidnightWithoutListingTheDays(StoreKind kind)
            throws Exception {
        int midnight = (int) (86_400_000L / W);
        try (ObjectStore store = kind.fresh().open()) {
            CompletionPointer.record(
                    store,
                    SCOPE,
                    List.of(new Mark("r", 1, 0, midnight * W - 1, midnight * W)),
                    allBuckets(midnight - 1, midnight));
            String unrecorded = publishedUnrecorded(store, midnight * W, 2);
            List<String> listed = new CopyOnWriteArrayList<>();
            ObjectStore counting =
                    watched(
                            store,
                            (method, key) -> {
                                if (method.startsWith("list")) {
                                    listed.add(key);
                                }
                            });

            CompletionPointer.record(
                    counting,
                    SCOPE,
                    List.of(new Mark("r", 1, 0, (midnight + 1) * W - 1, (midnight + 1) * W)),
                    List.of());

            assertThat(CompletionPointer.read(store, PartKind.SNAPSHOT, "p", 1))
                    .contains((midnight + 1) * W);
            WindowManifest.Manifest found = manifest(store, midnight * W).orElseThrow();
            assertThat(found.parts().get(2).key()).isEqualTo(unrecorded);
            assertThat(found.parts().get(2).fingerprint()).isEqualTo("fp-died");
            assertThat(found.previousWindowStartMillis()).hasValue((midnight - 1) * W);
            assertThat(listed)
                    .as("listings: the pointer's log, the day's windows, the window")
                    .doesNotContain(ObjectKeys.schemaPrefix(PartKind.SNAPSHOT, "p", 1, 1));
        }
    }

    /**
     * An updater reads the log, stalls, and while it waits 64 others land and trimming deletes the
     * position it is about to create. Its create then succeeds (the key is gone), below the newest
     * entry where no reader looks; it must find that out and merge again. One run of 65 subtasks,
     * each committing window 0: the pointer passes the window only once every mark, the stalled
     * one's included, is in the log's newest state, and the stalled one's part is in the manifest.
     */
    @ParameterizedTest(name = "{0}, stalled at position {1}")
    @MethodSource("storesAndStalls")
    void anUpdaterStalledAcrossATrimMergesAgainAndLosesNothing(StoreKind kind, int stalledAt)
            throws Exception {
        var spec = kind.fresh();
        int others = 64;
        int subtasks = others + stalledAt + 1;
        ExecutorService pool = Executors.newFixedThreadPool(5);
        try (ObjectStore store = spec.open()) {
            for (int s = 0; s < stalledAt; s++) {
                CompletionPointer.record(store, SCOPE, List.of(mark(subtasks, s)), List.of());
            }
            CountDownLatch stalled = new CountDownLatch(1);
            CountDownLatch resume = new CountDownLatch(1);
            AtomicBoolean first = new AtomicBoolean(true);
            Future<?> slow =
                    pool.submit(
                            () -> {
                                try (ObjectStore s =
                                        watched(
                                                spec.open(),
                                                (method, key) -> {
                                                    if (method.equals("putIfAbsent")
                                                            && ObjectKeys.progressEntry(key)
                                                                    .isPresent()
                                                            && first.getAndSet(false)) {
                                                        stalled.countDown();
                                                        resume.await();
                                                    }
                                                })) {
                                    return CompletionPointer.record(
                                            s,
                                            SCOPE,
                                            List.of(mark(subtasks, subtasks - 1)),
                                            List.of(
                                                    new PublishedPart(
                                                            0, 3, "p/v=1/late", "fp", 1)));
                                }
                            });
            stalled.await();
            List<Future<?>> racing = new ArrayList<>();
            for (int t = 0; t < 4; t++) {
                int thread = t;
                racing.add(
                        pool.submit(
                                () -> {
                                    try (ObjectStore s = spec.open()) {
                                        for (int i = thread; i < others; i += 4) {
                                            CompletionPointer.record(
                                                    s,
                                                    SCOPE,
                                                    List.of(mark(subtasks, stalledAt + i)),
                                                    List.of());
                                        }
                                    }
                                    return null;
                                }));
            }
            for (Future<?> f : racing) {
                f.get();
            }
            List<Long> log = new ArrayList<>();
            store.list(
                    ObjectKeys.progressLogPrefix(PartKind.SNAPSHOT, "p", 1),
                    o -> ObjectKeys.progressEntry(o.key()).ifPresent(log::add));
            assertThat(log.get(0)).as("the stalled position was trimmed").isGreaterThan(stalledAt);
            assertThat(CompletionPointer.read(store, PartKind.SNAPSHOT, "p", 1))
                    .as("one mark is still missing")
                    .isEmpty();

            resume.countDown();
            slow.get();

            assertThat(CompletionPointer.read(store, PartKind.SNAPSHOT, "p", 1)).contains(W);
            assertThat(manifest(store, 0).orElseThrow().parts().keySet()).contains(3);
        } finally {
            pool.shutdownNow();
        }
    }

    /**
     * The sink's pointer task is the only updater of its version: after its first update it reads
     * neither {@code _progress.json} nor the log, and a window costs its manifest, its readers'
     * record, its log entry, the read of the entry before that, the swap of {@code _progress.json}
     * and the listing of the day's windows.
     */
    @ParameterizedTest(name = "{0}")
    @EnumSource(
            value = StoreKind.class,
            names = {"S3_INLINE", "FILESYSTEM"})
    void anUpdaterAloneReadsNothingBetweenItsUpdates(StoreKind kind) throws Exception {
        try (ObjectStore store = kind.fresh().open()) {
            List<String> calls = new CopyOnWriteArrayList<>();
            CompletionPointer.Updater updater =
                    new CompletionPointer.Updater(
                            watched(store, (method, key) -> calls.add(method + " " + key)),
                            SCOPE,
                            Runnable::run);
            String copy = ObjectKeys.progressKey(PartKind.SNAPSHOT, "p", 1);
            String log = ObjectKeys.progressLogPrefix(PartKind.SNAPSHOT, "p", 1);
            for (int w = 0; w < 5; w++) {
                calls.clear();
                updater.record(
                        List.of(new Mark("r", 1, 0, (w + 1) * W - 1, (w + 1) * W)),
                        allBuckets(w, w + 1));
                assertThat(CompletionPointer.read(store, PartKind.SNAPSHOT, "p", 1))
                        .contains((w + 1) * W);
                if (w > 0) {
                    assertThat(calls)
                            .as("update %d", w)
                            .doesNotContain("get " + copy, "list " + log)
                            .hasSize(6);
                }
            }
        }
    }

    /**
     * Two deployments of one version side by side: each pointer task remembers its own last update,
     * and the other's entries make that stale. Each finds its position taken, reads, and merges:
     * the pointer passes a window once both runs' subtasks have, and its manifest lists the parts
     * both published.
     */
    @ParameterizedTest(name = "{0}")
    @EnumSource(
            value = StoreKind.class,
            names = {"S3_INLINE", "FILESYSTEM"})
    void updatersThatRememberMergeWhatAnotherWroteMeanwhile(StoreKind kind) throws Exception {
        try (ObjectStore store = kind.fresh().open()) {
            CompletionPointer.Updater first =
                    new CompletionPointer.Updater(store, SCOPE, Runnable::run);
            CompletionPointer.Updater second =
                    new CompletionPointer.Updater(store, SCOPE, Runnable::run);
            for (int w = 0; w < 3; w++) {
                long end = (w + 1) * W;
                List<PublishedPart> low = new ArrayList<>(parts(w, w + 1, 0));
                low.addAll(parts(w, w + 1, 1));
                first.record(List.of(new Mark("r", 2, 0, end - 1, end)), low);
                assertThat(CompletionPointer.read(store, PartKind.SNAPSHOT, "p", 1))
                        .as("window %d: subtask 1 is not past it", w)
                        .isEqualTo(w == 0 ? Optional.empty() : Optional.of(w * W));
                List<PublishedPart> high = new ArrayList<>(parts(w, w + 1, 2));
                high.addAll(parts(w, w + 1, 3));
                second.record(List.of(new Mark("r", 2, 1, end - 1, end)), high);
                assertThat(CompletionPointer.read(store, PartKind.SNAPSHOT, "p", 1)).contains(end);
                assertThat(manifest(store, w * W).orElseThrow().parts().keySet())
                        .as("window %d", w)
                        .containsExactly(0, 1, 2, 3);
            }
        }
    }

    static Stream<Arguments> storesAndStalls() {
        return Stream.of(StoreKind.S3_INLINE, StoreKind.FILESYSTEM)
                .flatMap(k -> Stream.of(Arguments.of(k, 0), Arguments.of(k, 3)));
    }

    private static Mark mark(int subtasks, int subtask) {
        return new Mark("r", subtasks, subtask, W - 1, W);
    }

    /** Sees each call to a store, by method and first argument, before the store does. */
    private interface Watcher {
        void before(String method, String key) throws Exception;
    }

    private static ObjectStore watched(ObjectStore store, Watcher watcher) {
        return (ObjectStore)
                Proxy.newProxyInstance(
                        CompletionPointerITCase.class.getClassLoader(),
                        new Class<?>[] {ObjectStore.class},
                        (proxy, method, args) -> {
                            if (args != null && args.length > 0 && args[0] instanceof String key) {
                                watcher.before(method.getName(), key);
                            }
                            try {
                                return method.invoke(store, args);
                            } catch (InvocationTargetException e) {
                                throw e.getCause();
                            }
                        });
    }

    /** The manifest of the window starting at {@code windowStart}, if written. */
    private static Optional<WindowManifest.Manifest> manifest(ObjectStore store, long windowStart)
            throws Exception {
        return WindowManifest.read(
                store, ObjectKeys.manifestKey(PartKind.SNAPSHOT, "p", 1, 1, windowStart));
    }

    /**
     * A part published and never recorded (its committer died in between): fingerprint "fp-died", 5
     * rows; its key.
     */
    private static String publishedUnrecorded(ObjectStore store, long windowStart, int bucket)
            throws Exception {
        String key =
                ObjectKeys.partKey(
                        PartKind.SNAPSHOT,
                        new WorkIdentity("p", windowStart, W, 1, 1, bucket, 4, ""));
        store.putIfAbsent(
                key,
                new byte[] {1},
                Map.of(PartMetadata.FINGERPRINT, "fp-died", PartMetadata.ROWS, "5"));
        return key;
    }

    /** Every bucket's parts of windows [from, to). */
    private static List<PublishedPart> allBuckets(int from, int to) {
        List<PublishedPart> out = new ArrayList<>();
        for (int bucket = 0; bucket < 4; bucket++) {
            out.addAll(parts(from, to, bucket));
        }
        return out;
    }

    /** Bucket {@code bucket}'s parts of windows [from, to), fingerprints "fp-WINDOW-BUCKET". */
    private static List<PublishedPart> parts(int from, int to, int bucket) {
        List<PublishedPart> out = new ArrayList<>();
        for (int w = from; w < to; w++) {
            out.add(
                    new PublishedPart(
                            w * W,
                            bucket,
                            "p/v=1/part-" + w + "-" + bucket,
                            "fp-" + w + "-" + bucket,
                            10));
        }
        return out;
    }
}
