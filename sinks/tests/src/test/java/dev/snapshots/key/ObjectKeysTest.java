package dev.snapshots.key;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.snapshots.testkit.RandomInputs;
import java.time.Instant;
import java.util.List;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** The contract everything hangs on: same identity, same key; any difference, a different key. */
class ObjectKeysTest {
    private static final long MINUTE = 60_000;
    private static final int FIELDS = 8;
    private static final long[] WINDOW_MINUTES = {1, 5, 15, 60, 1440};

    static LongStream seeds() {
        return LongStream.rangeClosed(1, 1000);
    }

    @ParameterizedTest(name = "seed {0}")
    @MethodSource("seeds")
    void equalIdentitiesGiveEqualKeys(long seed) {
        WorkIdentity id = identity(new RandomInputs(seed));
        WorkIdentity copy =
                new WorkIdentity(
                        id.pipeline(),
                        id.windowStartMillis(),
                        id.windowLengthMillis(),
                        id.jobVersion(),
                        id.schemaVersion(),
                        id.bucket(),
                        id.bucketCount(),
                        id.pinnedInputs());
        assertThat(ObjectKeys.partKey(copy)).as("seed %d", seed).isEqualTo(ObjectKeys.partKey(id));
    }

    @ParameterizedTest(name = "seed {0}")
    @MethodSource("seeds")
    void changingAnySingleFieldChangesTheKey(long seed) {
        RandomInputs in = new RandomInputs(seed);
        WorkIdentity id = identity(in);
        int field = in.between(0, FIELDS - 1);
        WorkIdentity changed = withFieldChanged(id, field);
        assertThat(changed).as("seed %d, field %d", seed, field).isNotEqualTo(id);
        assertThat(ObjectKeys.partKey(changed))
                .as("seed %d, field %d", seed, field)
                .isNotEqualTo(ObjectKeys.partKey(id));
    }

    @ParameterizedTest(name = "seed {0}")
    @MethodSource("seeds")
    void aKeyParsesBackToTheFieldsItSpellsOut(long seed) {
        WorkIdentity id = identity(new RandomInputs(seed));
        String key = ObjectKeys.partKey(id);
        ObjectKeys.PartKey parsed =
                ObjectKeys.parse(key)
                        .orElseThrow(
                                () ->
                                        new AssertionError(
                                                "seed " + seed + ": " + key + " does not parse"));
        assertThat(parsed.pipeline()).as("seed %d", seed).isEqualTo(id.pipeline());
        assertThat(parsed.jobVersion()).as("seed %d", seed).isEqualTo(id.jobVersion());
        assertThat(parsed.schemaVersion()).as("seed %d", seed).isEqualTo(id.schemaVersion());
        assertThat(parsed.windowStartMillis())
                .as("seed %d", seed)
                .isEqualTo(id.windowStartMillis());
        assertThat(parsed.bucket()).as("seed %d", seed).isEqualTo(id.bucket());
        assertThat(parsed.bucketCount()).as("seed %d", seed).isEqualTo(id.bucketCount());
    }

    @Test
    void theLayoutIsHiveStyleAndPinnedAcrossReleases() {
        WorkIdentity id =
                new WorkIdentity(
                        "orders",
                        Instant.parse("2026-11-30T14:05:00Z").toEpochMilli(),
                        5 * MINUTE,
                        3,
                        1,
                        1,
                        4,
                        "");
        assertThat(ObjectKeys.partKey(id))
                .isEqualTo(
                        "orders/v=3/schema=1/date=2026-11-30/window=1405/part-00001-of-00004-"
                                + ObjectKeys.digest(id)
                                + ".parquet")
                .isEqualTo(GOLDEN_KEY);
    }

    /**
     * Computed once; a change here means every existing snapshot would be written again under new
     * keys.
     */
    private static final String GOLDEN_KEY =
            "orders/v=3/schema=1/date=2026-11-30/window=1405/part-00001-of-00004-d8e96e386039891d.parquet";

    @Test
    void invalidIdentitiesAreRejectedWithTheRuleTheyBreak() {
        long start = Instant.parse("2026-11-30T14:05:00Z").toEpochMilli();
        assertThatThrownBy(() -> new WorkIdentity("", start, 5 * MINUTE, 1, 1, 0, 4, ""))
                .hasMessageContaining("pipeline name must not be empty");
        assertThatThrownBy(() -> new WorkIdentity("Orders/EU", start, 5 * MINUTE, 1, 1, 0, 4, ""))
                .hasMessageContaining("pipeline name 'Orders/EU' must be 1-63 characters");
        assertThatThrownBy(() -> new WorkIdentity("orders", start, -5 * MINUTE, 1, 1, 0, 4, ""))
                .hasMessageContaining("window length must be a positive whole number of minutes");
        assertThatThrownBy(
                        () -> new WorkIdentity("orders", -5 * MINUTE, 5 * MINUTE, 1, 1, 0, 4, ""))
                .hasMessageContaining("window start must not be before 1970");
        assertThatThrownBy(() -> new WorkIdentity("orders", start + 1, 5 * MINUTE, 1, 1, 0, 4, ""))
                .hasMessageContaining("is not aligned to the window length");
        assertThatThrownBy(() -> new WorkIdentity("orders", start, 7 * MINUTE, 1, 1, 0, 4, ""))
                .hasMessageContaining("must divide a day evenly");
        assertThatThrownBy(() -> new WorkIdentity("orders", start, 5 * MINUTE, 1, 1, 4, 4, ""))
                .hasMessageContaining("bucket must be in 0..3, got 4");
        assertThatThrownBy(() -> new WorkIdentity("orders", start, 5 * MINUTE, -1, 1, 0, 4, ""))
                .hasMessageContaining("job version must be >= 0");
        assertThatThrownBy(() -> new WorkIdentity("orders", start, 5 * MINUTE, 1, 1, 0, 4, "../x"))
                .hasMessageContaining("pinned-input fingerprint must be lower-case hex");
    }

    @Test
    void keysThatAreNotOursDoNotParse() {
        assertThat(ObjectKeys.parse("orders/v=3/_progress.json")).isEmpty();
        assertThat(
                        ObjectKeys.parse(
                                "orders/v=3/schema=1/date=2026-11-30/window=1405/part-00001-of-00004.parquet"))
                .isEmpty();
        assertThat(
                        ObjectKeys.parse(
                                "orders/v=3/schema=1/date=2026-13-30/window=1405/part-00001-of-00004-0123456789abcdef.parquet"))
                .isEmpty();
    }

    @Test
    void aVersionDirectoryGivesBackItsJobVersionAndNothingElseDoes() {
        assertThat(ObjectKeys.jobVersion("orders", ObjectKeys.versionPrefix("orders", 12)))
                .hasValue(12);
        assertThat(
                        List.of(
                                "orders/_current.json",
                                "orders/v=/",
                                "orders/v=3x/",
                                "orders-eu/v=3/",
                                "orders/v=3/schema=1/"))
                .allSatisfy(d -> assertThat(ObjectKeys.jobVersion("orders", d)).isEmpty());
    }

    @Test
    void pointersAndTheirLocksAreRecognisedAsTheProtocolsOwnObjects() {
        String progress = ObjectKeys.progressKey(PartKind.SNAPSHOT, "orders", 3);
        String current = ObjectKeys.currentVersionKey("orders");
        assertThat(
                        List.of(
                                progress,
                                ObjectKeys.lockKey(progress),
                                current,
                                ObjectKeys.lockKey(current)))
                .allMatch(ObjectKeys::isPointer);
        assertThat(
                        List.of(
                                "orders/v=3/notes.lock",
                                "orders/v=3/_progress.json.bak",
                                "orders/_current.json.old"))
                .noneMatch(ObjectKeys::isPointer);
        assertThat(ObjectKeys.currentVersionPipeline(current)).contains("orders");
        assertThat(ObjectKeys.currentVersionPipeline(progress)).isEmpty();
    }

    @Test
    void readersRecordsAreNamedWithoutAnUnderscoreAndAreTheProtocolsOwnObjects() {
        long window = Instant.parse("2026-11-30T00:05:00Z").toEpochMilli();
        String complete = ObjectKeys.completeWindowKey("orders", 3, window);
        String promoted = ObjectKeys.promotionKey("orders", 7);
        assertThat(complete).isEqualTo("orders/complete/v3-2026-11-30-0005.json");
        assertThat(promoted).isEqualTo("orders/promoted/00000000000000000007.json");
        assertThat(List.of(complete, promoted))
                .allMatch(ObjectKeys::isProtocolObject)
                .noneMatch(k -> k.contains("/_"));
        assertThat(
                        List.of(
                                "orders/complete/v3/2026-11-30-0005.json",
                                "_deadletter/orders/complete/v3-2026-11-30-0005.json",
                                "orders/notes/v3-2026-11-30-0005.json"))
                .noneMatch(ObjectKeys::isProtocolObject);
    }

    @Test
    void theReaderTablesFilesAreThePipelinesOwnObjects() {
        String table = ObjectKeys.readerTable("orders");
        assertThat(table).isEqualTo("orders/_iceberg");
        assertThat(
                        List.of(
                                table + "/metadata/00003-1f2e.metadata.json",
                                table + "/metadata/snap-6811510674248270484-1-4079.avro"))
                .allMatch(ObjectKeys::isProtocolObject);
        assertThat(List.of("orders/_icebergs/x.json", "_iceberg/metadata/x.json", table))
                .noneMatch(ObjectKeys::isProtocolObject);
    }

    /**
     * A valid identity: a pipeline name of 1-20 characters starting with a letter or digit, any of
     * five window lengths from a minute to a day, one of the first 200,001 windows since 1970,
     * versions 0-1000, 1-512 buckets, and no pinned inputs or a 16-digit fingerprint.
     */
    private static WorkIdentity identity(RandomInputs in) {
        String pipeline = in.string("abcxyz019", 1, 1) + in.string("abcxyz019-_", 0, 19);
        long length = WINDOW_MINUTES[in.between(0, WINDOW_MINUTES.length - 1)] * MINUTE;
        long start = in.between(0, 200_000) * length;
        int jobVersion = in.between(0, 1000);
        int schemaVersion = in.between(0, 1000);
        int bucketCount = in.between(1, 512);
        int bucket = in.between(0, bucketCount - 1);
        String pinned = in.between(0, 1) == 0 ? "" : in.string("0123456789abcdef", 16, 16);
        return new WorkIdentity(
                pipeline, start, length, jobVersion, schemaVersion, bucket, bucketCount, pinned);
    }

    /** The same identity with exactly one field set to another valid value. */
    private static WorkIdentity withFieldChanged(WorkIdentity id, int field) {
        String pipeline = id.pipeline();
        long start = id.windowStartMillis();
        long length = id.windowLengthMillis();
        int jobVersion = id.jobVersion();
        int schemaVersion = id.schemaVersion();
        int bucket = id.bucket();
        int bucketCount = id.bucketCount();
        String pinned = id.pinnedInputs();
        switch (field) {
            case 0:
                pipeline = pipeline + "x";
                break;
            case 1:
                start = start + length;
                break;
            case 2:
                length = otherAlignedLength(start, length);
                break;
            case 3:
                jobVersion++;
                break;
            case 4:
                schemaVersion++;
                break;
            case 5:
                bucketCount++;
                break;
            case 6:
                bucketCount++;
                bucket = bucketCount - 1;
                break;
            default:
                pinned = pinned.isEmpty() ? "ab" : "";
                break;
        }
        return new WorkIdentity(
                pipeline, start, length, jobVersion, schemaVersion, bucket, bucketCount, pinned);
    }

    /**
     * Another window length the start is aligned to; some starts (minute 7 of a day) have none, and
     * skip the case.
     */
    private static long otherAlignedLength(long start, long length) {
        long minutes = start / MINUTE;
        for (long d = 1; d <= 1440; d++) {
            if (1440 % d == 0 && minutes % d == 0 && d * MINUTE != length) {
                return d * MINUTE;
            }
        }
        return Assumptions.abort("no other window length is aligned to minute " + minutes);
    }
}
