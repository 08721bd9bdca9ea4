package dev.snapshots.key;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Assume;
import net.jqwik.api.Combinators;
import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;

/** The contract everything hangs on: same identity, same key; any difference, a different key. */
class ObjectKeysTest {
    private static final long MINUTE = 60_000;
    private static final int FIELDS = 8;

    @Property
    void equalIdentitiesGiveEqualKeys(@ForAll("identities") WorkIdentity id) {
        WorkIdentity copy = new WorkIdentity(id.pipeline(), id.windowStartMillis(), id.windowLengthMillis(), id.jobVersion(),
                id.schemaVersion(), id.bucket(), id.bucketCount(), id.pinnedInputs());
        assertThat(ObjectKeys.partKey(copy)).isEqualTo(ObjectKeys.partKey(id));
    }

    @Property
    void changingAnySingleFieldChangesTheKey(@ForAll("identities") WorkIdentity id, @ForAll @IntRange(max = FIELDS - 1) int field) {
        WorkIdentity changed = withFieldChanged(id, field);
        assertThat(changed).isNotEqualTo(id);
        assertThat(ObjectKeys.partKey(changed)).isNotEqualTo(ObjectKeys.partKey(id));
    }

    @Property
    void aKeyParsesBackToTheFieldsItSpellsOut(@ForAll("identities") WorkIdentity id) {
        ObjectKeys.PartKey parsed = ObjectKeys.parse(ObjectKeys.partKey(id)).orElseThrow();
        assertThat(parsed.pipeline()).isEqualTo(id.pipeline());
        assertThat(parsed.jobVersion()).isEqualTo(id.jobVersion());
        assertThat(parsed.schemaVersion()).isEqualTo(id.schemaVersion());
        assertThat(parsed.windowStartMillis()).isEqualTo(id.windowStartMillis());
        assertThat(parsed.bucket()).isEqualTo(id.bucket());
        assertThat(parsed.bucketCount()).isEqualTo(id.bucketCount());
    }

    @Example
    void theLayoutIsHiveStyleAndPinnedAcrossReleases() {
        WorkIdentity id = new WorkIdentity("orders", Instant.parse("2026-11-30T14:05:00Z").toEpochMilli(), 5 * MINUTE, 3, 1, 1, 4, "");
        assertThat(ObjectKeys.partKey(id))
                .isEqualTo("orders/v=3/schema=1/date=2026-11-30/window=1405/part-00001-of-00004-" + ObjectKeys.digest(id) + ".parquet")
                .isEqualTo(GOLDEN_KEY);
    }

    /** Computed once; a change here means every existing snapshot would be written again under new keys. */
    private static final String GOLDEN_KEY = "orders/v=3/schema=1/date=2026-11-30/window=1405/part-00001-of-00004-d8e96e386039891d.parquet";

    @Example
    void anotherJvmWithAnotherTimeZoneLocaleAndHostComputesTheSameKey() throws Exception {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        ProcessBuilder pb = new ProcessBuilder(java, "-Duser.timezone=Pacific/Kiritimati", "-Duser.language=tr",
                "-Duser.country=TR", "-Dfile.encoding=ISO-8859-1", "-cp", System.getProperty("java.class.path"),
                KeyPrinter.class.getName());
        pb.environment().put("HOSTNAME", "another-host");
        pb.environment().put("ECS_CONTAINER_METADATA_URI_V4", "http://127.0.0.1:9/v4/other-task");
        Process p = pb.redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes()).trim();
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(out).isEqualTo(String.join("\n", KeyPrinter.keys()));
    }

    @Example
    void invalidIdentitiesAreRejectedWithTheRuleTheyBreak() {
        long start = Instant.parse("2026-11-30T14:05:00Z").toEpochMilli();
        assertThatThrownBy(() -> new WorkIdentity("", start, 5 * MINUTE, 1, 1, 0, 4, ""))
                .hasMessageContaining("pipeline name must not be empty");
        assertThatThrownBy(() -> new WorkIdentity("Orders/EU", start, 5 * MINUTE, 1, 1, 0, 4, ""))
                .hasMessageContaining("pipeline name 'Orders/EU' must be 1-63 characters");
        assertThatThrownBy(() -> new WorkIdentity("orders", start, -5 * MINUTE, 1, 1, 0, 4, ""))
                .hasMessageContaining("window length must be a positive whole number of minutes");
        assertThatThrownBy(() -> new WorkIdentity("orders", -5 * MINUTE, 5 * MINUTE, 1, 1, 0, 4, ""))
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

    @Example
    void keysThatAreNotOursDoNotParse() {
        assertThat(ObjectKeys.parse("orders/v=3/_progress.json")).isEmpty();
        assertThat(ObjectKeys.parse("orders/v=3/schema=1/date=2026-11-30/window=1405/part-00001-of-00004.parquet")).isEmpty();
        assertThat(ObjectKeys.parse("orders/v=3/schema=1/date=2026-13-30/window=1405/part-00001-of-00004-0123456789abcdef.parquet"))
                .isEmpty();
    }

    @Example
    void pointersAndTheirLocksAreRecognisedAsTheProtocolsOwnObjects() {
        String progress = ObjectKeys.progressKey(PartKind.SNAPSHOT, "orders", 3);
        String current = ObjectKeys.currentVersionKey("orders");
        assertThat(List.of(progress, ObjectKeys.lockKey(progress), current, ObjectKeys.lockKey(current)))
                .allMatch(ObjectKeys::isPointer);
        assertThat(List.of("orders/v=3/notes.lock", "orders/v=3/_progress.json.bak", "orders/_current.json.old"))
                .noneMatch(ObjectKeys::isPointer);
        assertThat(ObjectKeys.currentVersionPipeline(current)).contains("orders");
        assertThat(ObjectKeys.currentVersionPipeline(progress)).isEmpty();
    }

    @Provide
    Arbitrary<WorkIdentity> identities() {
        Arbitrary<String> pipeline = Arbitraries.strings().withChars("abcxyz019-_").ofMinLength(1).ofMaxLength(20)
                .filter(s -> Character.isLetterOrDigit(s.charAt(0)));
        Arbitrary<Long> length = Arbitraries.of(1L, 5L, 15L, 60L, 1440L).map(m -> m * MINUTE);
        Arbitrary<Long> windowIndex = Arbitraries.longs().between(0, 200_000);
        Arbitrary<Integer> version = Arbitraries.integers().between(0, 1000);
        Arbitrary<Integer> buckets = Arbitraries.integers().between(1, 512);
        Arbitrary<String> pinned = Arbitraries.oneOf(Arbitraries.just(""), Arbitraries.strings().withChars("0123456789abcdef").ofLength(16));
        return Combinators.combine(pipeline, length, windowIndex, version, version, buckets, pinned)
                .flatAs((p, len, w, jv, sv, b, pin) -> Arbitraries.integers().between(0, b - 1)
                        .map(bucket -> new WorkIdentity(p, w * len, len, jv, sv, bucket, b, pin)));
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
            case 0: pipeline = pipeline + "x"; break;
            case 1: start = start + length; break;
            case 2: length = otherAlignedLength(start, length); break;
            case 3: jobVersion++; break;
            case 4: schemaVersion++; break;
            case 5: bucketCount++; break;
            case 6: bucketCount++; bucket = bucketCount - 1; break;
            default: pinned = pinned.isEmpty() ? "ab" : ""; break;
        }
        return new WorkIdentity(pipeline, start, length, jobVersion, schemaVersion, bucket, bucketCount, pinned);
    }

    /** Another window length the start is aligned to; some starts (minute 7 of a day) have none. */
    private static long otherAlignedLength(long start, long length) {
        long minutes = start / MINUTE;
        for (long d = 1; d <= 1440; d++) {
            if (1440 % d == 0 && minutes % d == 0 && d * MINUTE != length) {
                return d * MINUTE;
            }
        }
        Assume.that(false);
        return length;
    }

    /** Prints the keys of a fixed set of identities; run in another JVM by the test above. */
    public static final class KeyPrinter {
        static List<String> keys() {
            List<String> keys = new ArrayList<>();
            long start = Instant.parse("2026-11-30T23:55:00Z").toEpochMilli();
            for (int b = 0; b < 4; b++) {
                keys.add(ObjectKeys.partKey(new WorkIdentity("orders", start, 5 * MINUTE, 7, 2, b, 4, "")));
            }
            keys.add(ObjectKeys.partKey(new WorkIdentity("i-orders", 0, MINUTE, 0, 0, 0, 1, "0f")));
            return keys;
        }

        public static void main(String[] args) {
            System.out.println(String.join("\n", keys()));
        }
    }
}
