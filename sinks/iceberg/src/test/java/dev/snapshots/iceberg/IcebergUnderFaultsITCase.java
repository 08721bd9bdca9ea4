package dev.snapshots.iceberg;

import static org.assertj.core.api.Assertions.assertThat;

import dev.snapshots.iceberg.WindowTotals.Payment;
import dev.snapshots.iceberg.WindowTotals.Row;
import dev.snapshots.sink.CanonicalSnapshotSink;
import dev.snapshots.store.StoreSpec;
import dev.snapshots.testkit.FaultProxy;
import dev.snapshots.testkit.FaultProxy.Fault;
import dev.snapshots.testkit.IcebergCatalogs;
import dev.snapshots.testkit.S3ProxyServer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.EnumSet;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.connector.source.util.ratelimit.RateLimiterStrategy;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.RestartStrategyOptions;
import org.apache.flink.connector.datagen.source.DataGeneratorSource;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.windowing.assigners.TumblingEventTimeWindows;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.iceberg.Table;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The reader table under what the sink is for: two deployments of one job version running side by
 * side over the same input, each failing once and restarting from its checkpoint, a flaky store
 * (503, 409, latency) that is also down for a while, and a reader polling {@code main} throughout.
 * Every window the reader ever saw was whole, and at the end every window is on the branch once,
 * equal to the reference.
 */
class IcebergUnderFaultsITCase {
    @RegisterExtension
    static final MiniClusterExtension CLUSTER =
            new MiniClusterExtension(
                    new MiniClusterResourceConfiguration.Builder()
                            .setNumberTaskManagers(1)
                            .setNumberSlotsPerTaskManager(4)
                            .build());

    private static final long SEED = 41;
    private static final int COUNT = 4_000;
    private static final int WINDOWS = 12;

    /** Which deployments have failed once: the failure is injected on the first attempt only. */
    private static final Set<String> FAILED = ConcurrentHashMap.newKeySet();

    @TempDir Path tmp;

    @Test
    void twoDeploymentsFailingOverAFlakyStoreCommitEachWindowOnceAndReadersSeeOnlyWholeWindows()
            throws Exception {
        S3ProxyServer s3 = S3ProxyServer.get();
        String bucket = s3.createBucket("iceberg-faults");
        StoreSpec direct = StoreSpec.parse("s3://" + bucket + "/out").withEndpoint(s3.endpoint());
        IcebergTable table =
                IcebergTable.in(
                        IcebergCatalogs.sqlite(tmp.resolve("catalog.db")), "analytics.payments");
        List<Row> reference = WindowTotals.reference(WindowTotals.payments(SEED, COUNT, WINDOWS));
        Map<Long, List<Row>> expected = byWindow(reference);

        try (FaultProxy proxy = new FaultProxy(s3.endpoint(), SEED)) {
            proxy.inject(0.05, EnumSet.of(Fault.SLOW_DOWN_503, Fault.CONFLICT_409, Fault.LATENCY));
            StoreSpec flaky =
                    StoreSpec.parse("s3://" + bucket + "/out").withEndpoint(proxy.endpoint());
            JobClient blue = start("blue", WindowTotals.sink(flaky, 1, table));
            Thread.sleep(3_000);
            JobClient green = start("green", WindowTotals.sink(flaky, 1, table));
            Thread.sleep(2_000);
            proxy.outage(Duration.ofSeconds(6));

            Map<Long, Set<List<Row>>> seen = new TreeMap<>();
            Set<Integer> seenWhileRunning = new TreeSet<>();
            int polls = 0;
            while (!ended(blue) || !ended(green)) {
                polls++;
                Map<Long, List<Row>> read = readMain(table, direct);
                read.forEach((w, rows) -> seen.computeIfAbsent(w, x -> new HashSet<>()).add(rows));
                seenWhileRunning.add(read.size());
                Thread.sleep(200);
            }
            blue.getJobExecutionResult().get();
            green.getJobExecutionResult().get();
            System.out.printf(
                    "[figures] %d polls of main while the jobs ran, windows seen: %s; %d faults"
                            + " injected%n",
                    polls, seenWhileRunning, proxy.injectedTotal());

            assertThat(seen)
                    .as("every window the reader saw while the jobs ran, as it saw it")
                    .allSatisfy(
                            (window, versions) ->
                                    assertThat(versions).containsOnly(expected.get(window)));
            assertThat(seenWhileRunning)
                    .as("windows on main while the jobs ran")
                    .anyMatch(n -> n > 0 && n < WINDOWS);
            assertThat(FAILED).containsExactlyInAnyOrder("blue", "green");
            assertThat(proxy.injectedTotal()).as("faults injected").isPositive();
        }
        try (IcebergTable.Opened opened = table.open(direct)) {
            Table t = opened.catalog().loadTable(table.identifier());
            assertThat(IcebergTableChecks.windowsCommitted(t, "v1"))
                    .as("one commit per window")
                    .containsExactlyElementsOf(expected.keySet());
            assertThat(IcebergTableChecks.rows(t, t.currentSnapshot()))
                    .containsExactlyInAnyOrderElementsOf(reference);
            assertThat(IcebergTableChecks.dataFiles(t)).doesNotHaveDuplicates();
        }
    }

    private static Map<Long, List<Row>> byWindow(List<Row> rows) {
        Map<Long, List<Row>> windows = new TreeMap<>();
        for (Row r : rows) {
            windows.computeIfAbsent(r.windowStart(), w -> new ArrayList<>()).add(r);
        }
        windows.values().forEach(w -> w.sort(Comparator.comparing(Row::device)));
        return windows;
    }

    private static Map<Long, List<Row>> readMain(IcebergTable table, StoreSpec store)
            throws Exception {
        try (IcebergTable.Opened opened = table.open(store)) {
            if (!opened.catalog().tableExists(table.identifier())) {
                return Map.of();
            }
            Table t = opened.catalog().loadTable(table.identifier());
            return t.currentSnapshot() == null
                    ? Map.of()
                    : byWindow(IcebergTableChecks.rows(t, t.currentSnapshot()));
        }
    }

    private static boolean ended(JobClient job) throws Exception {
        return job.getJobStatus().get().isGloballyTerminalState();
    }

    /**
     * One deployment: the payments at 300 a second, each window about 1.1 s of it; it fails once, a
     * third of the way through, and restarts from its last checkpoint.
     */
    private static JobClient start(String name, CanonicalSnapshotSink<WindowTotals.Total> sink)
            throws Exception {
        Configuration conf = new Configuration();
        conf.set(RestartStrategyOptions.RESTART_STRATEGY, "fixed-delay");
        conf.set(RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_ATTEMPTS, 10);
        conf.set(RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_DELAY, Duration.ofMillis(500));
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
        env.setParallelism(2);
        env.enableCheckpointing(200);
        DataGeneratorSource<Payment> payments =
                new DataGeneratorSource<>(
                        index -> {
                            if (index == COUNT / 3 && FAILED.add(name)) {
                                throw new IllegalStateException(name + " fails once, on purpose");
                            }
                            return WindowTotals.payment(SEED, index, COUNT, WINDOWS);
                        },
                        COUNT,
                        RateLimiterStrategy.perSecond(300),
                        TypeInformation.of(Payment.class));
        sink.writeWindows(
                env.fromSource(
                                payments,
                                WatermarkStrategy.<Payment>forMonotonousTimestamps()
                                        .withTimestampAssigner((p, t) -> p.timeMillis),
                                "payments")
                        .setParallelism(1)
                        .keyBy(WindowTotals.format().keySelector(Payment.class))
                        .window(TumblingEventTimeWindows.of(Duration.ofMillis(WindowTotals.WINDOW)))
                        .aggregate(new WindowTotals.Sum(), new WindowTotals.Stamp()));
        return env.executeAsync(name);
    }
}
