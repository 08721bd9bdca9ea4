package dev.snapshots.testutils;

import dev.snapshots.format.PartEncoding;
import dev.snapshots.key.ObjectKeys;
import dev.snapshots.key.ObjectKeys.PartKey;
import dev.snapshots.key.PartKind;
import dev.snapshots.key.PartMetadata;
import dev.snapshots.progress.VersionIdentity;
import dev.snapshots.store.ObjectStore;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.apache.avro.generic.GenericRecord;

/** What a store holds for one pipeline version, read back and decoded for assertions. */
public final class StoreContents {
    /** Every object key per logical part: a correct store has exactly one per part. */
    public final Map<PartRef, List<String>> keys = new TreeMap<>();

    public final Map<PartRef, Set<KeyTotal>> rows = new TreeMap<>();

    /** Parts whose metadata fingerprint does not match their decoded content. */
    public final List<String> fingerprintMismatches = new ArrayList<>();

    /** Parts whose metadata lacks the writer's provenance or the versions. */
    public final List<String> missingProvenance = new ArrayList<>();

    public final List<String> divergenceEvidence = new ArrayList<>();
    public final List<String> unexpected = new ArrayList<>();

    /** Every object key under {@code prefix}, protocol objects included. */
    public static List<String> keys(ObjectStore store, String prefix) throws IOException {
        List<String> keys = new ArrayList<>();
        store.list(prefix, o -> keys.add(o.key()));
        return keys;
    }

    public static StoreContents read(ObjectStore store, String pipeline, int jobVersion)
            throws IOException {
        StoreContents c = new StoreContents();
        List<String> all = new ArrayList<>();
        store.list(ObjectKeys.versionPrefix(pipeline, jobVersion), o -> all.add(o.key()));
        int scheme =
                VersionIdentity.fingerprintScheme(store, PartKind.SNAPSHOT, pipeline, jobVersion);
        for (String key : all) {
            if (ObjectKeys.isProtocolObject(key) || ObjectKeys.parseManifest(key).isPresent()) {
                continue;
            }
            PartKey parsed = ObjectKeys.parse(key).orElse(null);
            if (parsed == null) {
                c.unexpected.add(key);
                continue;
            }
            PartRef ref = new PartRef(parsed.windowStartMillis(), parsed.bucket());
            c.keys.computeIfAbsent(ref, r -> new ArrayList<>()).add(key);
            List<GenericRecord> records =
                    PartEncoding.decode(store.get(key).orElseThrow().content());
            Set<KeyTotal> totals = new HashSet<>();
            records.forEach(r -> totals.add(KeyTotal.fromRecord(r)));
            c.rows.put(ref, totals);
            Map<String, String> metadata = store.head(key).orElseThrow().metadata();
            String stored = metadata.get(PartMetadata.FINGERPRINT);
            for (String required :
                    List.of(
                            PartMetadata.WRITER_JOB,
                            PartMetadata.WRITER_HOST,
                            PartMetadata.WRITER_TASK,
                            PartMetadata.JOB_VERSION,
                            PartMetadata.SCHEMA_VERSION,
                            PartMetadata.ROWS)) {
                if (metadata.getOrDefault(required, "").isEmpty()) {
                    c.missingProvenance.add(key + " lacks " + required);
                }
            }
            if (!PartEncoding.fingerprint(records, KeyTotal.SCHEMA, 1, scheme).equals(stored)) {
                c.fingerprintMismatches.add(key);
            }
        }
        store.list(
                ObjectKeys.DIVERGENCE_PREFIX + ObjectKeys.versionPrefix(pipeline, jobVersion),
                o -> c.divergenceEvidence.add(o.key()));
        return c;
    }

    /** Parts held by more than one object. */
    public Map<PartRef, List<String>> duplicated() {
        Map<PartRef, List<String>> d = new TreeMap<>();
        keys.forEach(
                (ref, ks) -> {
                    if (ks.size() > 1) {
                        d.put(ref, ks);
                    }
                });
        return d;
    }
}
