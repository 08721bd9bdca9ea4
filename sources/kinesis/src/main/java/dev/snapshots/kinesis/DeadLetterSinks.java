package dev.snapshots.kinesis;

import java.util.ArrayList;
import java.util.List;
import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.api.dag.Transformation;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.api.bridge.java.StreamStatementSet;

/**
 * Brings the dead letters' sinks of {@code 'connector' = 'snapshots-kinesis'} tables into the job.
 *
 * <p>Why this exists: Flink's planner translates a query into the transformations its own sinks
 * reach, on an environment of its own; a sink a table source adds beside the query is dropped. So
 * the source hands its dead letters' sink over here, in the planning thread, and this adds it to
 * the environment the job runs on. {@code ./snapshots run --sql} does this; a program of your own
 * calls {@link #attachAsDataStream} instead of {@code statementSet.attachAsDataStream()}, then
 * {@code env.execute()}. A job planned otherwise fails as it starts, naming the table.
 */
@PublicEvolving
public final class DeadLetterSinks {
    private static final ThreadLocal<List<Transformation<?>>> PLANNED =
            ThreadLocal.withInitial(ArrayList::new);

    private DeadLetterSinks() {}

    /**
     * Plans the statement set's INSERTs into {@code env}, as {@link
     * StreamStatementSet#attachAsDataStream()} does, and adds the dead letters' sinks its
     * snapshots-kinesis tables planned.
     *
     * @return how many dead letters' sinks were added
     */
    public static int attachAsDataStream(
            StreamStatementSet statements, StreamExecutionEnvironment env) {
        PLANNED.remove();
        try {
            statements.attachAsDataStream();
            List<Transformation<?>> sinks = PLANNED.get();
            sinks.forEach(env::addOperator);
            return sinks.size();
        } finally {
            PLANNED.remove();
        }
    }

    static void planned(Transformation<?> sink) {
        PLANNED.get().add(sink);
    }
}
