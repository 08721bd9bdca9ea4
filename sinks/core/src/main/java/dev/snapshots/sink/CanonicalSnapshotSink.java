package dev.snapshots.sink;

import dev.snapshots.format.PojoRowFormat;
import java.io.IOException;
import java.util.Collection;
import java.util.List;
import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.api.common.RuntimeExecutionMode;
import org.apache.flink.api.common.functions.MapFunction;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.connector.sink2.Committer;
import org.apache.flink.api.connector.sink2.CommitterInitContext;
import org.apache.flink.api.connector.sink2.SupportsCommitter;
import org.apache.flink.api.connector.sink2.SupportsWriterState;
import org.apache.flink.api.connector.sink2.WriterInitContext;
import org.apache.flink.api.connector.source.Boundedness;
import org.apache.flink.api.dag.Transformation;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.ExecutionOptions;
import org.apache.flink.core.io.SimpleVersionedSerializer;
import org.apache.flink.streaming.api.connector.sink2.CommittableMessage;
import org.apache.flink.streaming.api.connector.sink2.CommittableMessageTypeInfo;
import org.apache.flink.streaming.api.connector.sink2.SupportsPostCommitTopology;
import org.apache.flink.streaming.api.connector.sink2.SupportsPreCommitTopology;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.DataStreamSink;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.transformations.MultipleInputTransformation;
import org.apache.flink.streaming.api.transformations.OneInputTransformation;
import org.apache.flink.streaming.api.transformations.PartitionTransformation;
import org.apache.flink.streaming.api.transformations.WithBoundedness;
import org.apache.flink.streaming.runtime.operators.sink.CommitterOperatorFactory;
import org.apache.flink.streaming.runtime.operators.sink.SinkWriterOperatorFactory;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Publishes each part of (window, bucket) as exactly one object at a key derived from the logical
 * work, however many times (restarts, overlapping deployments) the part is computed.
 *
 * <p>Two ways in, by the output's {@link Bucketing}:
 *
 * <pre>
 *  KEY_GROUPS, {@link #writeWindows}: chained to the window, no second shuffle
 *    keyBy(key) ─► window ─► WindowRowsRelay ─► WindowRowsWriter ─committables─► SnapshotCommitter
 *                            passes rows on      gathers a window's rows
 *                                                per bucket; at the watermark
 *                                                past its end: one part each
 *    a window parallelism that splits a bucket (any above B): writers at the largest below it
 *    that keeps buckets whole
 *    keyBy(key) ─► window ─► keyBy(key) ─► WindowRowsRelay ─► WindowRowsWriter ─► ...
 *                                          holds a window's rows
 *                                          until its watermark
 *  HASH, {@link #assemble}: any stream
 *    rows ─► keyBy(bucket) ─► window (list state) ─► SnapshotPart ─► SnapshotWriter ─► SnapshotCommitter
 *  HASH, {@link #assembleAhead}: the same, ahead of a table source's rows, which pass a junction the
 *    sink's last task feeds, so that a planner keeping what the query's sinks reach keeps the sink
 *
 *  SnapshotWriter: sort, encode Parquet,   SnapshotCommitter, after the checkpoint:
 *  fingerprint; stage (upload / temp file) create-if-absent at the key; 412 ► compare
 *  or carry inline; + one progress mark    fingerprints: equal: collapsed; different:
 *  (watermark) per checkpoint              divergence evidence
 *
 *  every SnapshotCommitter ─published parts and marks─► Completion pointer (one task): when the
 *  last subtask's mark passes a window, its manifest, then the pointer (append-only log)
 * </pre>
 *
 * <p>The key never mentions the task, attempt or job id that computed it, so a second execution of
 * the same work meets the first one's object and collapses into it.
 */
@PublicEvolving
public final class CanonicalSnapshotSink<T>
        implements WriterInitSink<SnapshotPart<T>>,
                SupportsWriterState<SnapshotPart<T>, SnapshotWriter.State>,
                SupportsCommitter<SnapshotCommittable>,
                SupportsPostCommitTopology<SnapshotCommittable> {
    private static final long serialVersionUID = 1L;
    private static final Logger LOG = LoggerFactory.getLogger(CanonicalSnapshotSink.class);

    /**
     * The max parallelism buckets are laid out over when neither the builder nor the environment
     * sets one: Flink's own floor.
     */
    static final int DEFAULT_MAX_PARALLELISM = 128;

    private final SnapshotSinkConfig<T> config;

    /** The max parallelism buckets are laid out over, once a stream is given (0 before). */
    private final int maxParallelism;

    CanonicalSnapshotSink(SnapshotSinkConfig<T> config) {
        this(config, 0);
    }

    private CanonicalSnapshotSink(SnapshotSinkConfig<T> config, int maxParallelism) {
        this.config = config;
        this.maxParallelism = maxParallelism;
    }

    public static <T> CanonicalSnapshotSinkBuilder<T> builder() {
        return new CanonicalSnapshotSinkBuilder<>();
    }

    public SnapshotSinkConfig<T> config() {
        return config;
    }

    /**
     * Writes a window's rows where the window emits them, for {@link Bucketing#KEY_GROUPS}: the
     * sink runs chained to the window, at its parallelism and max parallelism, and closes each
     * (window, bucket) part when the watermark passes the window's end. A window at a parallelism
     * that splits a bucket between subtasks (any above B; 3 for B = 4) keeps it: its rows go by
     * their key to writers at the largest parallelism below it that keeps buckets whole (4 for 8
     * with B = 4, 2 for 3), which hold them until the watermark passes their window. The parts are
     * the same either way, and a savepoint of one restores at a parallelism of the other.
     *
     * @param windowResults the output of an event-time window keyed by {@link
     *     dev.snapshots.format.RowFormat#key}, each row with its window's timestamp (as a window
     *     function emits them), not re-partitioned since
     * @throws IllegalArgumentException if the bucketing is not key groups, a {@link
     *     PojoRowFormat}'s rows come from a window keyed by anything but its key selector, B does
     *     not divide the max parallelism, the sink was built without a window length, or
     *     checkpoints could fall between a window's rows and its watermark (unaligned checkpoints
     *     with interruptible timers or without chaining)
     * @throws IllegalStateException if the store does not refuse a second create-if-absent, or the
     *     job version was first written with another B, bucketing, window length or schema (see
     *     {@link dev.snapshots.store.StoreConformance}, {@link
     *     dev.snapshots.progress.VersionIdentity}); checked here, before the job starts
     */
    public DataStreamSink<T> writeWindows(DataStream<T> windowResults) {
        if (config.bucketing() != Bucketing.KEY_GROUPS) {
            throw new IllegalArgumentException(
                    config.bucketing()
                            + " bucketing gathers a bucket's rows from every subtask: use assemble");
        }
        if (!config.windowLengthKnown()) {
            throw new IllegalArgumentException(
                    "writeWindows closes a window's parts by the window length: set windowLength");
        }
        int maxParallelism = maxParallelism(windowResults);
        int streamMax = windowResults.getTransformation().getMaxParallelism();
        if (streamMax > 0 && streamMax != maxParallelism) {
            throw new IllegalArgumentException(
                    "the window's max parallelism is "
                            + streamMax
                            + " but the sink lays buckets out over "
                            + maxParallelism
                            + ": set the same on both");
        }
        Bucketing.KEY_GROUPS.requireWholeKeyGroups(config.bucketCount(), maxParallelism);
        if (config.rowFormat() instanceof PojoRowFormat<T> pojo
                && windowResults.getTransformation() instanceof OneInputTransformation<?, ?> window
                && window.getStateKeySelector() != null) {
            pojo.requireKeyedBy(window.getStateKeySelector());
        }
        int parallelism = windowResults.getParallelism();
        int writers =
                parallelism > 0
                        ? Bucketing.KEY_GROUPS.largestWholeParallelism(
                                config.bucketCount(), maxParallelism, parallelism)
                        : parallelism;
        if (writers != parallelism) {
            LOG.info(
                    "{}: the window runs at parallelism {}, which splits {} key-group buckets"
                            + " between subtasks; its rows go by their key to {} writers, which"
                            + " keep them whole",
                    config.sinkUid(),
                    parallelism,
                    config.bucketCount(),
                    writers);
        }
        StreamExecutionEnvironment env = windowResults.getExecutionEnvironment();
        if (env.getCheckpointConfig().isUnalignedCheckpointsEnabled()
                && (env.getCheckpointConfig().isUnalignedCheckpointsInterruptibleTimersEnabled()
                        || !env.isChainingEnabled())) {
            throw new IllegalArgumentException(
                    "unaligned checkpoints with interruptible timers ("
                            + CheckpointingOptions.ENABLE_UNALIGNED_INTERRUPTIBLE_TIMERS.key()
                            + ") or without operator chaining let a checkpoint fall between a"
                            + " window's rows and the watermark that closes its parts, and the"
                            + " writer keeps no open rows in state: turn either off");
        }
        requireCheckpoints(windowResults);
        Preflight.atBuild(config, maxParallelism);
        DataStreamSink<T> sink =
                WindowRowsRelay.relay(windowResults, config, maxParallelism, writers)
                        .sinkTo(new WindowRowsSink<>(config, maxParallelism))
                        .name(config.sinkUid())
                        .uid(config.sinkUid());
        if (writers > 0) {
            sink.setParallelism(writers);
        }
        sink.getTransformation().setMaxParallelism(maxParallelism);
        return sink;
    }

    /**
     * The whole output of any stream, with the builder's settings given once: routes each window's
     * rows to one part per bucket through a keyed window of its own, keyed so that the buckets
     * spread over the key groups (and over the subtasks at any parallelism), and writes the parts
     * with this sink. The assembling operator and the sink get the builder's {@link
     * CanonicalSnapshotSinkBuilder#uids uids}.
     *
     * @param windowResults rows of closed windows, each with its window's timestamp, as a window
     *     function emits them
     * @throws IllegalStateException as {@link #writeWindows}: the store or the job version's
     *     identity refused
     */
    public DataStreamSink<SnapshotPart<T>> assemble(DataStream<T> windowResults) {
        int laidOut = maxParallelism(windowResults);
        requireCheckpoints(windowResults);
        Preflight.atBuild(config, laidOut);
        return PartAssembler.assemble(windowResults, config, laidOut, windowResults.getType())
                .sinkTo(new CanonicalSnapshotSink<>(config, laidOut))
                .name(config.sinkUid())
                .uid(config.sinkUid());
    }

    /**
     * As {@link #assemble}, ahead of {@code rows}: publishes {@code windowResults}, and returns
     * {@code rows} unchanged through a junction that the sink's last task also feeds (nothing flows
     * on that edge). For a table source: Flink's planner keeps only the operators the query's sinks
     * reach, so a sink added beside the query is dropped, and one the query's rows pass through is
     * kept, whatever runs the statement (SQL Client, SQL Gateway, {@code executeSql}).
     *
     * <pre>
     *  windowResults ─► keyBy(bucket) ─► window ─► Writer ─► Committer ─► Completion pointer ─┐
     *  rows ──────────────────────────────────────────────────────────────────────────► junction ─► rows
     * </pre>
     *
     * <p>The sink's operators are those Flink expands {@link #assemble}'s sink into, with the same
     * names and uids, so their state in a savepoint of one restores into the other. The junction
     * passes the rows' own watermarks: the rows' event time never waits on the sink's.
     *
     * @param rows any stream; the junction runs at its parallelism
     * @throws IllegalArgumentException as {@link #assemble}, and for a job that would run as a
     *     batch, where Flink's sinks commit at the end of input: use {@link #assemble} there
     * @throws IllegalStateException as {@link #assemble}
     */
    public <R> DataStream<R> assembleAhead(DataStream<T> windowResults, DataStream<R> rows) {
        int laidOut = maxParallelism(windowResults);
        requireCheckpoints(windowResults);
        StreamExecutionEnvironment env = windowResults.getExecutionEnvironment();
        RuntimeExecutionMode mode = env.getConfiguration().get(ExecutionOptions.RUNTIME_MODE);
        if (mode == RuntimeExecutionMode.BATCH
                || (mode == RuntimeExecutionMode.AUTOMATIC && !unbounded(windowResults))) {
            throw new IllegalArgumentException(
                    "assembleAhead builds a streaming job's sink, and this job would run as a"
                            + " batch: use assemble");
        }
        Preflight.atBuild(config, laidOut);
        CanonicalSnapshotSink<T> sink = new CanonicalSnapshotSink<>(config, laidOut);
        // Named and uid'd as Flink names the operators of a sink it expands (the sink's name and
        // uid are config.sinkUid()): state in savepoints is found by these uids.
        String uid = config.sinkUid();
        TypeInformation<CommittableMessage<SnapshotCommittable>> committables =
                CommittableMessageTypeInfo.of(SnapshotCommittableSerializer::new);
        DataStream<SnapshotPart<T>> parts =
                PartAssembler.assemble(windowResults, config, laidOut, windowResults.getType());
        SingleOutputStreamOperator<CommittableMessage<SnapshotCommittable>> committed =
                parts.transform(
                                uid + ": Writer",
                                committables,
                                new SinkWriterOperatorFactory<>(sink))
                        .uid(uid)
                        .transform(
                                uid + ": Committer",
                                committables,
                                new CommitterOperatorFactory<>(
                                        sink,
                                        false,
                                        env.getCheckpointConfig().isCheckpointingEnabled()))
                        .uid("Sink Committer: " + uid);
        SingleOutputStreamOperator<Void> pointer = completionPointer(committed, uid + ": ");
        // Flink makes the exchanges from its sink's writer to the post-commit operators
        // aligned-only (1.20.3's and 2.3's walk stops at the writer, 1.20.1's went on upstream);
        // ours too, so that this runs as Flink's expansion would.
        List<Transformation<?>> upstream = parts.getTransformation().getTransitivePredecessors();
        for (Transformation<?> ahead : pointer.getTransformation().getTransitivePredecessors()) {
            if (ahead instanceof PartitionTransformation<?> exchange
                    && !upstream.contains(exchange)) {
                exchange.getPartitioner().disableUnalignedCheckpoints();
            }
        }
        MultipleInputTransformation<R> junction =
                new MultipleInputTransformation<>(
                        uid + ": Junction",
                        new SinkJunction.Factory<>(),
                        rows.getType(),
                        rows.getParallelism());
        junction.addInput(rows.getTransformation());
        junction.addInput(pointer.broadcast().getTransformation());
        junction.setUid(uid + "-junction");
        env.addOperator(junction);
        return new DataStream<>(env, junction);
    }

    /**
     * Checks now, outside any job, what {@link #writeWindows} and {@link #assemble} check as they
     * build it: for a deploy tool that must refuse a new version before it stops the running one.
     *
     * @param maxParallelism the max parallelism the buckets are laid out over, as the job sets it
     * @throws IllegalStateException if the store or the job version's identity refuses
     */
    public void check(int maxParallelism) {
        Preflight.atBuild(
                config, config.maxParallelism() > 0 ? config.maxParallelism() : maxParallelism);
    }

    /**
     * Parts are published when a checkpoint completes, or at the end of a bounded input: an
     * unbounded job without checkpoints would run forever and publish nothing, silently.
     */
    private static void requireCheckpoints(DataStream<?> windowResults) {
        StreamExecutionEnvironment env = windowResults.getExecutionEnvironment();
        if (env.getCheckpointConfig().isCheckpointingEnabled()
                || env.getConfiguration().get(ExecutionOptions.RUNTIME_MODE)
                        == RuntimeExecutionMode.BATCH) {
            return;
        }
        if (unbounded(windowResults)) {
            throw new IllegalArgumentException(
                    "checkpointing is off and the input is unbounded: the sink publishes a window's"
                            + " parts when the checkpoint after them completes, so this job would"
                            + " run and publish nothing. Set "
                            + CheckpointingOptions.CHECKPOINTING_INTERVAL.key()
                            + " (SET '"
                            + CheckpointingOptions.CHECKPOINTING_INTERVAL.key()
                            + "' = '10 s'; or env.enableCheckpointing(10_000))");
        }
    }

    private static boolean unbounded(DataStream<?> stream) {
        return stream.getTransformation().getTransitivePredecessors().stream()
                .anyMatch(
                        t ->
                                t instanceof WithBoundedness source
                                        && source.getBoundedness()
                                                == Boundedness.CONTINUOUS_UNBOUNDED);
    }

    private int maxParallelism(DataStream<T> windowResults) {
        if (config.maxParallelism() > 0) {
            return config.maxParallelism();
        }
        int environment = windowResults.getExecutionEnvironment().getMaxParallelism();
        return environment > 0 ? environment : DEFAULT_MAX_PARALLELISM;
    }

    @Override
    public SnapshotWriter<T> createWriter(WriterInitContext context) throws IOException {
        return restoreWriter(context, List.of());
    }

    @Override
    public SnapshotWriter<T> restoreWriter(
            WriterInitContext context, Collection<SnapshotWriter.State> restored)
            throws IOException {
        return new SnapshotWriter<>(config, maxParallelism, context, restored);
    }

    @Override
    public SimpleVersionedSerializer<SnapshotWriter.State> getWriterStateSerializer() {
        return new WriterStateSerializer();
    }

    @Override
    public Committer<SnapshotCommittable> createCommitter(CommitterInitContext context) {
        return new SnapshotCommitter(config, context.metricGroup());
    }

    @Override
    public SimpleVersionedSerializer<SnapshotCommittable> getCommittableSerializer() {
        return new SnapshotCommittableSerializer();
    }

    /**
     * One task gathers what every committer subtask published and moves the completion pointer: a
     * write per window, not one per subtask. Not chained, so the committer's own operator keeps the
     * hash it had before this task existed (a savepoint of a job without uids restores).
     */
    @Override
    public void addPostCommitTopology(
            DataStream<CommittableMessage<SnapshotCommittable>> committables) {
        // Flink prefixes the sink's name and uid to the operators of its expansion.
        completionPointer(committables, "");
    }

    /**
     * @param prefix the sink's {@code "name: "} where Flink does not add it: an expansion of our
     *     own
     */
    private SingleOutputStreamOperator<Void> completionPointer(
            DataStream<CommittableMessage<SnapshotCommittable>> committables, String prefix) {
        return committables
                .global()
                .transform(
                        prefix + CompletionPointerOperator.NAME,
                        Types.VOID,
                        new CompletionPointerOperator(config))
                .uid(prefix + config.sinkUid() + "-completion-pointer")
                .setParallelism(1)
                .setMaxParallelism(1)
                .disableChaining();
    }

    /**
     * The sink of {@link #writeWindows}: rows in, the same committables and committer. The writer
     * runs in the window's task; the committer does not: a commit waits on the store (seconds, in
     * an outage), and chained to the writer it would stall the window with it.
     */
    static final class WindowRowsSink<T>
            implements WriterInitSink<T>,
                    SupportsWriterState<T, SnapshotWriter.State>,
                    SupportsCommitter<SnapshotCommittable>,
                    SupportsPreCommitTopology<SnapshotCommittable, SnapshotCommittable>,
                    SupportsPostCommitTopology<SnapshotCommittable> {
        private static final long serialVersionUID = 1L;
        private final CanonicalSnapshotSink<T> parts;

        WindowRowsSink(SnapshotSinkConfig<T> config, int maxParallelism) {
            this.parts = new CanonicalSnapshotSink<>(config, maxParallelism);
        }

        @Override
        public WindowRowsWriter<T> createWriter(WriterInitContext context) throws IOException {
            return restoreWriter(context, List.of());
        }

        @Override
        public WindowRowsWriter<T> restoreWriter(
                WriterInitContext context, Collection<SnapshotWriter.State> restored)
                throws IOException {
            return new WindowRowsWriter<>(
                    parts.config,
                    parts.maxParallelism,
                    parts.restoreWriter(context, restored),
                    context);
        }

        @Override
        public SimpleVersionedSerializer<SnapshotWriter.State> getWriterStateSerializer() {
            return parts.getWriterStateSerializer();
        }

        @Override
        public Committer<SnapshotCommittable> createCommitter(CommitterInitContext context) {
            return parts.createCommitter(context);
        }

        @Override
        public SimpleVersionedSerializer<SnapshotCommittable> getCommittableSerializer() {
            return parts.getCommittableSerializer();
        }

        @Override
        public SimpleVersionedSerializer<SnapshotCommittable> getWriteResultSerializer() {
            return parts.getCommittableSerializer();
        }

        @Override
        public void addPostCommitTopology(
                DataStream<CommittableMessage<SnapshotCommittable>> committables) {
            parts.addPostCommitTopology(committables);
        }

        /** Committables move unchanged, subtask to subtask, to a task of the committer's own. */
        @Override
        public DataStream<CommittableMessage<SnapshotCommittable>> addPreCommitTopology(
                DataStream<CommittableMessage<SnapshotCommittable>> committables) {
            String uid = parts.config.sinkUid() + "-to-committer";
            return committables
                    .map(new Handoff(), committables.getType())
                    .name(uid)
                    .uid(uid)
                    .startNewChain();
        }
    }

    static final class Handoff
            implements MapFunction<
                    CommittableMessage<SnapshotCommittable>,
                    CommittableMessage<SnapshotCommittable>> {
        private static final long serialVersionUID = 1L;

        @Override
        public CommittableMessage<SnapshotCommittable> map(
                CommittableMessage<SnapshotCommittable> message) {
            return message;
        }
    }
}
