package dev.snapshots.testkit;

import dev.snapshots.format.PartEncoding;
import dev.snapshots.format.PojoRowFormat;
import dev.snapshots.key.ObjectKeys;
import dev.snapshots.key.PartKind;
import dev.snapshots.key.PartMetadata;
import dev.snapshots.key.WorkIdentity;
import dev.snapshots.progress.CompletionPointer;
import dev.snapshots.progress.VersionIdentity;
import dev.snapshots.sink.EncodedPart;
import dev.snapshots.store.Chunks;
import dev.snapshots.store.ObjectStore;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.apache.flink.annotation.PublicEvolving;

/**
 * Job versions of one pipeline with the history a test needs, recorded through the completion
 * pointer as the sink's committer records it: a part in every window of a span, then the mark of a
 * one-writer run that completes the span, so each window gets its manifest. For tests of what reads
 * pointers and manifests (promotion) without running a job. Each part is a real one-row part,
 * stored as the committer stores it, so an audit of the history finds it whole.
 */
@PublicEvolving
public final class PipelineHistory {
    private static final PojoRowFormat<Reading> FORMAT = PojoRowFormat.of(Reading.class, "sensor");

    private final ObjectStore store;
    private final String pipeline;
    private final long windowMillis;

    private PipelineHistory(ObjectStore store, String pipeline, Duration window) {
        this.store = store;
        this.pipeline = pipeline;
        this.windowMillis = window.toMillis();
    }

    public static PipelineHistory of(ObjectStore store, String pipeline, Duration window) {
        return new PipelineHistory(store, pipeline, window);
    }

    /**
     * Job version {@code jobVersion} complete over the windows in [{@code fromMillis}, {@code
     * throughMillis}), both window starts. Called again with a later end, the version catches up.
     */
    public PipelineHistory complete(int jobVersion, long fromMillis, long throughMillis)
            throws IOException {
        // As a writer records it before its first part: the audit fingerprints a version's parts
        // under the scheme its identity names (none: the scheme before identities named one).
        new VersionIdentity(
                        PartKind.SNAPSHOT,
                        pipeline,
                        jobVersion,
                        1,
                        VersionIdentity.schemaFingerprint(FORMAT.schema()),
                        1,
                        "HASH",
                        0,
                        windowMillis,
                        "",
                        ObjectKeys.KEY_SCHEME,
                        PartEncoding.FINGERPRINT_SCHEME)
                .require(store);
        List<CompletionPointer.PublishedPart> parts = new ArrayList<>();
        for (long window = fromMillis; window < throughMillis; window += windowMillis) {
            parts.add(publish(jobVersion, window));
        }
        CompletionPointer.record(
                store,
                new CompletionPointer.Scope(
                        PartKind.SNAPSHOT, pipeline, jobVersion, 1, 1, windowMillis),
                List.of(new CompletionPointer.Mark("run", 1, 0, throughMillis - 1, throughMillis)),
                parts);
        return this;
    }

    private CompletionPointer.PublishedPart publish(int jobVersion, long window)
            throws IOException {
        WorkIdentity id = new WorkIdentity(pipeline, window, windowMillis, jobVersion, 1, 0, 1, "");
        Reading row = new Reading();
        row.sensor = "sensor-" + window;
        EncodedPart part =
                EncodedPart.of(
                        PartKind.SNAPSHOT,
                        FORMAT,
                        1,
                        PartEncoding.FINGERPRINT_SCHEME,
                        List.of(row),
                        new Chunks());
        String key = ObjectKeys.partKey(id);
        store.putIfAbsent(
                key,
                part.file().toByteArray(),
                PartMetadata.of(id, part.fingerprint(), part.rows()));
        return new CompletionPointer.PublishedPart(window, 0, key, part.fingerprint(), part.rows());
    }

    /** The one row of each part. */
    public static final class Reading {
        public String sensor;
    }
}
