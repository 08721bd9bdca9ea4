package dev.snapshots.sink;

import static org.assertj.core.api.Assertions.assertThat;

import dev.snapshots.key.ObjectKeys;
import dev.snapshots.key.PartKind;
import dev.snapshots.key.PartMetadata;
import dev.snapshots.key.WorkIdentity;
import dev.snapshots.progress.CompletionPointer;
import dev.snapshots.progress.WindowManifest;
import dev.snapshots.store.ObjectStore;
import dev.snapshots.store.StoreSpec;
import dev.snapshots.testkit.StoreKind;
import dev.snapshots.testutils.CountingMetricGroup;
import dev.snapshots.testutils.KeyTotal;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import org.apache.flink.streaming.api.connector.sink2.CommittableMessage;
import org.apache.flink.streaming.api.connector.sink2.CommittableSummary;
import org.apache.flink.streaming.api.connector.sink2.CommittableWithLineage;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The sink's post-commit task, fed as Flink feeds it (each committer subtask's summary, then what
 * it published, the subtasks' streams interleaved), against a store of real files: it writes the
 * pointer once a window whatever the parallelism, never before every subtask passed the window, and
 * a manifest of every part.
 */
class PointerRecorderTest {
    private static final long WINDOW = 300_000;
    private static final long START = 1_796_047_500_000L;
    private static final int BUCKETS = 8;
    private static final SnapshotCommittable.Run RUN =
            new SnapshotCommittable.Run("readings", 1, PartKind.SNAPSHOT, "run-a");

    @ParameterizedTest(name = "P={0}, seed {1}")
    @CsvSource({"1, 1", "4, 2", "8, 3", "8, 4"})
    void thePointerIsWrittenOnceAWindowWhateverTheParallelism(int parallelism, long seed)
            throws Exception {
        StoreSpec spec = StoreKind.FILESYSTEM.fresh();
        SnapshotSinkConfig<KeyTotal> config = config(spec);
        Random random = new Random(seed);
        int windows = 3;
        int checkpointsPerWindow = 30;
        try (ObjectStore store = spec.open();
                PointerRecorder recorder = recorder(config, store, new CountingMetricGroup())) {
            long checkpoint = 0;
            for (int w = 0; w < windows; w++) {
                for (int c = 1; c <= checkpointsPerWindow; c++) {
                    checkpoint++;
                    long watermark = START + w * WINDOW + c * WINDOW / checkpointsPerWindow - 1;
                    // The window fires at its last checkpoint's interval.
                    long fired = c == checkpointsPerWindow ? START + w * WINDOW : -1;
                    List<List<CommittableMessage<SnapshotCommittable>>> bySubtask =
                            new ArrayList<>();
                    for (int s = 0; s < parallelism; s++) {
                        List<SnapshotCommittable> published = new ArrayList<>();
                        for (int b = s; fired >= 0 && b < BUCKETS; b += parallelism) {
                            published.add(part(config, store, fired, b));
                        }
                        published.add(SnapshotCommittable.mark(RUN, s, parallelism, watermark));
                        bySubtask.add(batch(checkpoint, s, parallelism, published));
                    }
                    for (CommittableMessage<SnapshotCommittable> m :
                            interleaved(bySubtask, random)) {
                        recorder.accept(m);
                    }
                    // One write for the first marks it hears (a recorder starts knowing nothing of
                    // the store), then one a window.
                    assertThat(logPositions(store))
                            .as("entries after checkpoint %d of window %d", c, w)
                            .isEqualTo(1 + (c == checkpointsPerWindow ? w + 1 : w));
                }
            }

            assertThat(CompletionPointer.read(store, PartKind.SNAPSHOT, "readings", 1))
                    .contains(START + windows * WINDOW);
            for (int w = 0; w < windows; w++) {
                assertThat(manifest(store, START + w * WINDOW).parts())
                        .as("window %d's manifest", w)
                        .hasSize(BUCKETS);
            }
        }
    }

    /** A mark past the end of input is one subtask's: the others still hold the window open. */
    @Test
    void aWindowIsNotCompleteUntilEverySubtaskHasPassedIt() throws Exception {
        StoreSpec spec = StoreKind.FILESYSTEM.fresh();
        SnapshotSinkConfig<KeyTotal> config = config(spec);
        try (ObjectStore store = spec.open();
                PointerRecorder recorder = recorder(config, store, new CountingMetricGroup())) {
            List<SnapshotCommittable> zero = new ArrayList<>();
            for (int b = 0; b < BUCKETS; b += 2) {
                zero.add(part(config, store, START, b));
            }
            zero.add(SnapshotCommittable.mark(RUN, 0, 2, START + 3 * WINDOW - 1));
            feed(recorder, batch(1, 0, 2, zero));
            feed(recorder, batch(1, 1, 2, List.of(SnapshotCommittable.mark(RUN, 1, 2, START - 1))));

            assertThat(CompletionPointer.read(store, PartKind.SNAPSHOT, "readings", 1))
                    .as("subtask 1 has not passed the window")
                    .isEmpty();

            List<SnapshotCommittable> one = new ArrayList<>();
            for (int b = 1; b < BUCKETS; b += 2) {
                one.add(part(config, store, START, b));
            }
            one.add(SnapshotCommittable.mark(RUN, 1, 2, START + WINDOW - 1));
            feed(recorder, batch(2, 1, 2, one));

            assertThat(CompletionPointer.read(store, PartKind.SNAPSHOT, "readings", 1))
                    .contains(START + WINDOW);
            assertThat(manifest(store, START).parts()).hasSize(BUCKETS);
        }
    }

    /**
     * An in-place rescale (adaptive scheduler, reactive mode, an autoscaler) keeps the run's id.
     * Scale-in, P 4 to 2: the old subtasks 2 and 3 never mark again, and the pointer must not wait
     * for them; it reaches the last window, and the log stops carrying the open windows' parts.
     */
    @Test
    void aScaleInPlaceDoesNotStopThePointer() throws Exception {
        StoreSpec spec = StoreKind.FILESYSTEM.fresh();
        SnapshotSinkConfig<KeyTotal> config = config(spec);
        int windows = 8;
        try (ObjectStore store = spec.open();
                PointerRecorder recorder = recorder(config, store, new CountingMetricGroup())) {
            for (int w = 0; w < windows; w++) {
                int parallelism = w < 2 ? 4 : 2;
                for (int s = 0; s < parallelism; s++) {
                    List<SnapshotCommittable> published = new ArrayList<>();
                    for (int b = s * BUCKETS / parallelism;
                            b < (s + 1) * BUCKETS / parallelism;
                            b++) {
                        published.add(part(config, store, START + w * WINDOW, b));
                    }
                    published.add(
                            SnapshotCommittable.mark(
                                    RUN, s, parallelism, START + (w + 1) * WINDOW - 1));
                    feed(recorder, batch(w + 1, s, parallelism, published));
                }
            }

            assertThat(CompletionPointer.read(store, PartKind.SNAPSHOT, "readings", 1))
                    .contains(START + windows * WINDOW);
            assertThat(manifest(store, START + (windows - 1) * WINDOW).parts()).hasSize(BUCKETS);
        }
    }

    /**
     * Scale-out, P 2 to 4, as unaligned checkpoints replay it: the old subtask 1's mark (buckets 4
     * to 7 at P = 2) arrives after the new subtasks 0, 2 and 3 marked. At P = 4 subtask 1 owns
     * buckets 2 and 3, which the old subtask 1 never held: its mark proves nothing of them, and the
     * pointer waits for the new subtask 1.
     */
    @Test
    void aStaleMarkOfAnotherParallelismNeverCompletesAWindow() throws Exception {
        StoreSpec spec = StoreKind.FILESYSTEM.fresh();
        SnapshotSinkConfig<KeyTotal> config = config(spec);
        try (ObjectStore store = spec.open();
                PointerRecorder recorder = recorder(config, store, new CountingMetricGroup())) {
            // P = 2: subtask 0 (buckets 0-3) has published windows 0 and 1, subtask 1 (4-7) 0 to 3.
            feed(recorder, batch(1, 0, 2, bucketsThrough(config, store, 0, 4, 2, 0, 2)));
            // P = 4: subtasks 0, 2 and 3 publish windows 2 and 3.
            for (int s : new int[] {0, 2, 3}) {
                feed(recorder, batch(2, s, 4, bucketsThrough(config, store, 2 * s, 2, 4, s, 4)));
            }
            feed(recorder, batch(1, 1, 2, bucketsThrough(config, store, 4, 4, 2, 1, 4)));

            assertThat(CompletionPointer.read(store, PartKind.SNAPSHOT, "readings", 1))
                    .as("buckets 2 and 3 of windows 2 and 3 are not published")
                    .hasValueSatisfying(p -> assertThat(p).isLessThanOrEqualTo(START + 2 * WINDOW));

            feed(recorder, batch(2, 1, 4, bucketsThrough(config, store, 2, 2, 4, 1, 4)));
            assertThat(CompletionPointer.read(store, PartKind.SNAPSHOT, "readings", 1))
                    .contains(START + 4 * WINDOW);
            assertThat(manifest(store, START + 3 * WINDOW).parts()).hasSize(BUCKETS);
        }
    }

    /**
     * A subtask that never marks (stopped, or lost to a scale-in before this release keyed marks by
     * parallelism) holds every window open: the parts waiting for them stay within the bound.
     */
    @Test
    void partsWaitingForAWindowThatNeverCompletesStayWithinTheBound() throws Exception {
        StoreSpec spec = StoreKind.FILESYSTEM.fresh();
        SnapshotSinkConfig<KeyTotal> config = config(spec);
        try (ObjectStore store = spec.open();
                PointerRecorder recorder = recorder(config, store, new CountingMetricGroup())) {
            int parts = PointerRecorder.MAX_UNRECORDED_PARTS + 1_000;
            for (int i = 0; i < parts; i += BUCKETS) {
                long window = START + (i / BUCKETS) * WINDOW;
                List<SnapshotCommittable> published = new ArrayList<>();
                for (int b = 0; b < BUCKETS; b++) {
                    String key = ObjectKeys.partKey(PartKind.SNAPSHOT, config.identity(window, b));
                    published.add(
                            SnapshotCommittable.inline(
                                    key,
                                    window,
                                    window + WINDOW,
                                    b,
                                    "fp",
                                    1,
                                    Map.of(),
                                    new byte[0]));
                }
                published.add(SnapshotCommittable.mark(RUN, 0, 2, window + WINDOW - 1));
                feed(recorder, batch(i / BUCKETS + 1, 0, 2, published));
            }

            assertThat(recorder.heldParts()).isEqualTo(PointerRecorder.MAX_UNRECORDED_PARTS);
        }
    }

    /**
     * What writer {@code subtask} of {@code parallelism} hands over with its mark: buckets {@code
     * first} to {@code first + count - 1} of every window up to {@code windows}, published.
     */
    private static List<SnapshotCommittable> bucketsThrough(
            SnapshotSinkConfig<KeyTotal> config,
            ObjectStore store,
            int first,
            int count,
            int parallelism,
            int subtask,
            int windows)
            throws Exception {
        List<SnapshotCommittable> published = new ArrayList<>();
        for (int w = 0; w < windows; w++) {
            for (int b = first; b < first + count; b++) {
                if (store.head(
                                ObjectKeys.partKey(
                                        PartKind.SNAPSHOT, config.identity(START + w * WINDOW, b)))
                        .isEmpty()) {
                    published.add(part(config, store, START + w * WINDOW, b));
                }
            }
        }
        published.add(
                SnapshotCommittable.mark(RUN, subtask, parallelism, START + windows * WINDOW - 1));
        return published;
    }

    /**
     * A restarted post-commit task knows nothing of what it was told before: the marks come again
     * with the next checkpoint, and the window's manifest finds the parts in the store.
     */
    @Test
    void aRestartedRecorderHearsTheMarksAgainAndFindsThePartsItWasNotToldOf() throws Exception {
        StoreSpec spec = StoreKind.FILESYSTEM.fresh();
        SnapshotSinkConfig<KeyTotal> config = config(spec);
        try (ObjectStore store = spec.open()) {
            List<SnapshotCommittable> parts = window(config, store, START);
            parts.add(SnapshotCommittable.mark(RUN, 0, 1, START + WINDOW / 2));
            try (PointerRecorder before = recorder(config, store, new CountingMetricGroup())) {
                feed(before, batch(1, 0, 1, parts));
            }
            assertThat(CompletionPointer.read(store, PartKind.SNAPSHOT, "readings", 1)).isEmpty();

            try (PointerRecorder restarted = recorder(config, store, new CountingMetricGroup())) {
                feed(
                        restarted,
                        batch(
                                2,
                                0,
                                1,
                                List.of(SnapshotCommittable.mark(RUN, 0, 1, START + WINDOW))));
            }

            assertThat(CompletionPointer.read(store, PartKind.SNAPSHOT, "readings", 1))
                    .contains(START + WINDOW);
            WindowManifest.Manifest manifest = manifest(store, START);
            assertThat(manifest.parts()).hasSize(BUCKETS);
            assertThat(manifest.parts().get(3).fingerprint()).isEqualTo(parts.get(3).fingerprint());
        }
    }

    /**
     * Parts come first: a pointer the recorder cannot read or must not touch is reported, and left
     * alone.
     */
    @Test
    void anUnreadableOrNewerPointerIsCountedAndLeftAlone() throws Exception {
        StoreSpec spec = StoreKind.FILESYSTEM.fresh();
        SnapshotSinkConfig<KeyTotal> config = config(spec);
        String pointer = ObjectKeys.progressKey(PartKind.SNAPSHOT, "readings", 1);
        List<String> contents =
                List.of(
                        "{not json",
                        "{\"format\": 3, \"pipeline\": \"readings\", \"jobVersion\": 1}");
        CountingMetricGroup metrics = new CountingMetricGroup();
        try (ObjectStore store = spec.open();
                PointerRecorder recorder = recorder(config, store, metrics)) {
            for (int i = 0; i < contents.size(); i++) {
                store.delete(pointer);
                store.putIfAbsent(
                        pointer, contents.get(i).getBytes(StandardCharsets.UTF_8), Map.of());

                feed(
                        recorder,
                        batch(
                                i + 1,
                                0,
                                1,
                                List.of(
                                        part(config, store, START + i * WINDOW, 0),
                                        SnapshotCommittable.mark(
                                                RUN, 0, 1, START + (i + 1) * WINDOW - 1))));

                assertThat(
                                new String(
                                        store.get(pointer).orElseThrow().content(),
                                        StandardCharsets.UTF_8))
                        .as("left alone")
                        .isEqualTo(contents.get(i));
                assertThat(metrics.count("progressFailures")).isEqualTo(i + 1);
            }
        }
    }

    /**
     * The last window of a bounded run, published while its update was lost (the pointer task
     * failed over, or its update failed past the retries): the committers do not hand those parts
     * over again, and the run's end-of-input marks are all the restarted job records. They carry
     * the writers' last window (writer state), so the pointer still reaches the end.
     */
    @Test
    void theLastWindowIsRecordedAfterAFailoverThatLostItsParts() throws Exception {
        StoreSpec spec = StoreKind.FILESYSTEM.fresh();
        SnapshotSinkConfig<KeyTotal> config = config(spec);
        try (ObjectStore store = spec.open()) {
            List<SnapshotCommittable> first = window(config, store, START);
            first.add(SnapshotCommittable.mark(RUN, 0, 1, START + WINDOW - 1, START + WINDOW));
            try (PointerRecorder before = recorder(config, store, new CountingMetricGroup())) {
                feed(before, batch(1, 0, 1, first));
            }
            window(config, store, START + WINDOW); // published; its update is lost

            CountingMetricGroup metrics = new CountingMetricGroup();
            try (PointerRecorder endOfInput =
                    new PointerRecorder(
                            config, store, metrics, metrics.counter("storeRetries"), true)) {
                endOfInput.mark(
                        SnapshotCommittable.mark(RUN, 0, 1, Long.MAX_VALUE, START + 2 * WINDOW));
                endOfInput.record();
            }

            assertThat(CompletionPointer.read(store, PartKind.SNAPSHOT, "readings", 1))
                    .contains(START + 2 * WINDOW);
            assertThat(manifest(store, START + WINDOW).parts()).hasSize(BUCKETS);
        }
    }

    /**
     * The end of a bounded run is recorded by a recorder that fails its commit until the update
     * lands; but a pointer it must not touch (unreadable, or a newer release's during a rollback
     * overlap) would fail it on every restart, and the job would never end. It is reported and left
     * alone, as everywhere else; a store that fails now still fails the commit.
     */
    @Test
    void anUnreadablePointerDoesNotHoldBackTheEndOfABoundedRun() throws Exception {
        StoreSpec spec = StoreKind.FILESYSTEM.fresh();
        SnapshotSinkConfig<KeyTotal> config = config(spec);
        String pointer = ObjectKeys.progressKey(PartKind.SNAPSHOT, "readings", 1);
        String newer = "{\"format\": 3, \"pipeline\": \"readings\", \"jobVersion\": 1}";
        CountingMetricGroup metrics = new CountingMetricGroup();
        try (ObjectStore store = spec.open();
                PointerRecorder endOfInput =
                        new PointerRecorder(
                                config, store, metrics, metrics.counter("storeRetries"), true)) {
            store.putIfAbsent(pointer, newer.getBytes(StandardCharsets.UTF_8), Map.of());
            endOfInput.part(part(config, store, START, 0), "fp-" + START + "-0", 1);
            endOfInput.mark(SnapshotCommittable.mark(RUN, 0, 1, Long.MAX_VALUE));

            endOfInput.record();

            assertThat(
                            new String(
                                    store.get(pointer).orElseThrow().content(),
                                    StandardCharsets.UTF_8))
                    .isEqualTo(newer);
            assertThat(metrics.count("progressFailures")).isOne();
        }
    }

    /**
     * A sink that takes its window length from its rows (a SQL table without 'window') knows none
     * until its job version's first part: marks complete nothing before it, the first part tells
     * it, a restarted recorder reads it from the version's identity (and passes an empty window
     * without a part), and an end of input with nothing published records nothing.
     */
    @Test
    void aWindowLengthFromTheRowsIsLearnedFromTheFirstPartOrTheIdentity() throws Exception {
        StoreSpec spec = StoreKind.FILESYSTEM.fresh();
        SnapshotSinkConfig<KeyTotal> known = config(spec);
        CountingMetricGroup metrics = new CountingMetricGroup();
        try (ObjectStore store = spec.open()) {
            try (PointerRecorder first = recorder(fromRows(spec, 1), store, metrics)) {
                feed(first, batch(1, 0, 1, List.of(SnapshotCommittable.mark(RUN, 0, 1, START))));
                assertThat(logPositions(store)).as("nothing written before a part").isZero();

                List<SnapshotCommittable> parts = window(known, store, START);
                parts.add(SnapshotCommittable.mark(RUN, 0, 1, START + WINDOW - 1));
                feed(first, batch(2, 0, 1, parts));
                assertThat(CompletionPointer.read(store, PartKind.SNAPSHOT, "readings", 1))
                        .contains(START + WINDOW);
            }

            known.versionIdentity(128).require(store); // as the first part's writer recorded it
            try (PointerRecorder restarted = recorder(fromRows(spec, 1), store, metrics)) {
                assertThat(restarted.resolveWindowLength()).isTrue();
                feed(
                        restarted,
                        batch(
                                3,
                                0,
                                1,
                                List.of(SnapshotCommittable.mark(RUN, 0, 1, START + 2 * WINDOW))));
            }
            assertThat(CompletionPointer.read(store, PartKind.SNAPSHOT, "readings", 1))
                    .contains(START + 2 * WINDOW);

            SnapshotCommittable.Run empty =
                    new SnapshotCommittable.Run("readings", 2, PartKind.SNAPSHOT, "run-b");
            try (PointerRecorder endOfInput =
                    new PointerRecorder(
                            fromRows(spec, 2), store, metrics, metrics.counter("retries"), true)) {
                endOfInput.mark(SnapshotCommittable.mark(empty, 0, 1, Long.MAX_VALUE));
                endOfInput.record();
            }
            assertThat(CompletionPointer.read(store, PartKind.SNAPSHOT, "readings", 2)).isEmpty();
            assertThat(metrics.count("progressFailures")).isZero();
        }
    }

    private static SnapshotSinkConfig<KeyTotal> config(StoreSpec spec) {
        return builder(spec, 1).windowLength(Duration.ofMillis(WINDOW)).build().config();
    }

    /** As {@link #config}, without a window length: the rows give it. */
    private static SnapshotSinkConfig<KeyTotal> fromRows(StoreSpec spec, int jobVersion) {
        return builder(spec, jobVersion)
                .rowWindow(
                        new RowWindow<>() {
                            @Override
                            public long startMillis(KeyTotal row) {
                                return START;
                            }

                            @Override
                            public long endMillis(KeyTotal row) {
                                return START + WINDOW;
                            }
                        })
                .build()
                .config();
    }

    private static CanonicalSnapshotSinkBuilder<KeyTotal> builder(StoreSpec spec, int jobVersion) {
        return CanonicalSnapshotSink.<KeyTotal>builder()
                .pipeline("readings")
                .jobVersion(jobVersion)
                .bucketCount(BUCKETS)
                .store(spec)
                .rowFormat(new KeyTotal.Format())
                .retries(new Backoff(2, Duration.ofMillis(1), Duration.ofMillis(2)));
    }

    private static PointerRecorder recorder(
            SnapshotSinkConfig<KeyTotal> config, ObjectStore store, CountingMetricGroup metrics) {
        return new PointerRecorder(config, store, metrics, metrics.counter("storeRetries"), false);
    }

    /** Every bucket's part of the window starting at {@code windowStart}, published. */
    private static List<SnapshotCommittable> window(
            SnapshotSinkConfig<KeyTotal> config, ObjectStore store, long windowStart)
            throws Exception {
        List<SnapshotCommittable> parts = new ArrayList<>();
        for (int b = 0; b < BUCKETS; b++) {
            parts.add(part(config, store, windowStart, b));
        }
        return parts;
    }

    /** A part as published: in the store, with the metadata a manifest lists. */
    private static SnapshotCommittable part(
            SnapshotSinkConfig<KeyTotal> config, ObjectStore store, long windowStart, int bucket)
            throws Exception {
        WorkIdentity id = config.identity(windowStart, bucket);
        String key = ObjectKeys.partKey(PartKind.SNAPSHOT, id);
        String fingerprint = "fp-" + windowStart + "-" + bucket;
        Map<String, String> metadata =
                Map.of(PartMetadata.FINGERPRINT, fingerprint, PartMetadata.ROWS, "1");
        byte[] content = key.getBytes(StandardCharsets.UTF_8);
        store.putIfAbsent(key, content, metadata);
        return SnapshotCommittable.inline(
                key, windowStart, windowStart + WINDOW, bucket, fingerprint, 1, metadata, content);
    }

    /** One committer subtask's emission after a checkpoint: its summary, then its committables. */
    private static List<CommittableMessage<SnapshotCommittable>> batch(
            long checkpoint, int subtask, int parallelism, List<SnapshotCommittable> published) {
        List<CommittableMessage<SnapshotCommittable>> messages = new ArrayList<>();
        messages.add(
                new CommittableSummary<>(subtask, parallelism, checkpoint, published.size(), 0, 0));
        published.forEach(c -> messages.add(new CommittableWithLineage<>(c, checkpoint, subtask)));
        return messages;
    }

    /** The subtasks' streams merged as one input merges channels: each in its own order. */
    private static List<CommittableMessage<SnapshotCommittable>> interleaved(
            List<List<CommittableMessage<SnapshotCommittable>>> streams, Random random) {
        List<LinkedList<CommittableMessage<SnapshotCommittable>>> left = new ArrayList<>();
        streams.forEach(s -> left.add(new LinkedList<>(s)));
        List<CommittableMessage<SnapshotCommittable>> merged = new ArrayList<>();
        while (!left.isEmpty()) {
            int i = random.nextInt(left.size());
            merged.add(left.get(i).removeFirst());
            if (left.get(i).isEmpty()) {
                left.remove(i);
            }
        }
        return merged;
    }

    private static void feed(
            PointerRecorder recorder, List<CommittableMessage<SnapshotCommittable>> messages)
            throws Exception {
        for (CommittableMessage<SnapshotCommittable> m : messages) {
            recorder.accept(m);
        }
    }

    /** How many states the pointer's log has taken: its newest position + 1. */
    private static long logPositions(ObjectStore store) throws Exception {
        TreeMap<Long, String> entries = new TreeMap<>();
        store.list(
                ObjectKeys.progressLogPrefix(PartKind.SNAPSHOT, "readings", 1),
                o -> ObjectKeys.progressEntry(o.key()).ifPresent(n -> entries.put(n, o.key())));
        return entries.isEmpty() ? 0 : entries.lastKey() + 1;
    }

    private static WindowManifest.Manifest manifest(ObjectStore store, long windowStart)
            throws Exception {
        return WindowManifest.read(
                        store,
                        ObjectKeys.manifestKey(PartKind.SNAPSHOT, "readings", 1, 1, windowStart))
                .orElseThrow();
    }
}
