package dev.snapshots.progress;

import dev.snapshots.key.ObjectKeys;
import dev.snapshots.key.PartKind;
import dev.snapshots.store.ObjectStore;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import org.apache.avro.Schema;
import org.apache.avro.SchemaNormalization;
import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.ObjectMapper;

/**
 * Everything a job version's keys and bucket assignment depend on, recorded in the store at its
 * first write ({@code .../v=N/_identity.json}, create-if-absent) and required of every later run of
 * that version.
 *
 * <p>Why: a redeploy that keeps the job version but changes B writes {@code -of-00008-} parts
 * beside {@code -of-00004-} ones, and a reader's glob of {@code v=N/} reads every row twice; a
 * switch of bucketing keeps the keys and moves rows between parts, so a key's rows end up in two
 * parts or in none. Each is one edited setting, and each succeeds silently unless checked.
 *
 * @param schema the parts' Avro schema as its parsing fingerprint (hex): a field added to a row
 *     format without a new schema version would otherwise only show as divergences of every part
 *     computed again; empty in records written before it was kept, which are not compared on it
 * @param maxParallelism the max parallelism key-group buckets are laid out over; 0 where the
 *     bucketing does not depend on it
 * @param windowLengthMillis 0 in a run that takes it from its rows and has had none yet: such an
 *     identity is compared on everything else, and never recorded
 * @param keyScheme {@link ObjectKeys#KEY_SCHEME}
 * @param fingerprintScheme how the version's parts are fingerprinted ({@code
 *     PartEncoding.FINGERPRINT_AVRO} or {@code FINGERPRINT_TYPED}); a record without one was
 *     written before schemes were kept, with scheme {@value #FINGERPRINT_SCHEME_UNRECORDED}. Not
 *     compared: a run takes the recorded one ({@code Preflight}), so a job version keeps the scheme
 *     its first parts were fingerprinted with across releases
 */
@PublicEvolving
public record VersionIdentity(
        PartKind kind,
        String pipeline,
        int jobVersion,
        int schemaVersion,
        String schema,
        int buckets,
        String bucketing,
        int maxParallelism,
        long windowLengthMillis,
        String pinnedInputs,
        int keyScheme,
        int fingerprintScheme) {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final int FORMAT = 1;

    /** The scheme of every part written before identities recorded one: Avro's encoding. */
    public static final int FINGERPRINT_SCHEME_UNRECORDED = 1;

    /** A run's settings differ from what its job version was first written with. */
    public static final class IdentityMismatchException extends IllegalStateException {
        private static final long serialVersionUID = 1L;

        IdentityMismatchException(String message) {
            super(message);
        }
    }

    /** What the store recorded for a job version, if anything. */
    public static Optional<VersionIdentity> read(
            ObjectStore store, PartKind kind, String pipeline, int jobVersion) throws IOException {
        Optional<ObjectStore.VersionedContent> recorded =
                store.get(ObjectKeys.identityKey(kind, pipeline, jobVersion));
        return recorded.isPresent()
                ? Optional.of(parse(kind, recorded.get().content()))
                : Optional.empty();
    }

    /**
     * The fingerprint scheme a job version's parts were written with, for recomputing a part's
     * fingerprint from its file: the recorded one; scheme {@value #FINGERPRINT_SCHEME_UNRECORDED}
     * for a version without a record, since every writer that knows schemes records its identity
     * before its first part.
     */
    public static int fingerprintScheme(
            ObjectStore store, PartKind kind, String pipeline, int jobVersion) throws IOException {
        return read(store, kind, pipeline, jobVersion)
                .map(VersionIdentity::fingerprintScheme)
                .orElse(FINGERPRINT_SCHEME_UNRECORDED);
    }

    /** The {@code schema} of an identity: the Avro schema's parsing fingerprint, in hex. */
    public static String schemaFingerprint(Schema schema) {
        return HexFormat.of().toHexDigits(SchemaNormalization.parsingFingerprint64(schema));
    }

    /**
     * Records this identity if its job version has none, else requires the recorded one to equal
     * it. A version written before identities were recorded gets this one, once its pointer's
     * schema agrees, with the fingerprint scheme its parts were written with (scheme {@value
     * #FINGERPRINT_SCHEME_UNRECORDED}).
     *
     * @return the identity in force: the recorded one, or the one recorded now; its fingerprint
     *     scheme is the one the version's parts take
     * @throws IdentityMismatchException naming each differing setting with both values, and the job
     *     version to use instead
     * @throws IOException if the store cannot be read or written
     */
    public VersionIdentity require(ObjectStore store) throws IOException {
        return check(store, true);
    }

    /**
     * As {@link #require}, but records nothing: compares with the recorded identity if there is
     * one, and passes if there is none. For a check of a job that may never run (the deploy tool's
     * before it stops the running version, a plan): only a run that writes may pin its version's
     * settings, or a mistyped setting in an aborted deploy would refuse the right one for good.
     *
     * @return the identity in force, as {@link #require}, or the one that would be recorded
     * @throws IdentityMismatchException as {@link #require}
     * @throws IOException if the store cannot be read
     */
    public VersionIdentity verify(ObjectStore store) throws IOException {
        return check(store, false);
    }

    private VersionIdentity check(ObjectStore store, boolean record) throws IOException {
        if (record && windowLengthMillis == 0) {
            throw new IllegalStateException(
                    "an identity without its window length cannot be recorded");
        }
        Optional<VersionIdentity> recorded = read(store, kind, pipeline, jobVersion);
        if (recorded.isEmpty()) {
            Optional<Integer> legacySchema =
                    CompletionPointer.schemaVersion(store, kind, pipeline, jobVersion);
            if (legacySchema.isPresent() && legacySchema.get() != schemaVersion) {
                throw new IdentityMismatchException(
                        mismatch(
                                List.of(
                                        difference(
                                                "schema version",
                                                legacySchema.get(),
                                                schemaVersion))));
            }
            VersionIdentity first =
                    legacySchema.isPresent()
                            ? withFingerprintScheme(FINGERPRINT_SCHEME_UNRECORDED)
                            : this;
            if (!record
                    || store.putIfAbsent(
                            ObjectKeys.identityKey(kind, pipeline, jobVersion),
                            first.render(),
                            Map.of())) {
                return first;
            }
            recorded = read(store, kind, pipeline, jobVersion); // another run recorded it first
        }
        List<String> differences = differences(recorded.orElseThrow());
        if (!differences.isEmpty()) {
            throw new IdentityMismatchException(mismatch(differences));
        }
        return recorded.get();
    }

    private VersionIdentity withFingerprintScheme(int scheme) {
        return new VersionIdentity(
                kind,
                pipeline,
                jobVersion,
                schemaVersion,
                schema,
                buckets,
                bucketing,
                maxParallelism,
                windowLengthMillis,
                pinnedInputs,
                keyScheme,
                scheme);
    }

    private List<String> differences(VersionIdentity r) {
        List<String> d = new ArrayList<>();
        add(d, "buckets (B)", r.buckets, buckets);
        add(d, "bucketing", r.bucketing, bucketing);
        add(d, "max parallelism of the buckets", r.maxParallelism, maxParallelism);
        if (windowLengthMillis != 0) {
            add(
                    d,
                    "window length",
                    Duration.ofMillis(r.windowLengthMillis),
                    Duration.ofMillis(windowLengthMillis));
        }
        add(d, "schema version", r.schemaVersion, schemaVersion);
        if (!r.schema.isEmpty()) {
            add(d, "schema (its fingerprint)", r.schema, schema);
        }
        add(d, "pinned inputs", show(r.pinnedInputs), show(pinnedInputs));
        add(d, "key scheme", r.keyScheme, keyScheme);
        return d;
    }

    private static void add(List<String> differences, String what, Object recorded, Object now) {
        if (!recorded.equals(now)) {
            differences.add(difference(what, recorded, now));
        }
    }

    private static String difference(String what, Object recorded, Object now) {
        return what + " " + recorded + " (recorded), " + now + " (this run)";
    }

    private static String show(String pinnedInputs) {
        return pinnedInputs.isEmpty() ? "none" : pinnedInputs;
    }

    private String mismatch(List<String> differences) {
        return pipeline
                + " v="
                + jobVersion
                + (kind == PartKind.SNAPSHOT ? "" : " (" + kind + ")")
                + " was first written with other settings than this run's: "
                + String.join("; ", differences)
                + ". One job version holds one layout: parts of two would be read twice by a"
                + " reader of v="
                + jobVersion
                + ", or split a key's rows between parts. Nothing was written. Run with the"
                + " recorded settings, or start a new job version (--job-version "
                + (jobVersion + 1)
                + "), which replays into a namespace of its own.";
    }

    byte[] render() throws IOException {
        Map<String, Object> doc = new TreeMap<>();
        doc.put("format", FORMAT);
        doc.put("pipeline", pipeline);
        doc.put("jobVersion", jobVersion);
        doc.put("schemaVersion", schemaVersion);
        doc.put("schema", schema);
        doc.put("buckets", buckets);
        doc.put("bucketing", bucketing);
        doc.put("maxParallelism", maxParallelism);
        doc.put("windowLengthMillis", windowLengthMillis);
        doc.put("pinnedInputs", pinnedInputs);
        doc.put("keyScheme", keyScheme);
        doc.put("fingerprintScheme", fingerprintScheme);
        doc.put("recordedAt", Instant.now().toString());
        return JSON.writerWithDefaultPrettyPrinter().writeValueAsBytes(doc);
    }

    private static VersionIdentity parse(PartKind kind, byte[] content) throws IOException {
        JsonNode doc = JSON.readTree(content);
        if (doc.path("format").asInt() > FORMAT) {
            throw new IOException(
                    "the job version's identity record is format "
                            + doc.path("format").asInt()
                            + ", written by a newer release; this one reads up to "
                            + FORMAT);
        }
        return new VersionIdentity(
                kind,
                doc.path("pipeline").asText(),
                doc.path("jobVersion").asInt(),
                doc.path("schemaVersion").asInt(),
                doc.path("schema").asText(),
                doc.path("buckets").asInt(),
                doc.path("bucketing").asText(),
                doc.path("maxParallelism").asInt(),
                doc.path("windowLengthMillis").asLong(),
                doc.path("pinnedInputs").asText(),
                doc.path("keyScheme").asInt(),
                doc.path("fingerprintScheme").asInt(FINGERPRINT_SCHEME_UNRECORDED));
    }
}
