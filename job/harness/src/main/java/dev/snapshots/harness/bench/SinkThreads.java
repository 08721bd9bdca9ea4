package dev.snapshots.harness.bench;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The CPU time of a sink's own threads: its Flink tasks (a task is a thread named after its chain
 * of operators: the writer's, the committer's and, of ours, the completion pointer's), and the
 * threads our committer and pointer task start for store requests. Per-thread CPU time
 * (ThreadMXBean: the kernel's clock of each thread) leaves out the source, the window, the
 * collectors and the JIT, whose share of a whole process's CPU moves by ±20 % between runs of the
 * same input on 2 shared cores. This VM exposes no hardware counters ({@code perf stat}: cycles not
 * supported), so time is the instrument.
 */
final class SinkThreads {
    /**
     * Threads of our sink that are no Flink task: the committer's publishers, the pointer's
     * manifest writers, and the updater of the {@code snapshots} sink's pointer.
     */
    private static final List<String> OURS_HELPERS =
            List.of("snapshot-publisher", "snapshot-manifests", "completion-pointer-snapshots");

    /**
     * A Flink task thread: its chain's name, then subtask and attempt, "(1/2)#0"; or the task's
     * helper threads, named "... for" it ("Time Trigger for", "System Time Trigger for": its
     * timers; "OutputFlusher for": its output buffers).
     */
    private static final Pattern TASK =
            Pattern.compile("(?:[A-Za-z ]+ for )?(.+) \\(\\d+/\\d+\\)#\\d+");

    private SinkThreads() {}

    /**
     * Whether a thread is the sink's: a task (or its timer thread) whose operators all bear the
     * sink's name, or one of ours' helpers.
     *
     * @throws IllegalStateException if a task chains the sink's operators with others: its CPU
     *     would be theirs too
     */
    static boolean counted(BenchRun.Sink sink, String thread) {
        if (sink.ours() && OURS_HELPERS.stream().anyMatch(thread::startsWith)) {
            return true;
        }
        Matcher task = TASK.matcher(thread);
        if (!task.matches()) {
            return false;
        }
        String[] operators = task.group(1).split(" -> ");
        long sinks = 0;
        for (String operator : operators) {
            if (operator.startsWith(sink.operators)) {
                sinks++;
            }
        }
        if (sinks > 0 && sinks < operators.length) {
            throw new IllegalStateException(
                    "the sink shares a task thread with other operators, whose CPU would count as"
                            + " the sink's: '"
                            + thread
                            + "'; break the chain before the sink");
        }
        return sinks > 0;
    }

    /** The CPU time so far of each of the sink's live threads. */
    static Times of(BenchRun.Sink sink) {
        com.sun.management.ThreadMXBean mx =
                (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        if (!mx.isThreadCpuTimeSupported() || !mx.isThreadCpuTimeEnabled()) {
            throw new IllegalStateException("this JVM does not measure CPU time per thread");
        }
        Map<Long, Long> nanos = new HashMap<>();
        Map<Long, String> names = new HashMap<>();
        for (ThreadInfo t : mx.getThreadInfo(mx.getAllThreadIds())) {
            if (t != null && counted(sink, t.getThreadName())) {
                long cpu = mx.getThreadCpuTime(t.getThreadId());
                if (cpu >= 0) { // -1: it ended since
                    nanos.put(t.getThreadId(), cpu);
                    names.put(t.getThreadId(), t.getThreadName());
                }
            }
        }
        return new Times(nanos, names);
    }

    /**
     * The sink's threads over the whole run, sampled every {@value #SAMPLE_MILLIS} ms until
     * interrupted, each thread's last reading kept: a thread's CPU time can no longer be read once
     * it ended, and a bounded job's tasks end with it. A sink's work comes in bursts, a window's
     * parts when it fires and a commit per checkpoint, so a stretch of a few windows holds one
     * burst more or less from round to round; the whole run holds every window's once. What a
     * thread spent after its last sample (at most {@value #SAMPLE_MILLIS} ms) is not counted.
     */
    static final class WholeRun extends Thread {
        static final long SAMPLE_MILLIS = 20;

        private final BenchRun.Sink sink;
        private final Map<Long, Long> last = new HashMap<>();

        WholeRun(BenchRun.Sink sink) {
            super("sink-threads-sampler");
            this.sink = sink;
            setDaemon(true);
        }

        @Override
        public void run() {
            try {
                while (true) {
                    sample();
                    Thread.sleep(SAMPLE_MILLIS);
                }
            } catch (InterruptedException e) {
                // the run is over
            }
        }

        private synchronized void sample() {
            last.putAll(of(sink).nanos());
        }

        /** Stops sampling, takes one more, and gives the CPU time (ns) of every thread seen. */
        long finish() throws InterruptedException {
            interrupt();
            join();
            sample();
            return last.values().stream().mapToLong(Long::longValue).sum();
        }
    }

    /** CPU time (ns) and name of threads, by thread id, at one moment. */
    record Times(Map<Long, Long> nanos, Map<Long, String> names) {
        /**
         * The CPU the threads alive now spent since {@code earlier}; one born since counts whole (a
         * fixed pool's thread starts with its first task and lives on). One that ended since would
         * take its time along: the sinks' tasks and pools live as long as the job.
         */
        long since(Times earlier) {
            long sum = 0;
            for (Map.Entry<Long, Long> t : nanos.entrySet()) {
                sum += t.getValue() - earlier.nanos.getOrDefault(t.getKey(), 0L);
            }
            return sum;
        }

        List<String> sortedNames() {
            return names.values().stream().sorted().toList();
        }
    }
}
