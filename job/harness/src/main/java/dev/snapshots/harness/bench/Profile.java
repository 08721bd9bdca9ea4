package dev.snapshots.harness.bench;

import java.io.IOException;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedFrame;
import jdk.jfr.consumer.RecordedThread;
import jdk.jfr.consumer.RecordingFile;

/**
 * Where a benchmark run's CPU went, from its JFR recording: the share of execution samples per
 * thread (a Flink task is a thread, so this is per operator chain), per top frame (the method on
 * CPU), per innermost frame of our own code on the stack (what of ours, including what it calls,
 * costs the most), and the same for the sink library alone. Samples are of Java threads only:
 * garbage collection and JIT compilation are not in them.
 */
final class Profile {
    private static final int TOP = 12;
    private static final List<String> NOT_LIBRARY =
            List.of(
                    "dev.snapshots.job.",
                    "dev.snapshots.harness.",
                    "dev.snapshots.cli.",
                    "dev.snapshots.testkit.");

    private Profile() {}

    static Map<String, Object> of(Path jfr) throws IOException {
        Map<String, Integer> top = new TreeMap<>();
        Map<String, Integer> ours = new TreeMap<>();
        Map<String, Integer> sink = new TreeMap<>();
        Map<String, Integer> threads = new TreeMap<>();
        int samples = 0;
        for (RecordedEvent e : RecordingFile.readAllEvents(jfr)) {
            if (!e.getEventType().getName().equals("jdk.ExecutionSample")
                    || e.getStackTrace() == null) {
                continue;
            }
            List<RecordedFrame> frames = e.getStackTrace().getFrames();
            if (frames.isEmpty()) {
                continue;
            }
            samples++;
            top.merge(name(frames.get(0)), 1, Integer::sum);
            threads.merge(task(e.getThread("sampledThread")), 1, Integer::sum);
            frames.stream()
                    .filter(f -> f.getMethod().getType().getName().startsWith("dev.snapshots."))
                    .findFirst()
                    .ifPresent(f -> ours.merge(name(f), 1, Integer::sum));
            frames.stream()
                    .filter(f -> inLibrary(f.getMethod().getType().getName()))
                    .findFirst()
                    .ifPresent(f -> sink.merge(name(f), 1, Integer::sum));
        }
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("samples", samples);
        out.put("threadsPercent", shares(threads, samples));
        out.put("topFramesPercent", shares(top, samples));
        out.put("ourInnermostFramesPercent", shares(ours, samples));
        out.put("libraryInnermostFramesPercent", shares(sink, samples));
        return out;
    }

    /**
     * Whether a class is the sink library's: ours, but not the job's, nor the harness's (the
     * benchmark's own generator and FileSink adapter are not the sink), nor the command line's.
     */
    static boolean inLibrary(String className) {
        return className.startsWith("dev.snapshots.")
                && NOT_LIBRARY.stream().noneMatch(className::startsWith);
    }

    /**
     * A thread's name without its subtask and attempt ("(1/2)#0"): a Flink task's subtasks add up.
     */
    private static String task(RecordedThread t) {
        String name = t == null || t.getJavaName() == null ? "?" : t.getJavaName();
        return name.replaceAll(" \\(\\d+/\\d+\\)#\\d+$", "");
    }

    private static String name(RecordedFrame f) {
        return f.getMethod().getType().getName() + "." + f.getMethod().getName();
    }

    private static Map<String, Double> shares(Map<String, Integer> counts, int samples) {
        Map<String, Double> out = new LinkedHashMap<>();
        counts.entrySet().stream()
                .sorted((a, b) -> b.getValue() - a.getValue())
                .limit(TOP)
                .forEach(
                        e ->
                                out.put(
                                        e.getKey(),
                                        Math.round(1000.0 * e.getValue() / Math.max(1, samples))
                                                / 10.0));
        return out;
    }
}
