package dev.snapshots.iceberg;

import dev.snapshots.format.PojoRowFormat;
import dev.snapshots.progress.ReaderTable;
import dev.snapshots.sink.CanonicalSnapshotSink;
import dev.snapshots.store.StoreSpec;
import java.io.Serializable;
import java.math.BigDecimal;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.function.Consumer;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.functions.AggregateFunction;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.connector.source.util.ratelimit.RateLimiterStrategy;
import org.apache.flink.connector.datagen.source.DataGeneratorSource;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.windowing.ProcessWindowFunction;
import org.apache.flink.streaming.api.windowing.assigners.TumblingEventTimeWindows;
import org.apache.flink.streaming.api.windowing.windows.TimeWindow;
import org.apache.flink.table.annotation.DataTypeHint;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.flink.util.Collector;

/**
 * A small job for the reader table's tests: payments in, a total per device and ten-minute window
 * out, with the window's start as a column (what the Iceberg table is partitioned by) and a
 * decimal, so Iceberg's types are exercised. Its reference is computed in plain Java.
 */
final class WindowTotals {
    static final long WINDOW = 600_000L;
    static final long START = 1_796_083_200_000L; // 2026-12-01T00:00Z
    static final int BUCKETS = 4;

    /** One payment. A Flink POJO; serializable for the slow source's generator. */
    public static class Payment implements Serializable {
        private static final long serialVersionUID = 1L;

        public String device;
        public long timeMillis;
        public BigDecimal amount;
    }

    /** A row of the output. A Flink POJO. */
    public static class Total {
        public String device;
        public Instant window_start;
        public long payments;

        @DataTypeHint("DECIMAL(12, 2)")
        public BigDecimal amount = BigDecimal.ZERO;
    }

    /** A row as readers compare it. */
    record Row(String device, long windowStart, long payments, BigDecimal amount) {}

    private WindowTotals() {}

    static List<Payment> payments(long seed, int count, int windows) {
        List<Payment> payments = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            payments.add(payment(seed, i, count, windows));
        }
        return payments;
    }

    /**
     * Payment {@code index} of {@code count} spread evenly over {@code windows}: in time order, as
     * the job's monotonous watermarks need (a late payment would be dropped), and a pure function
     * of its index, so a generator source and the reference agree.
     */
    static Payment payment(long seed, long index, int count, int windows) {
        Random random = new Random(seed * 1_000_003L + index);
        Payment p = new Payment();
        p.device = "device-" + random.nextInt(40);
        p.timeMillis = START + index * windows * WINDOW / count;
        p.amount = BigDecimal.valueOf(random.nextInt(100_000), 2);
        return p;
    }

    static List<Row> reference(List<Payment> payments) {
        Map<String, Row> rows = new TreeMap<>();
        for (Payment p : payments) {
            long start = p.timeMillis - Math.floorMod(p.timeMillis, WINDOW);
            rows.merge(
                    start + "/" + p.device,
                    new Row(p.device, start, 1, p.amount),
                    (a, b) ->
                            new Row(
                                    a.device(),
                                    start,
                                    a.payments() + 1,
                                    a.amount().add(b.amount())));
        }
        return List.copyOf(rows.values());
    }

    static CanonicalSnapshotSink<Total> sink(StoreSpec store, int jobVersion, ReaderTable table) {
        var builder =
                CanonicalSnapshotSink.<Total>builder()
                        .pipeline("payments")
                        .jobVersion(jobVersion)
                        .bucketCount(BUCKETS)
                        .windowLength(Duration.ofMillis(WINDOW))
                        .store(store)
                        .rowFormat(format());
        return (table == null ? builder : builder.readerTable(table)).build();
    }

    static PojoRowFormat<Total> format() {
        return PojoRowFormat.of(Total.class, "device");
    }

    /** The cluster the job runs on: one TaskManager with a slot per subtask. */
    static MiniClusterExtension cluster() {
        return cluster(1);
    }

    /** A cluster for {@code jobs} jobs at once. */
    static MiniClusterExtension cluster(int jobs) {
        return new MiniClusterExtension(
                new MiniClusterResourceConfiguration.Builder()
                        .setNumberTaskManagers(1)
                        .setNumberSlotsPerTaskManager(2 * jobs)
                        .build());
    }

    /** Runs the bounded job to its end at parallelism 2. */
    static void run(List<Payment> payments, CanonicalSnapshotSink<Total> sink) throws Exception {
        StreamExecutionEnvironment env = environment(100);
        sink.writeWindows(totals(env.fromData(Payment.class, payments.toArray(Payment[]::new))));
        env.execute("payments");
    }

    /**
     * Starts the job with the payments emitted {@code perSecond}, in time order, and checkpoints
     * every 200 ms: its windows complete one by one while it runs. {@code sinks} writes the totals.
     */
    static JobClient start(List<Payment> payments, int perSecond, Consumer<DataStream<Total>> sinks)
            throws Exception {
        StreamExecutionEnvironment env = environment(200);
        sinks.accept(totals(slowly(env, payments, perSecond)));
        return env.executeAsync("payments");
    }

    static StreamExecutionEnvironment environment(long checkpointMillis) {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setParallelism(2);
        env.enableCheckpointing(checkpointMillis);
        return env;
    }

    /** The payments from one source subtask, so in time order, at most {@code perSecond}. */
    static DataStream<Payment> slowly(
            StreamExecutionEnvironment env, List<Payment> payments, int perSecond) {
        List<Payment> all = new ArrayList<>(payments);
        return env.fromSource(
                        new DataGeneratorSource<>(
                                index -> all.get(index.intValue()),
                                all.size(),
                                RateLimiterStrategy.perSecond(perSecond),
                                TypeInformation.of(Payment.class)),
                        WatermarkStrategy.noWatermarks(),
                        "payments")
                .setParallelism(1);
    }

    /** The totals per device and window, each with its window's start. */
    static DataStream<Total> totals(DataStream<Payment> payments) {
        return payments.assignTimestampsAndWatermarks(
                        WatermarkStrategy.<Payment>forMonotonousTimestamps()
                                .withTimestampAssigner((p, t) -> p.timeMillis))
                .keyBy(format().keySelector(Payment.class))
                .window(TumblingEventTimeWindows.of(Duration.ofMillis(WINDOW)))
                .aggregate(new Sum(), new Stamp());
    }

    static final class Sum implements AggregateFunction<Payment, Total, Total> {
        @Override
        public Total createAccumulator() {
            return new Total();
        }

        @Override
        public Total add(Payment p, Total t) {
            t.device = p.device;
            t.payments++;
            t.amount = t.amount.add(p.amount);
            return t;
        }

        @Override
        public Total getResult(Total t) {
            return t;
        }

        @Override
        public Total merge(Total a, Total b) {
            a.payments += b.payments;
            a.amount = a.amount.add(b.amount);
            return a;
        }
    }

    static final class Stamp extends ProcessWindowFunction<Total, Total, String, TimeWindow> {
        @Override
        public void process(String key, Context ctx, Iterable<Total> totals, Collector<Total> out) {
            Total t = totals.iterator().next();
            t.window_start = Instant.ofEpochMilli(ctx.window().getStart());
            out.collect(t);
        }
    }
}
