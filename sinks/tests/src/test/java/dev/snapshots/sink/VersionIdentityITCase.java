package dev.snapshots.sink;

import static dev.snapshots.sink.SnapshotSinkITCase.awaitParts;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.snapshots.format.PartEncoding;
import dev.snapshots.format.RowFormat;
import dev.snapshots.key.ObjectKeys;
import dev.snapshots.key.PartKind;
import dev.snapshots.key.PartMetadata;
import dev.snapshots.progress.VersionIdentity;
import dev.snapshots.progress.VersionIdentity.IdentityMismatchException;
import dev.snapshots.store.ObjectStore;
import dev.snapshots.store.StoreSpec;
import dev.snapshots.testkit.StoreKind;
import dev.snapshots.testutils.CountingMetricGroup;
import dev.snapshots.testutils.KeyTotal;
import dev.snapshots.testutils.Readings;
import dev.snapshots.testutils.SnapshotTestJob;
import dev.snapshots.testutils.StoreContents;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;
import java.util.stream.Stream;
import org.apache.avro.Schema;
import org.apache.avro.SchemaBuilder;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericRecord;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.runtime.execution.SuppressRestartsException;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * One identity per job version: a run whose B, bucketing or window length differs from what its
 * version was first written with is refused before it writes anything, with both values and the
 * fix. Tried as a user would: a finished run, then a redeploy with one setting edited.
 */
class VersionIdentityITCase {
    @RegisterExtension
    static final MiniClusterExtension CLUSTER =
            new MiniClusterExtension(
                    new MiniClusterResourceConfiguration.Builder()
                            .setNumberTaskManagers(1)
                            .setNumberSlotsPerTaskManager(4)
                            .build());

    private static final Readings READINGS = Readings.of(4, 60_000, 40, 16);

    static Stream<Arguments> edits() {
        return Stream.of(
                Arguments.of(
                        "B 4 to 8",
                        (UnaryOperator<SnapshotTestJob>) j -> j.bucketCount(8),
                        "buckets (B) 4 (recorded), 8 (this run)"),
                Arguments.of(
                        "key groups to hash",
                        (UnaryOperator<SnapshotTestJob>) j -> j.bucketing(Bucketing.HASH),
                        "bucketing KEY_GROUPS (recorded), HASH (this run)"),
                Arguments.of(
                        "window 1 to 2 minutes",
                        (UnaryOperator<SnapshotTestJob>)
                                j ->
                                        SnapshotTestJob.over(Readings.of(2, 120_000, 40, 16))
                                                .store(j.store()),
                        "window length PT1M (recorded), PT2M (this run)"),
                Arguments.of(
                        "a column added, the schema version kept",
                        (UnaryOperator<SnapshotTestJob>) j -> j.rowFormat(new WithNote()),
                        "schema (its fingerprint) "
                                + VersionIdentity.schemaFingerprint(KeyTotal.SCHEMA)
                                + " (recorded), "
                                + VersionIdentity.schemaFingerprint(WithNote.SCHEMA)
                                + " (this run)"));
    }

    /** KeyTotal with one more column, as a user adds a field to their row type. */
    static final class WithNote implements RowFormat<KeyTotal> {
        private static final long serialVersionUID = 1L;
        static final Schema SCHEMA =
                SchemaBuilder.record("KeyTotal")
                        .namespace("dev.snapshots.test")
                        .fields()
                        .requiredString("key")
                        .requiredLong("window_start")
                        .requiredLong("count")
                        .requiredLong("sum")
                        .optionalString("note")
                        .endRecord();

        @Override
        public Schema schema() {
            return SCHEMA;
        }

        @Override
        public String key(KeyTotal row) {
            return row.key;
        }

        @Override
        public GenericRecord toRecord(KeyTotal row) {
            GenericRecord total = new KeyTotal.Format().toRecord(row);
            GenericRecord r = new GenericData.Record(SCHEMA);
            KeyTotal.SCHEMA.getFields().forEach(f -> r.put(f.name(), total.get(f.name())));
            return r;
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("edits")
    void aRedeployWithOneSettingEditedIsRefusedBeforeItWrites(
            String name, UnaryOperator<SnapshotTestJob> edit, String named) throws Exception {
        StoreSpec store = StoreKind.S3_INLINE.fresh();
        SnapshotTestJob.over(READINGS).store(store).run();
        List<String> before = everything(store);

        assertThatThrownBy(() -> edit.apply(SnapshotTestJob.over(READINGS).store(store)).start())
                .isInstanceOf(IdentityMismatchException.class)
                .hasMessageContaining("readings v=1 was first written with other settings")
                .hasMessageContaining(named)
                .hasMessageContaining("--job-version 2");
        assertThat(everything(store)).as("nothing written").isEqualTo(before);

        edit.apply(SnapshotTestJob.over(READINGS).store(store)).jobVersion(2).run();
        try (ObjectStore s = store.open()) {
            assertThat(VersionIdentity.read(s, PartKind.SNAPSHOT, "readings", 2)).isPresent();
        }
    }

    /**
     * A job version first written by 0.1, whose identity record has no schema: a run under the same
     * settings goes on, and its schema is not compared with a record that never had one.
     */
    @Test
    void anIdentityRecordedWithoutASchemaIsNotComparedOnIt() throws Exception {
        StoreSpec store = StoreKind.FILESYSTEM.fresh();
        recordedByAnEarlierRelease(store, "");

        SnapshotTestJob.over(READINGS).store(store).rowFormat(new WithNote()).run();

        assertThat(everything(store)).anyMatch(k -> k.contains("part-00000-of-00004"));
    }

    /**
     * A job version whose identity 0.2.0 recorded names no fingerprint scheme: its parts keep
     * Avro's (scheme 1), so this release's executions and 0.2.0's fingerprint a part alike, and so
     * does an audit; a new job version records the typed scheme and its parts carry that one.
     */
    @Test
    void aVersionRecordedWithoutAFingerprintSchemeKeepsAvrosAndANewVersionGetsTheTypedOne()
            throws Exception {
        StoreSpec recordedBefore = StoreKind.FILESYSTEM.fresh();
        recordedByAnEarlierRelease(
                recordedBefore,
                "\"schema\": \"" + VersionIdentity.schemaFingerprint(KeyTotal.SCHEMA) + "\", ");
        StoreSpec fresh = StoreKind.FILESYSTEM.fresh();

        SnapshotTestJob.over(READINGS).store(recordedBefore).run();
        SnapshotTestJob.over(READINGS).store(fresh).run();

        assertThat(partSchemes(recordedBefore)).containsExactly(PartEncoding.FINGERPRINT_AVRO);
        assertThat(partSchemes(fresh)).containsExactly(PartEncoding.FINGERPRINT_TYPED);
        try (ObjectStore s = fresh.open()) {
            assertThat(VersionIdentity.read(s, PartKind.SNAPSHOT, "readings", 1))
                    .map(VersionIdentity::fingerprintScheme)
                    .contains(PartEncoding.FINGERPRINT_TYPED);
        }
    }

    /**
     * Records v=1's identity as an earlier release wrote it: 0.1 without {@code schema} ({@code
     * schemaField} empty), 0.2 with it; neither names a fingerprint scheme.
     */
    private static void recordedByAnEarlierRelease(StoreSpec store, String schemaField)
            throws Exception {
        try (ObjectStore s = store.open()) {
            s.putIfAbsent(
                    ObjectKeys.identityKey(PartKind.SNAPSHOT, "readings", 1),
                    ("{\"bucketing\": \"KEY_GROUPS\", \"buckets\": 4, \"format\": 1,"
                                    + " \"jobVersion\": 1, \"keyScheme\": 1, \"maxParallelism\":"
                                    + " 128, \"pinnedInputs\": \"\", \"pipeline\": \"readings\","
                                    + " \"recordedAt\": \"2026-11-30T12:00:00Z\", "
                                    + schemaField
                                    + "\"schemaVersion\": 1, \"windowLengthMillis\": 60000}")
                            .getBytes(StandardCharsets.UTF_8),
                    Map.of());
        }
    }

    /** The schemes whose fingerprint of a part's rows, read back, is the one its metadata holds. */
    private static Set<Integer> partSchemes(StoreSpec spec) throws Exception {
        Set<Integer> schemes = new TreeSet<>();
        try (ObjectStore store = spec.open()) {
            List<String> parts = new ArrayList<>();
            store.list(
                    ObjectKeys.versionPrefix("readings", 1),
                    o -> {
                        if (ObjectKeys.parse(o.key()).isPresent()) {
                            parts.add(o.key());
                        }
                    });
            assertThat(parts).isNotEmpty();
            for (String key : parts) {
                List<GenericRecord> rows =
                        PartEncoding.decode(store.get(key).orElseThrow().content());
                String stored =
                        store.head(key).orElseThrow().metadata().get(PartMetadata.FINGERPRINT);
                for (int scheme :
                        new int[] {PartEncoding.FINGERPRINT_AVRO, PartEncoding.FINGERPRINT_TYPED}) {
                    if (PartEncoding.fingerprint(rows, KeyTotal.SCHEMA, 1, scheme).equals(stored)) {
                        schemes.add(scheme);
                    }
                }
            }
        }
        return schemes;
    }

    @Test
    void aSavepointRestoredUnderAnotherBIsRefused(@TempDir Path savepoints) throws Exception {
        StoreSpec store = StoreKind.FILESYSTEM.fresh();
        JobClient first =
                SnapshotTestJob.over(Readings.of(12, 60_000, 40, 16))
                        .store(store)
                        .eventsPerSecond(100)
                        .start();
        awaitParts(store, 4);
        String savepoint =
                first.stopWithSavepoint(
                                false, savepoints.toUri().toString(), SavepointFormatType.CANONICAL)
                        .get(2, TimeUnit.MINUTES);
        List<String> before = everything(store);

        assertThatThrownBy(
                        () ->
                                SnapshotTestJob.over(Readings.of(12, 60_000, 40, 16))
                                        .store(store)
                                        .bucketCount(8)
                                        .fromSavepoint(savepoint)
                                        .start())
                .isInstanceOf(IdentityMismatchException.class)
                .hasMessageContaining("buckets (B) 4 (recorded), 8 (this run)");
        assertThat(everything(store)).isEqualTo(before);
    }

    /** A writer opened any other way (a job built where the store was out of reach) refuses too. */
    @Test
    void aWriterRefusesAnotherIdentityWithoutRestarts() throws Exception {
        StoreSpec store = StoreKind.FILESYSTEM.fresh();
        SnapshotTestJob.over(READINGS).store(store).run();
        SnapshotSinkConfig<KeyTotal> eightBuckets =
                CanonicalSnapshotSink.<KeyTotal>builder()
                        .pipeline(SnapshotTestJob.PIPELINE)
                        .jobVersion(1)
                        .bucketCount(8)
                        .windowLength(java.time.Duration.ofMinutes(1))
                        .store(store)
                        .rowFormat(new KeyTotal.Format())
                        .build()
                        .config();
        try (ObjectStore s = store.open()) {
            assertThatThrownBy(
                            () ->
                                    Preflight.inWriter(
                                            eightBuckets,
                                            128,
                                            s,
                                            new CountingMetricGroup().counter("retries"),
                                            true))
                    .isInstanceOf(SuppressRestartsException.class)
                    .hasRootCauseInstanceOf(IdentityMismatchException.class);
        }
    }

    private static List<String> everything(StoreSpec spec) throws Exception {
        try (ObjectStore store = spec.open()) {
            return StoreContents.keys(store, "");
        }
    }
}
