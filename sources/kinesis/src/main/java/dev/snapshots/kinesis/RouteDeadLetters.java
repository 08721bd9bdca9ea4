package dev.snapshots.kinesis;

import java.util.HashMap;
import java.util.Map;
import org.apache.flink.annotation.Internal;
import org.apache.flink.metrics.Counter;
import org.apache.flink.metrics.MetricGroup;
import org.apache.flink.streaming.api.operators.AbstractStreamOperator;
import org.apache.flink.streaming.api.operators.OneInputStreamOperator;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.runtime.typeutils.InternalTypeInfo;
import org.apache.flink.util.OutputTag;

/**
 * The table's rows to the query, its dead letters to their side output, counted by reason (metric
 * group {@code deadLetters}, as the bundled job's). Chained to the source, so dead letters keep the
 * order and timestamps their shard gave them.
 */
@Internal
final class RouteDeadLetters extends AbstractStreamOperator<RowData>
        implements OneInputStreamOperator<RowData, RowData> {
    private static final long serialVersionUID = 1L;
    static final OutputTag<RowData> DEAD_LETTERS =
            new OutputTag<>("dead-letters", InternalTypeInfo.of(DeadLetterRow.TYPE));

    private final int arity;
    private transient MetricGroup group;
    private transient Map<String, Counter> rejected;

    RouteDeadLetters(int arity) {
        this.arity = arity;
    }

    @Override
    public void open() throws Exception {
        super.open();
        group = getMetricGroup().addGroup("deadLetters");
        rejected = new HashMap<>();
    }

    @Override
    public void processElement(StreamRecord<RowData> element) {
        RowData judged = element.getValue();
        if (!judged.isNullAt(0)) {
            output.collect(element.replace(judged.getRow(0, arity)));
        } else {
            RowData deadLetter = judged.getRow(1, DeadLetterRow.TYPE.getFieldCount());
            rejected.computeIfAbsent(DeadLetterRow.reason(deadLetter), group::counter).inc();
            output.collect(DEAD_LETTERS, element.replace(deadLetter));
        }
    }
}
