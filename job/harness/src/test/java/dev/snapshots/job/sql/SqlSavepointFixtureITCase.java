package dev.snapshots.job.sql;

import static dev.snapshots.job.sql.OrdersFixture.assertOnePartPerWindowAndBucket;
import static dev.snapshots.job.sql.OrdersFixture.awaitPointer;
import static dev.snapshots.job.sql.OrdersFixture.reference;
import static dev.snapshots.job.sql.OrdersFixture.script;
import static dev.snapshots.job.sql.OrdersFixture.watching;
import static dev.snapshots.job.sql.OrdersFixture.windows;
import static org.assertj.core.api.Assertions.assertThat;

import dev.snapshots.harness.cluster.FileTrees;
import dev.snapshots.key.ObjectKeys;
import dev.snapshots.key.PartKind;
import dev.snapshots.key.PartMetadata;
import dev.snapshots.store.ObjectStore;
import dev.snapshots.store.StoreSpec;
import dev.snapshots.testkit.EarlierStore;
import dev.snapshots.testkit.StoreKind;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.StateRecoveryOptions;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.core.type.TypeReference;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.SerializationFeature;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A savepoint of the orders script taken by release 0.2.0 restores in this one, and the job then
 * publishes what 0.2.0 published from it: the same keys and fingerprints, rows equal to the
 * reference. A SQL job's operators have no uids (Flink's planner sets them only for a compiled
 * plan), so its state is matched by hashes of the job graph's shape: an operator the sink adds must
 * not move them. Its {@code store/} holds the job version's identity as 0.2.0 recorded it (see
 * {@link EarlierStore}). The fixture is written once with {@code -Dgolden.write=true} by the
 * release it stands for, and never again.
 *
 * <p>The file source's state names the files it read by absolute path, so the events live at one
 * fixed path under /tmp, removed after the test.
 */
class SqlSavepointFixtureITCase {
    @RegisterExtension
    static final MiniClusterExtension CLUSTER =
            new MiniClusterExtension(
                    new MiniClusterResourceConfiguration.Builder()
                            .setNumberTaskManagers(1)
                            .setNumberSlotsPerTaskManager(4)
                            .build());

    private static final Path FIXTURE =
            Path.of("src/test/resources/savepoints/orders-sql-0.2.0").toAbsolutePath();
    private static final Path EVENTS = Path.of("/tmp/snapshots-orders-savepoint-fixture");
    private static final ObjectMapper JSON =
            new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

    @AfterEach
    void removeEvents() throws Exception {
        FileTrees.deleteRecursively(EVENTS);
    }

    @Test
    void aSavepointOf020RestoresAndPublishesWhat020PublishedFromIt() throws Exception {
        Path published = FIXTURE.resolve("published-after-restore.json");
        if (!Files.exists(published) && Boolean.getBoolean("golden.write")) {
            writeFixture(published);
        }
        Map<String, String> expected =
                JSON.readValue(published.toFile(), new TypeReference<TreeMap<String, String>>() {});

        StoreSpec store = StoreKind.FILESYSTEM.fresh();
        EarlierStore.putInto(FIXTURE.resolve("store"), store);
        assertThat(restoreAndRun(store)).isEqualTo(expected);
        assertOnePartPerWindowAndBucket(store, 1, windows(reference(0, 7), 2, 6));
    }

    /**
     * Hours 0-2 until the pointer passes hours 0 and 1, then a savepoint (hour 2's aggregates in
     * the window's state), then what the restored job publishes once hours 3-6 arrive.
     */
    private static void writeFixture(Path published) throws Exception {
        FileTrees.deleteRecursively(FIXTURE);
        StoreSpec store = StoreKind.FILESYSTEM.fresh();
        Files.createDirectories(EVENTS);
        OrderEvents.write(EVENTS.resolve("hours-0-2.jsonl"), OrderEvents.lines(0, 3));
        JobClient first = start(store, null);
        awaitPointer(store, 1, 2);
        Path taken =
                Path.of(
                        URI.create(
                                first.stopWithSavepoint(
                                                false,
                                                FIXTURE.toUri().toString(),
                                                SavepointFormatType.CANONICAL)
                                        .get(2, TimeUnit.MINUTES)));
        Files.move(taken, FIXTURE.resolve("savepoint"));
        Files.createDirectories(published.getParent());
        JSON.writeValue(published.toFile(), restoreAndRun(StoreKind.FILESYSTEM.fresh()));
    }

    /** Restores the fixture into {@code store} with hours 3-6 to read; hours 2-5's parts. */
    private static Map<String, String> restoreAndRun(StoreSpec store) throws Exception {
        Files.createDirectories(EVENTS);
        OrderEvents.write(EVENTS.resolve("hours-3-6.jsonl"), OrderEvents.lines(3, 7));
        JobClient restored = start(store, FIXTURE.resolve("savepoint").toString());
        awaitPointer(store, 1, 6);
        restored.cancel().get(1, TimeUnit.MINUTES);
        return fingerprints(store, 2, 6);
    }

    private static JobClient start(StoreSpec store, String savepoint) throws Exception {
        Configuration conf = new Configuration();
        if (savepoint != null) {
            conf.set(StateRecoveryOptions.SAVEPOINT_PATH, savepoint);
        }
        return SqlJob.start(
                StreamExecutionEnvironment.getExecutionEnvironment(conf),
                SqlScript.parse(watching(script(store, EVENTS, 1))),
                "orders");
    }

    /** Key to fingerprint of the parts of hours [from, to). */
    private static Map<String, String> fingerprints(StoreSpec spec, int from, int to)
            throws Exception {
        long start = OrderEvents.START.toEpochMilli();
        Map<String, String> parts = new TreeMap<>();
        try (ObjectStore store = spec.open()) {
            List<String> keys = new ArrayList<>();
            store.list(ObjectKeys.versionPrefix("orders", 1), o -> keys.add(o.key()));
            for (String key : keys) {
                ObjectKeys.PartKey part = ObjectKeys.parse(key).orElse(null);
                if (part != null
                        && part.kind() == PartKind.SNAPSHOT
                        && part.windowStartMillis() >= start + from * OrdersReference.HOUR
                        && part.windowStartMillis() < start + to * OrdersReference.HOUR) {
                    parts.put(
                            key,
                            store.head(key).orElseThrow().metadata().get(PartMetadata.FINGERPRINT));
                }
            }
        }
        return parts;
    }
}
