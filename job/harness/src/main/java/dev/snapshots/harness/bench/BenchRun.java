package dev.snapshots.harness.bench;

import dev.snapshots.format.PartEncoding;
import dev.snapshots.format.RowFormat;
import dev.snapshots.job.SnapshotJob;
import dev.snapshots.job.SnapshotPipeline;
import dev.snapshots.job.Sources;
import dev.snapshots.job.WindowAggregate;
import dev.snapshots.job.config.JobConfig;
import dev.snapshots.job.config.JobOptions;
import dev.snapshots.job.ingest.Ingested;
import dev.snapshots.job.source.IndexedSource;
import dev.snapshots.job.source.RawRecord;
import dev.snapshots.job.source.TelemetryGenerator;
import java.io.IOException;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.stream.LongStream;
import org.apache.avro.generic.GenericRecord;
import org.apache.flink.annotation.Internal;
import org.apache.flink.api.common.JobStatus;
import org.apache.flink.api.common.serialization.BulkWriter;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.RestartStrategyOptions;
import org.apache.flink.connector.datagen.source.GeneratorFunction;
import org.apache.flink.connector.file.sink.FileSink;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.io.SimpleVersionedSerializer;
import org.apache.flink.core.plugin.PluginUtils;
import org.apache.flink.metrics.Gauge;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.sink.filesystem.BucketAssigner;
import org.apache.flink.streaming.api.functions.sink.filesystem.bucketassigners.SimpleVersionedStringSerializer;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;

/**
 * One benchmark run, in a JVM of its own so its peak RSS and GC are its own: the job's pipeline
 * (generator, parse, watermarks, five-minute windows, per-key aggregates) ending in one of three
 * sinks. Writes one JSON document of what it measured.
 *
 * <pre>
 * java -cp ... dev.snapshots.harness.bench.BenchRun SINK EVENTS KEYS BUCKETS STORE_URI ENDPOINT RESULT_FILE CHECKPOINT_INTERVAL PUBLISH_CONCURRENCY [MAX_DRIFT]
 * </pre>
 *
 * <p>With MAX_DRIFT, a catch-up: the input is {@value #LANES} splits over the same hours of event
 * time whose densities go 1 to {@value #LANES} times a base, all read from the start as a backlog:
 * a reader takes a record from each split in turn, so the sparse ones race ahead in event time.
 * MAX_DRIFT is the watermark alignment ({@code 0s}: none).
 */
@Internal
public final class BenchRun {
    /** The sinks compared: the upper bound, what users would otherwise pick, and ours. */
    enum Sink {
        DISCARDING("discarding"),
        FILESINK("filesink"),
        OURS("snapshots"),
        /**
         * Ours with the window at {@link #REDISTRIBUTED_WINDOW_PARALLELISM}, which splits B's
         * buckets: its rows go by their key to the writers (at the largest parallelism below it
         * that keeps buckets whole, the one {@link #OURS} writes at), which hold them until their
         * window's watermark. The cost of a user's parallelism that does not keep buckets whole.
         */
        REDISTRIBUTED("snapshots");

        /** The name its operators carry in the job graph, and its task threads with them. */
        final String operators;

        Sink(String operators) {
            this.operators = operators;
        }

        boolean ours() {
            return this == OURS || this == REDISTRIBUTED;
        }
    }

    static final int PARALLELISM = 2;

    /**
     * Splits the buckets of every B below 128: its subtasks' key groups start at 43 and 86 of 128.
     */
    static final int REDISTRIBUTED_WINDOW_PARALLELISM = PARALLELISM + 1;

    static final int WINDOWS_MINIMUM = 4;

    /**
     * Throughput is measured between the moments both generator splits passed 20% and 90% of their
     * records: a job runs for days, so neither the JIT's warm-up (seconds of compilation on 2
     * cores) nor the final flush belongs in its rate. The whole run's rate is reported too.
     */
    static final double STEADY_FROM = 0.2;

    static final double STEADY_TO = 0.9;

    /**
     * Per split: when it passed {@link #STEADY_FROM}, when it passed {@link #STEADY_TO} (nanoTime).
     */
    static final AtomicLongArray MARKS = new AtomicLongArray(2 * PARALLELISM);

    /** At each of {@link #MARKS}: this JVM's CPU time (ns), and the bytes its threads allocated. */
    static final AtomicLongArray CPU_MARKS = new AtomicLongArray(2 * PARALLELISM);

    static final AtomicLongArray ALLOCATED_MARKS = new AtomicLongArray(2 * PARALLELISM);

    /** At each of {@link #MARKS}: the CPU time (ns) of the JIT's compiler threads. */
    static final AtomicLongArray JIT_MARKS = new AtomicLongArray(2 * PARALLELISM);

    /** At each of {@link #MARKS}: the CPU time of the measured sink's own threads. */
    static final AtomicReferenceArray<SinkThreads.Times> SINK_MARKS =
            new AtomicReferenceArray<>(2 * PARALLELISM);

    /** The sink this JVM's run ends in, whose threads {@link #SINK_MARKS} time. */
    static volatile Sink measured;

    /** Splits of a catch-up run: densities differ tenfold. */
    static final int LANES = 10;

    private BenchRun() {}

    public static void main(String[] args) throws Exception {
        Sink sink = Sink.valueOf(args[0]);
        measured = sink;
        long events = Long.parseLong(args[1]);
        int keys = Integer.parseInt(args[2]);
        int buckets = Integer.parseInt(args[3]);
        String storeUri = args[4];
        String endpoint = args[5];
        Path result = Path.of(args[6]);
        String checkpointInterval = args[7];
        String publishConcurrency = args[8];
        String maxDrift = args.length > 9 ? args[9] : null;
        // A catch-up checkpoints every 2 s, so its state is sampled often enough to see it grow.
        String interval = maxDrift == null ? checkpointInterval : "2s";

        // Enough events per window that nearly every key appears in each: twice the keys. A
        // catch-up spreads its events over many windows instead, its densest split at twice the
        // keys.
        long perWindow = maxDrift != null ? 2L * keys : Math.max(2L * keys, events / 40);
        long windows = Math.max(WINDOWS_MINIMUM, events / perWindow);
        List<String> flags =
                new ArrayList<>(
                        List.of(
                                "--store",
                                sink.ours() ? storeUri : "file:///unused",
                                "--windows",
                                Long.toString(windows),
                                "--events-per-window",
                                Long.toString(perWindow),
                                "--keys",
                                Integer.toString(keys),
                                "--buckets",
                                Integer.toString(buckets),
                                "--bad-every",
                                "0",
                                "--late-every",
                                "0",
                                "--checkpoint-interval",
                                interval,
                                "--publish-concurrency",
                                publishConcurrency,
                                // The sinks' runs read two interleaved splits that move through
                                // event time together: alignment would only throttle them (a
                                // split at the maximum waits up to a second for the next one,
                                // and the generator covers five minutes of event time in a
                                // fraction of that) and hide the sinks' costs behind the wait.
                                "--max-drift",
                                maxDrift == null ? "0s" : maxDrift,
                                "--parallelism",
                                Integer.toString(PARALLELISM)));
        if (sink.ours() && !endpoint.isEmpty()) {
            flags.addAll(List.of("--endpoint", endpoint));
        }
        JobConfig config = JobConfig.parse(flags.toArray(new String[0]));
        Lanes lanes = new Lanes(config, events);
        long total =
                maxDrift == null
                        ? Sources.generatorCount(config) / 2 * 2
                        : lanes.total(); // the generator's splits are exact halves

        Configuration conf = SnapshotJob.embeddedConfiguration();
        // A run that failed measures nothing: it ends, rather than restart and count some input
        // twice (or refuse the same way forever, as SinkThreads does a sink chained to others).
        conf.set(RestartStrategyOptions.RESTART_STRATEGY, "none");
        conf.setString(
                "metrics.reporter.bench.factory.class", BenchMetrics.Factory.class.getName());
        if (!endpoint
                .isEmpty()) { // FileSink's s3a:// (the Hadoop S3 plugin) against the same S3Proxy
            conf.setString("s3.endpoint", endpoint);
            conf.setString("s3.path.style.access", "true");
            conf.setString("s3.access-key", "local");
            conf.setString("s3.secret-key", "local");
        }
        FileSystem.initialize(
                conf,
                PluginUtils.createPluginManagerFromRootFolder(conf)); // s3a:// for FileSink on S3
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
        env.setParallelism(PARALLELISM);
        env.setMaxParallelism(SnapshotPipeline.MAX_PARALLELISM);
        env.enableCheckpointing(config.get(JobOptions.CHECKPOINT_INTERVAL).toMillis());

        DataStream<Ingested> judged =
                maxDrift == null
                        ? Sources.indexed(
                                env,
                                config,
                                new Interleaved(Sources.generatorFunction(config), total),
                                total,
                                PARALLELISM,
                                null,
                                "generator")
                        : Sources.indexed(
                                env,
                                config,
                                new IndexedSource<>(
                                        lanes,
                                        lanes.sizes,
                                        Sources.judge(config),
                                        TypeInformation.of(Ingested.class),
                                        null),
                                "generator");
        SnapshotPipeline.Streams streams = SnapshotPipeline.streams(config, judged);
        streams.rejected().sinkTo(new DiscardingSink<>());
        // The sink's threads are timed apart from the window's (SinkThreads): its writer must not
        // run in the window's task. As shipped, ours is chained to the window and FileSink would
        // be too; here every sink gets the window's rows over a forward exchange alike, and its
        // task thread deserializes them.
        streams.aggregates().disableChaining();
        WindowAggregate.Format format = new WindowAggregate.Format();
        switch (sink) {
            case DISCARDING:
                streams.aggregates().sinkTo(new DiscardingSink<>()).name("discarding");
                break;
            case FILESINK:
                streams.aggregates()
                        .sinkTo(
                                FileSink.forBulkFormat(
                                                new org.apache.flink.core.fs.Path(storeUri),
                                                parquet(format))
                                        .withBucketAssigner(new ByWindow())
                                        .build())
                        .name("filesink");
                break;
            case REDISTRIBUTED:
                streams.aggregates().setParallelism(REDISTRIBUTED_WINDOW_PARALLELISM);
                SnapshotPipeline.writeSnapshots(config, streams.aggregates());
                break;
            default:
                SnapshotPipeline.writeSnapshots(config, streams.aggregates());
        }

        MemorySampler memory = new MemorySampler();
        memory.start();
        SinkThreads.WholeRun sinkThreads = new SinkThreads.WholeRun(sink);
        sinkThreads.start();
        JobClient job = env.executeAsync("bench " + sink);
        while (job.getJobStatus().get() != JobStatus.RUNNING
                && !job.getJobStatus().get().isTerminalState()) {
            Thread.sleep(20);
        }
        long started = System.nanoTime();
        long cpuBefore = cpuNanos();
        long gcBefore = gcMillis();
        job.getJobExecutionResult().get();
        double seconds = (System.nanoTime() - started) / 1e9;
        long cpu = cpuNanos() - cpuBefore;
        long gcPause = gcMillis() - gcBefore;
        long sinkCpu = sinkThreads.finish();
        memory.interrupt();
        memory.sample();
        // The steady state starts when the later split passes its first mark, and ends when the
        // later one passes its second: the figures taken at those two marks bound it.
        int from = MARKS.get(0) >= MARKS.get(2) ? 0 : 2;
        int to = MARKS.get(1) >= MARKS.get(3) ? 1 : 3;
        double steadySeconds = (MARKS.get(to) - MARKS.get(from)) / 1e9;
        double steadyEvents = (STEADY_TO - STEADY_FROM) * total;

        Map<String, Object> out = new LinkedHashMap<>();
        out.put("sink", sink.name().toLowerCase(Locale.ROOT));
        out.put("events", total);
        out.put("windows", maxDrift == null ? windows : lanes.windows);
        out.put("keys", keys);
        out.put("buckets", buckets);
        out.put("seconds", seconds);
        out.put(
                "eventsPerSecond",
                maxDrift == null
                        ? (STEADY_TO - STEADY_FROM) * total / steadySeconds
                        : total / seconds);
        out.put("eventsPerSecondOverall", total / seconds);
        if (maxDrift == null) {
            out.put("cpuNanosPerEvent", (CPU_MARKS.get(to) - CPU_MARKS.get(from)) / steadyEvents);
            out.put(
                    "allocatedBytesPerEvent",
                    (ALLOCATED_MARKS.get(to) - ALLOCATED_MARKS.get(from)) / steadyEvents);
            out.put(
                    "jitCpuNanosPerEvent",
                    (JIT_MARKS.get(to) - JIT_MARKS.get(from)) / steadyEvents);
            out.put(
                    "sinkCpuNanosPerEvent",
                    SINK_MARKS.get(to).since(SINK_MARKS.get(from)) / steadyEvents);
            out.put("sinkThreads", SINK_MARKS.get(to).sortedNames());
        }
        out.put("cpuNanosPerEventOverall", cpu / (double) total);
        out.put("sinkCpuNanosPerEventOverall", sinkCpu / (double) total);
        for (String histogram : List.of("commitMillis", "pointerMillis")) {
            out.put(
                    histogram,
                    BenchMetrics.COMMITS.entrySet().stream()
                            .filter(e -> e.getKey().startsWith(histogram + "/"))
                            .flatMapToLong(e -> LongStream.of(e.getValue()))
                            .sorted()
                            .toArray());
        }
        out.put("writtenPerSubtask", BenchMetrics.WRITTEN);
        out.put("lateAtWindow", BenchMetrics.LATE_AT_WINDOW.get());
        out.put("peakRssBytes", peakRss());
        out.put("gcPauseMillisPerMinute", gcPause * 60 / seconds);
        out.put("oldGenBytes", memory.oldGen());
        out.put("checkpointBytes", memory.checkpointed());
        Files.writeString(result, new ObjectMapper().writeValueAsString(out));
        System.exit(0); // the MiniCluster's threads would keep the JVM
    }

    /**
     * The generator's two splits are the two halves of the index range; this maps them onto the
     * stream so that both advance through event time together and each gets as many even as odd
     * records (the generator writes timestamps differently for the two), so neither split races
     * ahead and holds windows open in the other's wake.
     */
    static final class Interleaved implements GeneratorFunction<Long, RawRecord> {
        private final TelemetryGenerator generator;
        private final long half;
        private final long steadyFrom;
        private final long steadyTo;

        Interleaved(TelemetryGenerator generator, long total) {
            this.generator = generator;
            this.half = total / 2;
            this.steadyFrom = (long) (half * STEADY_FROM);
            this.steadyTo = (long) (half * STEADY_TO);
        }

        @Override
        public RawRecord map(Long i) {
            int split = i < half ? 0 : 1;
            long j = i - split * half;
            if (j == steadyFrom || j == steadyTo) {
                int mark = 2 * split + (j == steadyFrom ? 0 : 1);
                MARKS.set(mark, System.nanoTime());
                JIT_MARKS.set(mark, jitNanos());
                CPU_MARKS.set(mark, cpuNanos());
                SINK_MARKS.set(mark, SinkThreads.of(measured));
                ALLOCATED_MARKS.set(mark, allocatedBytes());
            }
            return generator.map(2 * j + (j % 2 == 0 ? split : 1 - split));
        }
    }

    /**
     * A catch-up's input: split k (of {@value #LANES}) is a stream of its own with k + 1 tenths of
     * the configured events per window, all over the same windows: as many windows as {@code
     * events} fill at the sum of those densities.
     */
    static final class Lanes implements GeneratorFunction<Long, RawRecord> {
        private final TelemetryGenerator[] lanes = new TelemetryGenerator[LANES];
        final long[] sizes = new long[LANES];
        final long windows;
        private final long[] starts = new long[LANES];

        Lanes(JobConfig c, long events) {
            long perWindow = c.get(JobOptions.EVENTS_PER_WINDOW);
            this.windows = Math.max(WINDOWS_MINIMUM, events / (perWindow * (LANES + 1) / 2));
            for (int k = 0; k < LANES; k++) {
                int density = (int) Math.max(1, perWindow * (k + 1) / LANES);
                lanes[k] =
                        new TelemetryGenerator(
                                c.start().toEpochMilli(),
                                c.get(JobOptions.SEED) + k,
                                (int) c.get(JobOptions.KEYS),
                                c.windowLength().toMillis(),
                                density,
                                0,
                                0,
                                c.get(JobOptions.OUT_OF_ORDERNESS).toMillis(),
                                (int) c.get(JobOptions.MAX_RECORD_BYTES));
                sizes[k] = windows * density;
                starts[k] = k == 0 ? 0 : starts[k - 1] + sizes[k - 1];
            }
        }

        long total() {
            return starts[LANES - 1] + sizes[LANES - 1];
        }

        @Override
        public RawRecord map(Long i) {
            int k = LANES - 1;
            while (starts[k] > i) {
                k--;
            }
            return lanes[k].map(i - starts[k]);
        }
    }

    /**
     * FileSink's Parquet writer: parquet-avro from an Avro record per row, as FileSink users write
     * Parquet, with our parts' Parquet settings. Ours writes the same rows from their fields.
     */
    static BulkWriter.Factory<WindowAggregate> parquet(RowFormat<WindowAggregate> format) {
        BulkWriter.Factory<GenericRecord> records = PartEncoding.parquetWriters(format.schema());
        return out -> {
            BulkWriter<GenericRecord> writer = records.create(out);
            return new BulkWriter<>() {
                @Override
                public void addElement(WindowAggregate row) throws IOException {
                    writer.addElement(format.toRecord(row));
                }

                @Override
                public void flush() throws IOException {
                    writer.flush();
                }

                @Override
                public void finish() throws IOException {
                    writer.finish();
                }
            };
        };
    }

    /** FileSink buckets: one directory per window, as our keys have. */
    static final class ByWindow implements BucketAssigner<WindowAggregate, String> {
        @Override
        public String getBucketId(WindowAggregate row, Context context) {
            return "window=" + row.windowStart;
        }

        @Override
        public SimpleVersionedSerializer<String> getSerializer() {
            return SimpleVersionedStringSerializer.INSTANCE;
        }
    }

    /**
     * Every half second, the old generation's occupancy (what survived young collections, window
     * state included) and the size of the job's last completed checkpoint (its state alone). G1
     * leaves garbage in the old generation until a concurrent cycle, so the first can rise for a
     * while in any run; the second is exact, and flat over the run means nothing accumulates in
     * state as windows pass.
     */
    static final class MemorySampler extends Thread {
        private final List<Long> oldGen = new ArrayList<>();
        private final List<Long> checkpointed = new ArrayList<>();

        MemorySampler() {
            setDaemon(true);
        }

        @Override
        public void run() {
            try {
                while (true) {
                    Thread.sleep(500);
                    sample();
                }
            } catch (InterruptedException e) {
                // the run is over
            }
        }

        /** Also called once after the run, so even a short one has its final checkpoint's size. */
        synchronized void sample() {
            long used = 0;
            for (MemoryPoolMXBean pool : ManagementFactory.getMemoryPoolMXBeans()) {
                if (pool.getType() == MemoryType.HEAP && pool.getName().contains("Old")) {
                    used += pool.getUsage().getUsed();
                }
            }
            oldGen.add(used);
            Gauge<?> size = BenchMetrics.lastCheckpointSize;
            if (size != null && size.getValue() instanceof Number n && n.longValue() > 0) {
                checkpointed.add(n.longValue());
            }
        }

        synchronized List<Long> oldGen() {
            return List.copyOf(oldGen);
        }

        synchronized List<Long> checkpointed() {
            return List.copyOf(checkpointed);
        }
    }

    /**
     * This JVM's CPU time, user and system, over all its threads: the job's tasks and whatever they
     * make others do (the collectors, the JIT, the committer's publishers and the S3 client), which
     * per-thread times of the task threads would leave out. The run's JVM runs nothing else.
     */
    static long cpuNanos() {
        return ((com.sun.management.OperatingSystemMXBean)
                        ManagementFactory.getOperatingSystemMXBean())
                .getProcessCpuTime();
    }

    /**
     * CPU time (ns) of this JVM's JIT compiler threads, from /proc/self/task (0 where there is
     * none): HotSpot's compiler threads are no Java threads, so ThreadMXBean does not see them. The
     * runs' JVMs keep their compiler threads for good (-XX:-UseDynamicNumberOfCompilerThreads), so
     * none takes its time along when it ends.
     */
    static long jitNanos() {
        long ticks = 0;
        try (DirectoryStream<Path> tasks = Files.newDirectoryStream(Path.of("/proc/self/task"))) {
            for (Path task : tasks) {
                String stat;
                try {
                    stat = Files.readString(task.resolve("stat"));
                } catch (IOException ended) {
                    continue;
                }
                int close = stat.lastIndexOf(')');
                if (stat.substring(stat.indexOf('(') + 1, close).contains("CompilerThre")) {
                    // After the name: the state (field 3), ..., utime and stime (fields 14, 15).
                    String[] f = stat.substring(close + 2).split(" ");
                    ticks += Long.parseLong(f[11]) + Long.parseLong(f[12]);
                }
            }
        } catch (IOException notLinux) {
            return 0;
        }
        return ticks * 10_000_000L; // in USER_HZ ticks, 100 a second on Linux
    }

    /**
     * Bytes allocated so far by the threads alive now (HotSpot counts per thread, TLABs included).
     * A thread that ended between two readings takes its bytes along; the task threads live for the
     * whole run, and they allocate nearly everything.
     */
    static long allocatedBytes() {
        com.sun.management.ThreadMXBean threads =
                (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        return Arrays.stream(threads.getThreadAllocatedBytes(threads.getAllThreadIds()))
                .filter(b -> b > 0)
                .sum();
    }

    /**
     * Time the collectors spent, summed over all of them: for G1 and ParallelGC the young and full
     * (or mixed) collections, which stop the world, and G1's remark and cleanup pauses.
     */
    private static long gcMillis() {
        return ManagementFactory.getGarbageCollectorMXBeans().stream()
                .mapToLong(GarbageCollectorMXBean::getCollectionTime)
                .filter(t -> t > 0)
                .sum();
    }

    /** Peak resident set size of this JVM (VmHWM), or -1 where /proc is not there. */
    static long peakRss() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
                if (line.startsWith("VmHWM:")) {
                    return Long.parseLong(line.replaceAll("\\D", "")) * 1024;
                }
            }
        } catch (IOException e) {
            // not Linux
        }
        return -1;
    }
}
