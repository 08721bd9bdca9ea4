package dev.snapshots.sink;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.snapshots.testkit.StoreKind;
import dev.snapshots.testutils.KeyTotal;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.BiConsumer;
import java.util.stream.Collectors;
import org.apache.flink.api.common.RuntimeExecutionMode;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.ExecutionOptions;
import org.apache.flink.runtime.OperatorIDPair;
import org.apache.flink.runtime.jobgraph.JobVertex;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;
import org.apache.flink.streaming.api.graph.StreamEdge;
import org.apache.flink.streaming.api.graph.StreamGraph;
import org.apache.flink.streaming.api.graph.StreamNode;
import org.junit.jupiter.api.Test;

/**
 * {@code assembleAhead} builds the operators Flink expands {@code assemble}'s sink into: the same
 * uids, so a savepoint's state finds them, and the same names, parallelism, chains and exchanges.
 * Flink's expansion is Flink's to change: this says when it does.
 */
class AssembleAheadTest {
    private static final String PARTS_UID = "dead-letter-parts-orders";
    private static final String SINK_UID = "dead-letters-orders";

    @Test
    void aheadBuildsTheOperatorsFlinkExpandsAssembleInto() {
        StreamGraph expanded = graph((sink, parts) -> sink.assemble(parts));
        StreamGraph ahead =
                graph(
                        (sink, parts) ->
                                sink.assembleAhead(
                                                parts,
                                                parts.getExecutionEnvironment().fromSequence(0, 9))
                                        .sinkTo(new DiscardingSink<>()));

        Set<String> uids =
                expanded.getStreamNodes().stream()
                        .map(StreamNode::getTransformationUID)
                        .filter(u -> u != null && !u.equals("rejected"))
                        .collect(Collectors.toSet());
        assertThat(uids).hasSize(4);
        assertThat(describe(ahead, uids)).isEqualTo(describe(expanded, uids));
    }

    @Test
    void aJobThatWouldRunAsABatchIsReferredToAssemble() {
        assertThatThrownBy(
                        () ->
                                graph(
                                        RuntimeExecutionMode.AUTOMATIC,
                                        (sink, parts) -> sink.assembleAhead(parts, parts)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("use assemble");
    }

    private static StreamGraph graph(
            BiConsumer<CanonicalSnapshotSink<KeyTotal>, DataStream<KeyTotal>> build) {
        return graph(RuntimeExecutionMode.STREAMING, build);
    }

    private static StreamGraph graph(
            RuntimeExecutionMode mode,
            BiConsumer<CanonicalSnapshotSink<KeyTotal>, DataStream<KeyTotal>> build) {
        Configuration conf = new Configuration();
        conf.set(ExecutionOptions.RUNTIME_MODE, mode);
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
        env.setParallelism(3);
        env.enableCheckpointing(1_000);
        env.getCheckpointConfig().enableUnalignedCheckpoints();
        CanonicalSnapshotSink<KeyTotal> sink =
                CanonicalSnapshotSink.<KeyTotal>builder()
                        .pipeline("orders")
                        .jobVersion(1)
                        .bucketCount(1)
                        .store(StoreKind.FILESYSTEM.fresh())
                        .rowFormat(new KeyTotal.Format())
                        .deadLetters()
                        .uids(PARTS_UID, SINK_UID)
                        .build();
        build.accept(sink, env.fromData(new KeyTotal("a", 0, 1, 1)).uid("rejected"));
        return env.getStreamGraph();
    }

    /**
     * What a savepoint and a running job see of each operator with one of {@code uids}: its
     * operator id, name, parallelism, chain, slot sharing and the exchanges into it.
     */
    private static List<String> describe(StreamGraph graph, Set<String> uids) {
        Map<Integer, String> uidOf =
                graph.getStreamNodes().stream()
                        .filter(n -> n.getTransformationUID() != null)
                        .collect(
                                Collectors.toMap(
                                        StreamNode::getId, StreamNode::getTransformationUID));
        List<String> lines = new ArrayList<>();
        graph.getStreamNodes().stream()
                .filter(n -> uids.contains(n.getTransformationUID()))
                .sorted((a, b) -> a.getTransformationUID().compareTo(b.getTransformationUID()))
                .forEach(
                        n -> {
                            lines.add(
                                    n.getTransformationUID()
                                            + ": "
                                            + n.getOperatorName()
                                            + ", "
                                            + n.getOperatorFactory().getClass().getSimpleName()
                                            + ", parallelism "
                                            + n.getParallelism()
                                            + ", chaining "
                                            + n.getOperatorFactory().getChainingStrategy()
                                            + ", slots "
                                            + n.getSlotSharingGroup());
                            for (StreamEdge in : n.getInEdges()) {
                                lines.add(
                                        "  from "
                                                + uidOf.get(in.getSourceId())
                                                + " "
                                                + in.getPartitioner()
                                                + (in.getPartitioner()
                                                                .isSupportsUnalignedCheckpoint()
                                                        ? ""
                                                        : ", aligned only"));
                            }
                        });
        for (JobVertex vertex : graph.getJobGraph().getVertices()) {
            List<String> ids = new ArrayList<>();
            boolean ours = false;
            for (OperatorIDPair id : vertex.getOperatorIDs()) {
                ids.add(id.getGeneratedOperatorID().toString());
            }
            for (StreamNode n : graph.getStreamNodes()) {
                ours |=
                        uids.contains(n.getTransformationUID())
                                && vertex.getName().contains(n.getOperatorName());
            }
            if (ours) {
                lines.add(
                        "task "
                                + vertex.getName()
                                + ", parallelism "
                                + vertex.getParallelism()
                                + ", max parallelism "
                                + vertex.getMaxParallelism()
                                + ", operators "
                                + ids);
            }
        }
        lines.sort(null);
        return lines;
    }
}
