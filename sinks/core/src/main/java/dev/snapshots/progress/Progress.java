package dev.snapshots.progress;

import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

/**
 * The content of a completion pointer: how far each run of the sink has committed, the pointer
 * those runs prove, and the parts of windows the pointer has not reached yet (so each window's
 * manifest can be written the moment it has). Immutable; {@link #withParts} and {@link #withMark}
 * are the only ways it changes.
 *
 * <p>A run is one build of a sink, a job as submitted: its restarts from checkpoints are the same
 * run, a new deployment or a restore from a savepoint is another. Runs never mix: a mark says
 * "subtask s of this run has committed every part of windows up to its watermark", and only the
 * marks of one run, all its subtasks present, prove a window complete. Two runs of the same work
 * (an old and a new deployment) each prove their own bound; the pointer is the highest, and never
 * moves back.
 */
final class Progress {
    final String pipeline;
    final int jobVersion;

    /** The schema version the job version is written with; one per job version. */
    final int schemaVersion;

    final long completeThroughMillis;

    /** Which windows have manifests: see {@link ManifestSpan}. */
    final ManifestSpan manifests;

    final Map<String, RunMarks> runs;

    /** Window start, then bucket: parts published in windows the pointer has not passed. */
    final Map<Long, Map<Integer, PartEntry>> open;

    /**
     * One run's marks: its parallelism, how far each subtask has committed (a window boundary, or
     * +infinity at end of input), and the end of the last window it committed.
     */
    record RunMarks(
            int parallelism,
            Map<Integer, Long> watermarks,
            long lastWindowEndMillis,
            long updatedMillis) {}

    /** A published part as a manifest lists it. */
    record PartEntry(String key, String fingerprint, long rows) {}

    /**
     * The first and the newest window that got a manifest (MIN before any): every window with parts
     * between them has one, and each manifest names the one before it, so the audit walks back from
     * the newest and finds a window that vanished whole, manifest and all.
     */
    record ManifestSpan(long firstMillis, long lastMillis) {
        static final ManifestSpan NONE = new ManifestSpan(Long.MIN_VALUE, Long.MIN_VALUE);

        /** With windows {@code first} to {@code last} written after the ones already covered. */
        ManifestSpan extendedTo(long first, long last) {
            return first == Long.MIN_VALUE
                    ? this
                    : new ManifestSpan(firstMillis == Long.MIN_VALUE ? first : firstMillis, last);
        }
    }

    Progress(
            String pipeline,
            int jobVersion,
            int schemaVersion,
            long completeThroughMillis,
            ManifestSpan manifests,
            Map<String, RunMarks> runs,
            Map<Long, Map<Integer, PartEntry>> open) {
        this.pipeline = pipeline;
        this.jobVersion = jobVersion;
        this.schemaVersion = schemaVersion;
        this.completeThroughMillis = completeThroughMillis;
        this.manifests = manifests;
        this.runs = runs;
        this.open = open;
    }

    static Progress empty(String pipeline, int jobVersion, int schemaVersion) {
        return new Progress(
                pipeline,
                jobVersion,
                schemaVersion,
                Long.MIN_VALUE,
                ManifestSpan.NONE,
                new TreeMap<>(),
                new TreeMap<>());
    }

    /** As of schema {@code version}: a pointer of format 1 did not say which. */
    Progress withSchema(int version) {
        return new Progress(
                pipeline, jobVersion, version, completeThroughMillis, manifests, runs, open);
    }

    Progress withManifests(ManifestSpan span) {
        return new Progress(
                pipeline, jobVersion, schemaVersion, completeThroughMillis, span, runs, open);
    }

    boolean isComplete(long windowStartMillis) {
        return windowStartMillis < completeThroughMillis;
    }

    /**
     * Parts published in windows not yet complete; parts of complete windows are in their manifests
     * already.
     */
    Progress withParts(Map<Long, Map<Integer, PartEntry>> parts) {
        Map<Long, Map<Integer, PartEntry>> next = copy(open);
        parts.forEach(
                (window, byBucket) -> {
                    if (!isComplete(window)) {
                        next.computeIfAbsent(window, w -> new TreeMap<>()).putAll(byBucket);
                    }
                });
        return new Progress(
                pipeline, jobVersion, schemaVersion, completeThroughMillis, manifests, runs, next);
    }

    /**
     * Subtask {@code subtask} of {@code run} (of {@code parallelism}) committed every part of
     * windows ending at or before {@code watermark} + 1, the last of them ending at {@code
     * lastWindowEnd}. At end of input the watermark is +infinity, and the run's last window bounds
     * it instead.
     */
    Progress withMark(
            String run,
            int parallelism,
            int subtask,
            long watermark,
            long lastWindowEnd,
            long windowLengthMillis,
            long nowMillis) {
        Map<String, RunMarks> next = new TreeMap<>(runs);
        RunMarks before = next.get(run);
        Map<Integer, Long> marks =
                before == null ? new TreeMap<>() : new TreeMap<>(before.watermarks());
        marks.merge(subtask, committedThrough(watermark, windowLengthMillis), Math::max);
        long last =
                Math.max(
                        before == null ? Long.MIN_VALUE : before.lastWindowEndMillis(),
                        lastWindowEnd);
        next.put(run, new RunMarks(parallelism, marks, last, nowMillis));
        long through = completeThroughMillis;
        for (RunMarks r : next.values()) {
            through = Math.max(through, bound(r));
        }
        return new Progress(pipeline, jobVersion, schemaVersion, through, manifests, next, open);
    }

    /**
     * The window boundary a writer at {@code watermark} has handed over every part before: windows
     * ending at or before watermark + 1 have fired. Kept per window rather than per millisecond, so
     * the pointer's object changes once a window, not once a checkpoint.
     */
    static long committedThrough(long watermark, long windowLengthMillis) {
        return watermark == Long.MAX_VALUE
                ? Long.MAX_VALUE
                : (watermark + 1) - Math.floorMod(watermark + 1, windowLengthMillis);
    }

    /** What one run proves complete: nothing until each of its subtasks has reported. */
    private static long bound(RunMarks r) {
        if (r.watermarks().size() < r.parallelism()) {
            return Long.MIN_VALUE;
        }
        long low =
                r.watermarks().values().stream()
                        .mapToLong(Long::longValue)
                        .min()
                        .orElse(Long.MIN_VALUE);
        return low == Long.MAX_VALUE ? r.lastWindowEndMillis() : low;
    }

    /**
     * Without the parts of windows now complete (their manifests hold them), and with at most
     * {@code keep} runs.
     */
    Progress settled(int keep) {
        Map<Long, Map<Integer, PartEntry>> next = copy(open);
        next.keySet().removeIf(this::isComplete);
        Map<String, RunMarks> kept = new TreeMap<>(runs);
        while (kept.size() > keep) {
            String oldest =
                    kept.entrySet().stream()
                            .min(
                                    (a, b) ->
                                            Long.compare(
                                                    a.getValue().updatedMillis(),
                                                    b.getValue().updatedMillis()))
                            .orElseThrow()
                            .getKey();
            kept.remove(oldest);
        }
        return new Progress(
                pipeline, jobVersion, schemaVersion, completeThroughMillis, manifests, kept, next);
    }

    private static Map<Long, Map<Integer, PartEntry>> copy(
            Map<Long, Map<Integer, PartEntry>> parts) {
        Map<Long, Map<Integer, PartEntry>> copy = new TreeMap<>();
        parts.forEach((w, b) -> copy.put(w, new TreeMap<>(b)));
        return copy;
    }

    /**
     * Equal but for when runs were last updated: an update that changes nothing else need not be
     * written.
     */
    boolean sameAs(Progress p) {
        if (!(jobVersion == p.jobVersion
                && schemaVersion == p.schemaVersion
                && completeThroughMillis == p.completeThroughMillis
                && manifests.equals(p.manifests)
                && Objects.equals(pipeline, p.pipeline)
                && open.equals(p.open)
                && runs.keySet().equals(p.runs.keySet()))) {
            return false;
        }
        return runs.entrySet().stream()
                .allMatch(
                        e -> {
                            RunMarks a = e.getValue();
                            RunMarks b = p.runs.get(e.getKey());
                            return a.parallelism() == b.parallelism()
                                    && a.watermarks().equals(b.watermarks())
                                    && a.lastWindowEndMillis() == b.lastWindowEndMillis();
                        });
    }
}
