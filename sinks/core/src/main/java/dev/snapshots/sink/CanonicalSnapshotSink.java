package dev.snapshots.sink;

import java.io.IOException;
import java.time.Duration;
import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.api.connector.sink2.Committer;
import org.apache.flink.api.connector.sink2.CommitterInitContext;
import org.apache.flink.api.connector.sink2.Sink;
import org.apache.flink.api.connector.sink2.SinkWriter;
import org.apache.flink.api.connector.sink2.SupportsCommitter;
import org.apache.flink.api.connector.sink2.WriterInitContext;
import org.apache.flink.core.io.SimpleVersionedSerializer;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.DataStreamSink;

/**
 * Publishes each {@link SnapshotPart} as exactly one object at a key derived from the logical work,
 * however many times (restarts, overlapping deployments) the part is computed.
 *
 * <pre>
 *  SnapshotPart ──► SnapshotWriter ───committables───► SnapshotCommitter ──► object store
 *  (window,bucket)   encode Parquet, fingerprint;      after the checkpoint:
 *                    stage (upload / temp file)        create-if-absent at the key
 *                    or carry inline;                  412 ► compare fingerprints:
 *                    + one progress mark (watermark)     equal: collapsed; different: divergence evidence
 *                    per checkpoint                    then the mark ► completion pointer (_progress.json,
 *                                                        compare-and-swap, forward only)
 * </pre>
 *
 * <p>The key never mentions the task, attempt or job id that computed it, so a second execution of
 * the same work meets the first one's object and collapses into it.
 */
@PublicEvolving
public final class CanonicalSnapshotSink<T>
        implements Sink<SnapshotPart<T>>, SupportsCommitter<SnapshotCommittable> {
    private static final long serialVersionUID = 1L;

    /**
     * The assembling operator's max parallelism when neither the builder nor the environment sets
     * one: Flink's own floor.
     */
    static final int DEFAULT_MAX_PARALLELISM = 128;

    private final SnapshotSinkConfig<T> config;

    CanonicalSnapshotSink(SnapshotSinkConfig<T> config) {
        this.config = config;
    }

    public static <T> CanonicalSnapshotSinkBuilder<T> builder() {
        return new CanonicalSnapshotSinkBuilder<>();
    }

    public SnapshotSinkConfig<T> config() {
        return config;
    }

    /**
     * The whole output, with the builder's settings given once: routes each window's rows to one
     * part per bucket, keyed so that the buckets spread over the key groups (and over the subtasks
     * at any parallelism), and writes the parts with this sink. The assembling operator and the
     * sink get the builder's {@link CanonicalSnapshotSinkBuilder#uids uids}.
     *
     * @param windowResults rows of closed windows, each with its window's timestamp, as a window
     *     function emits them
     */
    public DataStreamSink<SnapshotPart<T>> assemble(DataStream<T> windowResults) {
        int maxParallelism =
                config.maxParallelism() > 0
                        ? config.maxParallelism()
                        : windowResults.getExecutionEnvironment().getMaxParallelism() > 0
                                ? windowResults.getExecutionEnvironment().getMaxParallelism()
                                : DEFAULT_MAX_PARALLELISM;
        return PartAssembler.assemble(
                        windowResults,
                        config.rowFormat(),
                        windowResults.getType(),
                        Duration.ofMillis(config.windowLengthMillis()),
                        config.bucketCount(),
                        maxParallelism,
                        config.assemblyUid())
                .sinkTo(this)
                .name(config.sinkUid())
                .uid(config.sinkUid());
    }

    @Override
    public SinkWriter<SnapshotPart<T>> createWriter(WriterInitContext context) throws IOException {
        return new SnapshotWriter<>(config, context);
    }

    /** Flink 1.20 still declares this abstract; it is never called when the method above exists. */
    @Override
    @Deprecated
    public SinkWriter<SnapshotPart<T>> createWriter(InitContext context) throws IOException {
        throw new UnsupportedOperationException(
                "this sink needs a WriterInitContext (Flink 1.19 or later)");
    }

    @Override
    public Committer<SnapshotCommittable> createCommitter(CommitterInitContext context) {
        return new SnapshotCommitter(config, context.metricGroup());
    }

    @Override
    public SimpleVersionedSerializer<SnapshotCommittable> getCommittableSerializer() {
        return new SnapshotCommittableSerializer();
    }
}
