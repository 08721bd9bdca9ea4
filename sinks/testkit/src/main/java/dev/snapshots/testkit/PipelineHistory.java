package dev.snapshots.testkit;

import dev.snapshots.key.ObjectKeys;
import dev.snapshots.key.PartKind;
import dev.snapshots.progress.CompletionPointer;
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
 * pointers and manifests (promotion) without running a job; the parts themselves are not stored.
 */
@PublicEvolving
public final class PipelineHistory {
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
        List<CompletionPointer.PublishedPart> parts = new ArrayList<>();
        for (long window = fromMillis; window < throughMillis; window += windowMillis) {
            parts.add(
                    new CompletionPointer.PublishedPart(
                            window,
                            0,
                            ObjectKeys.windowPrefix(
                                            PartKind.SNAPSHOT, pipeline, jobVersion, 1, window)
                                    + "part",
                            "fingerprint",
                            1));
        }
        CompletionPointer.record(
                store,
                new CompletionPointer.Scope(
                        PartKind.SNAPSHOT, pipeline, jobVersion, 1, 1, windowMillis),
                List.of(new CompletionPointer.Mark("run", 1, 0, throughMillis - 1, throughMillis)),
                parts);
        return this;
    }
}
