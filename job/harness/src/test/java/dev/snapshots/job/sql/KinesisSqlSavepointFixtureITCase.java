package dev.snapshots.job.sql;

import static dev.snapshots.job.sql.KinesisTableITCase.MINUTE;
import static dev.snapshots.job.sql.KinesisTableITCase.START;
import static dev.snapshots.job.sql.KinesisTableITCase.neverIdle;
import static dev.snapshots.job.sql.KinesisTableITCase.pointer;
import static dev.snapshots.job.sql.KinesisTableITCase.reference;
import static dev.snapshots.job.sql.KinesisTableITCase.script;
import static dev.snapshots.job.sql.KinesisTableITCase.snapshots;
import static org.assertj.core.api.Assertions.assertThat;

import dev.snapshots.harness.cluster.FileTrees;
import dev.snapshots.harness.cluster.Kinesalite;
import dev.snapshots.harness.testutils.KinesaliteServer;
import dev.snapshots.job.sql.KinesisTableITCase.Order;
import dev.snapshots.job.sql.KinesisTableITCase.Orders;
import dev.snapshots.key.PartKind;
import dev.snapshots.store.StoreSpec;
import dev.snapshots.testkit.StoreKind;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.StateRecoveryOptions;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.runtime.checkpoint.Checkpoints;
import org.apache.flink.runtime.checkpoint.OperatorState;
import org.apache.flink.runtime.checkpoint.metadata.CheckpointMetadata;
import org.apache.flink.runtime.jobgraph.OperatorID;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.hadoop.thirdparty.com.google.common.hash.Hashing;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * A savepoint release 0.2.0 took of examples/orders/orders-kinesis.sql restores in this one, with
 * the query's window state. 0.2.0 added the dead letters' sink beside the query; now it sits
 * upstream of it behind a junction, which moves the generated ids of every operator the planner
 * made (they have no uids). {@code SqlJob} gives them their 0.2.0 ids to restore from ({@link
 * dev.snapshots.sink.JunctionlessIds}).
 *
 * <p>The fixture: two shards with minutes 0-2 of orders, and a savepoint once minutes 0 and 1 are
 * published, so minute 2's aggregates are in the window's state. It is written once by 0.2.0's
 * build with {@code -Dgolden.write=true}, and never again.
 *
 * <p>kinesalite keeps streams in memory, and a shard position names its stream's creation time: no
 * later kinesalite serves the fixture's positions. So the test removes the source's state from a
 * copy of the savepoint (a source without state starts at the stream's start) and reads minutes 3
 * and 4 from a new stream. Minute 2 can then only come from the restored window state: without it
 * Flink refuses the savepoint (state of an operator it cannot map), and with it lost minute 2 would
 * be missing from the output.
 */
class KinesisSqlSavepointFixtureITCase {
    @RegisterExtension
    static final MiniClusterExtension CLUSTER =
            new MiniClusterExtension(
                    new MiniClusterResourceConfiguration.Builder()
                            .setNumberTaskManagers(1)
                            .setNumberSlotsPerTaskManager(4)
                            .build());

    private static final Path FIXTURE =
            Path.of("src/test/resources/savepoints/orders-kinesis-sql-0.2.0").toAbsolutePath();
    private static final int SHARDS = 2;

    @TempDir Path scratch;

    @Test
    void aSavepointOf020RestoresTheQuerysWindowState() throws Exception {
        if (!Files.isDirectory(FIXTURE.resolve("savepoint"))
                && Boolean.getBoolean("golden.write")) {
            writeFixture();
        }
        Path savepoint = withoutSourceState(FIXTURE.resolve("savepoint"), scratch.resolve("sp"));
        Kinesalite kinesis = KinesaliteServer.get();
        Orders later = new Orders(kinesis.client(), "restored", SHARDS, Integer.MAX_VALUE);
        later.windows(3, 5).close();
        StoreSpec store = StoreKind.FILESYSTEM.fresh();
        try {
            JobClient job = start(later.produced().arn(), kinesis.endpoint(), store, savepoint);
            try {
                long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(3);
                while (pointer(store, PartKind.SNAPSHOT) < START + 5 * MINUTE) {
                    if (job.getJobExecutionResult().isDone()) {
                        SqlJob.await(job); // throws with the job's failure: a refused savepoint
                    }
                    assertThat(System.nanoTime()).as("minutes 2-4 published").isLessThan(deadline);
                    Thread.sleep(200);
                }
            } finally {
                if (!job.getJobExecutionResult().isDone()) {
                    job.cancel().get(1, TimeUnit.MINUTES);
                }
            }
            List<Order> expected = new ArrayList<>(later.produced().onTime());
            for (int s = 0; s < SHARDS; s++) {
                expected.addAll(Orders.of(s, 2)); // read by 0.2.0, held in the savepoint
            }
            // Minute 2's earliest orders fall into minute 1, which 0.2.0 published.
            Map<Long, List<String>> published = snapshots(Path.of(store.uri()));
            assertThat(published)
                    .isEqualTo(new TreeMap<>(reference(expected)).tailMap(START + 2 * MINUTE));
            System.out.printf(
                    "FIGURES 0.2.0 kinesis savepoint: minute 2 restored with %d rows%n",
                    published.get(START + 2 * MINUTE).size());
        } finally {
            FileTrees.deleteRecursively(Path.of(store.uri()));
        }
    }

    /** A copy of {@code savepoint} in {@code copy} whose metadata has no state of the source. */
    private static Path withoutSourceState(Path savepoint, Path copy) throws Exception {
        Files.createDirectories(copy);
        try (Stream<Path> files = Files.list(savepoint)) {
            for (Path f : files.toList()) {
                Files.copy(f, copy.resolve(f.getFileName()), StandardCopyOption.REPLACE_EXISTING);
            }
        }
        OperatorID source =
                new OperatorID(
                        Hashing.murmur3_128(0)
                                .hashString("source-kinesis-orders", StandardCharsets.UTF_8)
                                .asBytes());
        CheckpointMetadata metadata;
        try (DataInputStream in =
                new DataInputStream(Files.newInputStream(savepoint.resolve("_metadata")))) {
            metadata =
                    Checkpoints.loadCheckpointMetadata(
                            in, KinesisSqlSavepointFixtureITCase.class.getClassLoader(), "");
        }
        List<OperatorState> kept =
                metadata.getOperatorStates().stream()
                        .filter(s -> !s.getOperatorID().equals(source))
                        .toList();
        assertThat(kept)
                .as("the source's state in the fixture")
                .hasSize(metadata.getOperatorStates().size() - 1);
        try (DataOutputStream out =
                new DataOutputStream(Files.newOutputStream(copy.resolve("_metadata")))) {
            Checkpoints.storeCheckpointMetadata(
                    new CheckpointMetadata(
                            metadata.getCheckpointId(),
                            kept,
                            metadata.getMasterStates(),
                            metadata.getCheckpointProperties()),
                    out);
        }
        return copy;
    }

    /** Minutes 0-2 on two shards, a savepoint once minutes 0 and 1 are published. */
    private static void writeFixture() throws Exception {
        Kinesalite kinesis = KinesaliteServer.get();
        Orders first = new Orders(kinesis.client(), "fixture", SHARDS, Integer.MAX_VALUE);
        first.windows(0, 3);
        StoreSpec store = StoreKind.FILESYSTEM.fresh();
        JobClient job = start(first.produced().arn(), kinesis.endpoint(), store, null);
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(3);
        while (pointer(store, PartKind.SNAPSHOT) < START + 2 * MINUTE) {
            assertThat(System.nanoTime()).as("minutes 0 and 1 published").isLessThan(deadline);
            Thread.sleep(200);
        }
        Path taken =
                Path.of(
                        URI.create(
                                job.stopWithSavepoint(
                                                false,
                                                FIXTURE.toUri().toString(),
                                                SavepointFormatType.CANONICAL)
                                        .get(2, TimeUnit.MINUTES)));
        Files.move(taken, FIXTURE.resolve("savepoint"));
        FileTrees.deleteRecursively(Path.of(store.uri()));
    }

    private static JobClient start(String arn, String endpoint, StoreSpec store, Path savepoint)
            throws Exception {
        Configuration conf = new Configuration();
        if (savepoint != null) {
            conf.set(StateRecoveryOptions.SAVEPOINT_PATH, savepoint.toString());
        }
        // Never idle: the fixture's minute 2 stays open, and the restored job's closes by its rows.
        return SqlJob.start(
                StreamExecutionEnvironment.getExecutionEnvironment(conf),
                SqlScript.parse(neverIdle(script(arn, endpoint, store))),
                "kinesis orders");
    }
}
