package dev.snapshots.progress;

import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;

/** The content of a completion pointer; {@link #withMark} is the only way it changes. */
final class Progress {
    final String pipeline;
    final int jobVersion;
    final long completeThroughMillis;
    final long lastWindowEndMillis;
    /** Highest committed watermark per writer parallelism, then per subtask (as JSON-friendly strings). */
    final Map<String, Map<String, Long>> watermarks;

    Progress(String pipeline, int jobVersion, long completeThroughMillis, long lastWindowEndMillis,
            Map<String, Map<String, Long>> watermarks) {
        this.pipeline = pipeline;
        this.jobVersion = jobVersion;
        this.completeThroughMillis = completeThroughMillis;
        this.lastWindowEndMillis = lastWindowEndMillis;
        this.watermarks = watermarks;
    }

    static Progress empty(String pipeline, int jobVersion) {
        return new Progress(pipeline, jobVersion, Long.MIN_VALUE, Long.MIN_VALUE, new TreeMap<>());
    }

    Optional<Long> completeThrough() {
        return completeThroughMillis > 0 ? Optional.of(completeThroughMillis) : Optional.empty();
    }

    Progress withMark(int parallelism, int subtask, long watermark, long lastWindowEnd, long windowLengthMillis) {
        Map<String, Map<String, Long>> marks = new TreeMap<>();
        watermarks.forEach((p, bySubtask) -> marks.put(p, new TreeMap<>(bySubtask)));
        Map<String, Long> group = marks.computeIfAbsent(Integer.toString(parallelism), p -> new TreeMap<>());
        group.merge(Integer.toString(subtask), watermark, Math::max);
        long last = Math.max(lastWindowEndMillis, lastWindowEnd);

        long through = completeThroughMillis;
        for (Map.Entry<String, Map<String, Long>> g : marks.entrySet()) {
            if (g.getValue().size() < Integer.parseInt(g.getKey())) {
                continue; // not every subtask of this parallelism has reported yet
            }
            long low = g.getValue().values().stream().mapToLong(Long::longValue).min().getAsLong();
            if (low <= 0) {
                continue; // a subtask without a watermark yet
            }
            long bound = low == Long.MAX_VALUE ? last : (low + 1) - Math.floorMod(low + 1, windowLengthMillis);
            through = Math.max(through, bound);
        }
        return new Progress(pipeline, jobVersion, through, last, marks);
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof Progress)) {
            return false;
        }
        Progress p = (Progress) o;
        return jobVersion == p.jobVersion
                && completeThroughMillis == p.completeThroughMillis
                && lastWindowEndMillis == p.lastWindowEndMillis
                && Objects.equals(pipeline, p.pipeline)
                && watermarks.equals(p.watermarks);
    }

    @Override
    public int hashCode() {
        return Objects.hash(pipeline, jobVersion, completeThroughMillis, lastWindowEndMillis, watermarks);
    }
}
