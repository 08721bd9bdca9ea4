package dev.snapshots.testutils;

import dev.snapshots.format.RowFormat;
import dev.snapshots.sink.Backoff;
import dev.snapshots.sink.Bucketing;
import dev.snapshots.sink.CanonicalSnapshotSink;
import dev.snapshots.store.StoreSpec;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.functions.AggregateFunction;
import org.apache.flink.api.common.functions.MapFunction;
import org.apache.flink.api.common.state.CheckpointListener;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.connector.source.util.ratelimit.RateLimiterStrategy;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.RestartStrategyOptions;
import org.apache.flink.configuration.StateRecoveryOptions;
import org.apache.flink.connector.datagen.source.DataGeneratorSource;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.windowing.ProcessWindowFunction;
import org.apache.flink.streaming.api.windowing.assigners.TumblingEventTimeWindows;
import org.apache.flink.streaming.api.windowing.windows.TimeWindow;
import org.apache.flink.util.Collector;

/**
 * A small fluent fixture for the pipeline the sink is built for: readings, event-time windows,
 * totals per key, the snapshot sink (chained to the window, or behind the assembling window). Tests
 * vary the store, the identity and the faults; the pipeline stays the same.
 */
public final class SnapshotTestJob {
    public static final String PIPELINE = "readings";
    private static final int MAX_PARALLELISM = 128;

    private static final Map<String, AtomicBoolean> FAILED = new ConcurrentHashMap<>();

    private final Readings readings;
    private StoreSpec store;
    private int jobVersion = 1;
    private int bucketCount = 4;
    private Bucketing bucketing = Bucketing.KEY_GROUPS;
    private int parallelism = 2;
    private int maxParallelism = MAX_PARALLELISM;
    private int eventsPerSecond = 1_000;
    private int inlineThresholdBytes = 1 << 20;
    private Backoff backoff = new Backoff(6, Duration.ofMillis(20), Duration.ofMillis(500));
    private long failAfterEvents = -1;
    private String savepoint;
    private Runnable beforeSubmit = () -> {};
    private RowFormat<KeyTotal> rowFormat = new KeyTotal.Format();
    private final Configuration settings = new Configuration();

    private SnapshotTestJob(Readings readings) {
        this.readings = readings;
    }

    public static SnapshotTestJob over(Readings readings) {
        return new SnapshotTestJob(readings);
    }

    public SnapshotTestJob store(StoreSpec store) {
        this.store = store;
        return this;
    }

    public SnapshotTestJob jobVersion(int jobVersion) {
        this.jobVersion = jobVersion;
        return this;
    }

    public SnapshotTestJob bucketCount(int bucketCount) {
        this.bucketCount = bucketCount;
        return this;
    }

    /** Key groups: the sink chained to the window; hash: behind the assembling window. */
    /** How the totals are written: a schema edited without a new schema version, say. */
    public SnapshotTestJob rowFormat(RowFormat<KeyTotal> rowFormat) {
        this.rowFormat = rowFormat;
        return this;
    }

    public SnapshotTestJob bucketing(Bucketing bucketing) {
        this.bucketing = bucketing;
        return this;
    }

    public SnapshotTestJob parallelism(int parallelism) {
        this.parallelism = parallelism;
        return this;
    }

    public SnapshotTestJob maxParallelism(int maxParallelism) {
        this.maxParallelism = maxParallelism;
        return this;
    }

    public SnapshotTestJob eventsPerSecond(int eventsPerSecond) {
        this.eventsPerSecond = eventsPerSecond;
        return this;
    }

    /** 0 stages every part (multipart upload or temp file) instead of carrying it inline. */
    public SnapshotTestJob inlineThresholdBytes(int bytes) {
        this.inlineThresholdBytes = bytes;
        return this;
    }

    public SnapshotTestJob backoff(Backoff backoff) {
        this.backoff = backoff;
        return this;
    }

    /** Starts from this savepoint (of any job version: a replay bumps it). */
    /** A setting of the job's, as a team's production configuration would give it. */
    public SnapshotTestJob setting(String key, String value) {
        settings.setString(key, value);
        return this;
    }

    /** Runs once the job is built (and its store checked there), before it is submitted. */
    public SnapshotTestJob beforeSubmit(Runnable beforeSubmit) {
        this.beforeSubmit = beforeSubmit;
        return this;
    }

    public SnapshotTestJob fromSavepoint(String savepoint) {
        this.savepoint = savepoint;
        return this;
    }

    /** Throws once, after this many events and at least two completed checkpoints. */
    public SnapshotTestJob failOnceAfter(long events) {
        this.failAfterEvents = events;
        return this;
    }

    public StoreSpec store() {
        return store;
    }

    public int bucketCount() {
        return bucketCount;
    }

    public JobClient start() throws Exception {
        Configuration conf = new Configuration();
        conf.set(RestartStrategyOptions.RESTART_STRATEGY, "fixed-delay");
        conf.set(RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_ATTEMPTS, 50);
        // As text: Flink 1.20.1 writes a Duration option with the JVM's default locale and cannot
        // parse it back under one with other digits ("٢٠٠ ms"), which LocaleIndependenceITCase runs
        // under.
        conf.setString(RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_DELAY.key(), "200 ms");
        if (savepoint != null) {
            conf.set(StateRecoveryOptions.SAVEPOINT_PATH, savepoint);
        }
        conf.addAll(settings);
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
        env.setParallelism(parallelism);
        env.setMaxParallelism(maxParallelism);
        env.enableCheckpointing(150);

        DataStream<Reading> events =
                env.fromSource(
                                new DataGeneratorSource<>(
                                        readings,
                                        readings.count(),
                                        RateLimiterStrategy.perSecond(eventsPerSecond),
                                        TypeInformation.of(Reading.class)),
                                WatermarkStrategy.<Reading>forBoundedOutOfOrderness(
                                                Duration.ofMillis(Readings.MAX_JITTER_MILLIS + 500))
                                        .withTimestampAssigner((r, ts) -> r.timestampMillis),
                                "readings")
                        .uid("readings")
                        .setParallelism(1);
        if (failAfterEvents >= 0) {
            String token = "fail-" + System.nanoTime();
            FAILED.put(token, new AtomicBoolean());
            events =
                    events.map(new FailOnce(token, failAfterEvents))
                            .uid("fail-once")
                            .setParallelism(1);
        }
        DataStream<KeyTotal> totals =
                events.keyBy(r -> r.key)
                        .window(
                                TumblingEventTimeWindows.of(
                                        Duration.ofMillis(readings.windowMillis())))
                        .aggregate(new Total(), new ToKeyTotal())
                        .uid("totals");
        CanonicalSnapshotSink<KeyTotal> sink = sink();
        if (bucketing == Bucketing.KEY_GROUPS) {
            sink.writeWindows(totals);
        } else {
            sink.assemble(totals);
        }
        beforeSubmit.run();
        return env.executeAsync("snapshot-test v" + jobVersion);
    }

    /**
     * The store's conformance and the version's identity, checked now as the job would as it is
     * built: a test that counts requests injects its faults after this.
     */
    public SnapshotTestJob check() {
        sink().check(maxParallelism);
        return this;
    }

    private CanonicalSnapshotSink<KeyTotal> sink() {
        return CanonicalSnapshotSink.<KeyTotal>builder()
                .pipeline(PIPELINE)
                .jobVersion(jobVersion)
                .bucketCount(bucketCount)
                .bucketing(bucketing)
                .windowLength(Duration.ofMillis(readings.windowMillis()))
                .store(store)
                .rowFormat(rowFormat)
                .inlineThresholdBytes(inlineThresholdBytes)
                .retries(backoff)
                .build();
    }

    /** Runs to the end; returns the job id for metric lookups. */
    public JobID run() throws Exception {
        JobClient client = start();
        client.getJobExecutionResult().get();
        return client.getJobID();
    }

    static final class Total implements AggregateFunction<Reading, long[], long[]> {
        @Override
        public long[] createAccumulator() {
            return new long[2];
        }

        @Override
        public long[] add(Reading r, long[] acc) {
            acc[0]++;
            acc[1] += r.value;
            return acc;
        }

        @Override
        public long[] getResult(long[] acc) {
            return acc;
        }

        @Override
        public long[] merge(long[] a, long[] b) {
            return new long[] {a[0] + b[0], a[1] + b[1]};
        }
    }

    static final class ToKeyTotal
            extends ProcessWindowFunction<long[], KeyTotal, String, TimeWindow> {
        @Override
        public void process(
                String key, Context ctx, Iterable<long[]> totals, Collector<KeyTotal> out) {
            long[] t = totals.iterator().next();
            out.collect(new KeyTotal(key, ctx.window().getStart(), t[0], t[1]));
        }
    }

    /**
     * Fails the job once, mid-stream and after checkpoints completed, so committables are restored.
     */
    static final class FailOnce implements MapFunction<Reading, Reading>, CheckpointListener {
        private final String token;
        private final long afterEvents;
        private long seen;
        private int completedCheckpoints;

        FailOnce(String token, long afterEvents) {
            this.token = token;
            this.afterEvents = afterEvents;
        }

        @Override
        public Reading map(Reading r) {
            if (++seen > afterEvents
                    && completedCheckpoints >= 2
                    && FAILED.get(token).compareAndSet(false, true)) {
                throw new IllegalStateException(
                        "injected failure after " + seen + " events (test)");
            }
            return r;
        }

        @Override
        public void notifyCheckpointComplete(long checkpointId) {
            completedCheckpoints++;
        }
    }
}
