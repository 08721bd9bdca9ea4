package dev.snapshots.sink;

import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.flink.annotation.Internal;
import org.apache.flink.api.dag.Transformation;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.graph.StreamEdge;
import org.apache.flink.streaming.api.graph.StreamGraph;
import org.apache.flink.streaming.api.graph.StreamGraphHasherV2;
import org.apache.flink.streaming.api.graph.StreamNode;
import org.apache.flink.util.StringUtils;

/**
 * Lets a job with {@link SinkJunction}s restore a savepoint of the same job taken without them: the
 * graph 0.2.0 built for a {@code snapshots-kinesis} table, whose dead letters' sink the runner
 * added beside the query after planning.
 *
 * <p>Why: operators without a uid (every operator Flink's planner makes) are identified by a hash
 * of the graph's shape, which counts the operators before each one in a breadth-first walk and
 * mixes in its inputs' hashes. A junction between a source and the query changes both for every
 * operator after it, so the query's state in such a savepoint finds no operator. Flink keeps a
 * second id per operator for this: a transformation's {@code uidHash}, under which a restore looks
 * for state first, falling back to the generated id; checkpoints are still taken under the
 * generated id, so the job's own later savepoints restore as before.
 *
 * <p>The graph without junctions is this one with each junction cut out: its rows' input wired to
 * the operators it fed, first among that input's consumers (0.2.0 planned the query before it added
 * the sink), and without the sink's last task, the pointer feeding the junction: 0.2.0's sink ended
 * at its committer. {@code KinesisSqlSavepointFixtureITCase} restores a savepoint 0.2.0 took.
 */
@Internal
public final class JunctionlessIds {
    private JunctionlessIds() {}

    /**
     * Gives every operator of {@code env}'s job without a uid whose generated id a junction moved
     * the id it has without junctions, as its {@code uidHash}.
     *
     * @return how many operators were given one
     */
    public static int keep(StreamExecutionEnvironment env) {
        StreamGraph graph = env.getStreamGraph(false);
        List<StreamNode> junctions =
                graph.getStreamNodes().stream()
                        .filter(n -> n.getOperatorFactory() instanceof SinkJunction.Factory)
                        .toList();
        if (junctions.isEmpty()) {
            return 0;
        }
        StreamGraphHasherV2 hasher = new StreamGraphHasherV2();
        Map<Integer, byte[]> generated = hasher.traverseStreamGraphAndGenerateHashes(graph);
        junctions.forEach(junction -> cutOut(graph, junction));
        Map<Integer, byte[]> without = hasher.traverseStreamGraphAndGenerateHashes(graph);

        Map<Integer, Transformation<?>> byId = new HashMap<>();
        env.getTransformations()
                .forEach(t -> t.getTransitivePredecessors().forEach(p -> byId.put(p.getId(), p)));
        int given = 0;
        for (Map.Entry<Integer, byte[]> node : without.entrySet()) {
            Transformation<?> t = byId.get(node.getKey());
            if (t != null
                    && t.getUid() == null
                    && t.getUserProvidedNodeHash() == null
                    && !Arrays.equals(node.getValue(), generated.get(node.getKey()))) {
                t.setUidHash(StringUtils.byteToHexString(node.getValue()));
                given++;
            }
        }
        return given;
    }

    /**
     * Wires the junction's rows input to its consumers, first among that input's, and detaches the
     * sink's last task.
     */
    private static void cutOut(StreamGraph graph, StreamNode junction) {
        StreamEdge rowsIn = junction.getInEdges().get(0);
        StreamNode rows = graph.getStreamNode(rowsIn.getSourceId());
        rows.getOutEdges().remove(rowsIn);
        // The sink's last task exists to feed the junction: 0.2.0's sink ended at its committer.
        for (StreamEdge sinkIn : junction.getInEdges().subList(1, junction.getInEdges().size())) {
            StreamNode last = graph.getStreamNode(sinkIn.getSourceId());
            last.getOutEdges().remove(sinkIn);
            if (last.getOutEdges().isEmpty()) {
                last.getInEdges()
                        .forEach(e -> graph.getStreamNode(e.getSourceId()).getOutEdges().remove(e));
            }
        }
        Deque<StreamEdge> direct = new ArrayDeque<>();
        for (StreamEdge out : junction.getOutEdges()) {
            StreamNode consumer = graph.getStreamNode(out.getTargetId());
            StreamEdge edge =
                    new StreamEdge(
                            rows,
                            consumer,
                            out.getTypeNumber(),
                            out.getPartitioner(),
                            rowsIn.getOutputTag());
            List<StreamEdge> in = consumer.getInEdges();
            in.set(in.indexOf(out), edge);
            direct.addLast(edge);
        }
        rows.getOutEdges().addAll(0, direct);
        junction.getInEdges().clear();
        junction.getOutEdges().clear();
    }
}
