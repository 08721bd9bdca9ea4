package dev.snapshots.kinesis;

import dev.snapshots.sink.JunctionlessIds;
import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.api.bridge.java.StreamStatementSet;

/**
 * What brought the dead letters' sinks of {@code 'connector' = 'snapshots-kinesis'} tables into a
 * job, up to 0.2.0. The sink is now part of the query's own graph, so any way of running the
 * statement publishes them; this class stays for programs compiled against 0.2.0.
 *
 * @deprecated plan with {@link StreamStatementSet#attachAsDataStream()}, or run the statement with
 *     {@code executeSql}
 */
@PublicEvolving
@Deprecated
public final class DeadLetterSinks {
    private DeadLetterSinks() {}

    /**
     * Plans the statement set's INSERTs into {@code env}, as {@link
     * StreamStatementSet#attachAsDataStream()} does, keeping the ids the query's operators had in
     * 0.2.0 as their ids to restore from ({@link JunctionlessIds}), so that a savepoint the
     * program's 0.2.0 build took restores.
     *
     * @return 0: no dead letters' sink is added beside the query anymore
     * @deprecated call {@link StreamStatementSet#attachAsDataStream()}
     */
    @Deprecated
    public static int attachAsDataStream(
            StreamStatementSet statements, StreamExecutionEnvironment env) {
        statements.attachAsDataStream();
        // Such a program may restore a savepoint its 0.2.0 build took.
        JunctionlessIds.keep(env);
        return 0;
    }
}
