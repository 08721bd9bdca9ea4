package dev.snapshots.testutils;

import dev.snapshots.key.ObjectKeys;
import dev.snapshots.key.PartKind;
import dev.snapshots.progress.CompletionPointer;
import dev.snapshots.store.ObjectStore;
import dev.snapshots.store.StoreSpec;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * What a reader could have seen while jobs ran: polls a job version's completion pointer and then
 * lists its parts, over and over. The invariant is judged afterwards, against what the run should
 * have published: at no moment may a window before the pointer lack one of its parts.
 */
public final class PointerWatch implements AutoCloseable {
    /** One poll: the pointer, then the parts listed right after reading it. */
    private record Seen(long pointer, Set<PartRef> listed) {}

    private final List<Seen> seen = new CopyOnWriteArrayList<>();
    private final long windowMillis;
    private final Thread thread;
    private volatile boolean stopped;
    private volatile Exception failure;

    private PointerWatch(StoreSpec spec, int jobVersion, long windowMillis) {
        this.windowMillis = windowMillis;
        this.thread = new Thread(() -> poll(spec, jobVersion), "pointer-watch");
        thread.setDaemon(true);
        thread.start();
    }

    public static PointerWatch start(StoreSpec spec, int jobVersion, long windowMillis) {
        return new PointerWatch(spec, jobVersion, windowMillis);
    }

    private void poll(StoreSpec spec, int jobVersion) {
        try (ObjectStore store = spec.open()) {
            while (!stopped) {
                Optional<Long> pointer =
                        CompletionPointer.read(
                                store, PartKind.SNAPSHOT, SnapshotTestJob.PIPELINE, jobVersion);
                if (pointer.isPresent()) {
                    Set<PartRef> listed = new TreeSet<>();
                    store.list(
                            ObjectKeys.versionPrefix(SnapshotTestJob.PIPELINE, jobVersion),
                            o ->
                                    ObjectKeys.parse(o.key())
                                            .ifPresent(
                                                    p ->
                                                            listed.add(
                                                                    new PartRef(
                                                                            p.windowStartMillis(),
                                                                            p.bucket()))));
                    seen.add(new Seen(pointer.get(), listed));
                }
                Thread.sleep(10);
            }
        } catch (Exception e) {
            failure = e;
        }
    }

    /** How many polls saw a pointer. */
    public int observations() {
        return seen.size();
    }

    /** How many different pointers the polls saw: how often it moved while they ran. */
    public long distinctPointers() {
        return seen.stream().mapToLong(Seen::pointer).distinct().count();
    }

    /**
     * Each moment a window before the pointer lacked one of the {@code expected} parts it should
     * have, or the pointer showed before the version had any part below it.
     */
    public List<String> violations(Set<PartRef> expected) {
        List<String> out = new ArrayList<>();
        for (Seen s : seen) {
            if (s.listed().stream().noneMatch(p -> p.windowStartMillis() < s.pointer())) {
                out.add(
                        "pointer at "
                                + Instant.ofEpochMilli(s.pointer())
                                + " before any part below it was published");
            }
            for (PartRef part : expected) {
                if (part.windowStartMillis() + windowMillis <= s.pointer()
                        && !s.listed().contains(part)) {
                    out.add(
                            "pointer at "
                                    + Instant.ofEpochMilli(s.pointer())
                                    + " while window "
                                    + Instant.ofEpochMilli(part.windowStartMillis())
                                    + " bucket "
                                    + part.bucket()
                                    + " was not published");
                }
            }
        }
        return out;
    }

    @Override
    public void close() throws Exception {
        stopped = true;
        thread.join();
        if (failure != null) {
            throw failure;
        }
    }
}
