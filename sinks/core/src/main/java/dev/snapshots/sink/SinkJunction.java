package dev.snapshots.sink;

import java.util.List;
import org.apache.flink.annotation.Internal;
import org.apache.flink.streaming.api.operators.AbstractStreamOperatorFactory;
import org.apache.flink.streaming.api.operators.AbstractStreamOperatorV2;
import org.apache.flink.streaming.api.operators.Input;
import org.apache.flink.streaming.api.operators.MultipleInputStreamOperator;
import org.apache.flink.streaming.api.operators.StreamOperator;
import org.apache.flink.streaming.api.operators.StreamOperatorParameters;
import org.apache.flink.streaming.api.watermark.Watermark;
import org.apache.flink.streaming.runtime.streamrecord.LatencyMarker;
import org.apache.flink.streaming.runtime.streamrecord.RecordAttributes;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.runtime.watermarkstatus.WatermarkStatus;

/**
 * Passes rows on unchanged, and hears a sink's last task on a second input, where nothing flows:
 * whoever keeps the rows keeps the sink ({@link CanonicalSnapshotSink#assembleAhead}).
 *
 * <p>Everything the rows' input carries passes as it came: watermarks, idleness, latency markers,
 * record attributes. Nothing of the sink's does. Flink's own two-input operators combine the
 * inputs' watermarks and idleness, so the rows' event time would wait for the sink's tasks, and a
 * source subtask gone idle would not be idle past the junction while the sink's input is active.
 */
@Internal
final class SinkJunction<R> extends AbstractStreamOperatorV2<R>
        implements MultipleInputStreamOperator<R> {

    private SinkJunction(StreamOperatorParameters<R> parameters) {
        super(parameters, 2);
    }

    @Override
    @SuppressWarnings("rawtypes")
    public List<Input> getInputs() {
        return List.of(new Rows(), new SinkEnd());
    }

    private final class Rows implements Input<R> {
        @Override
        public void processElement(StreamRecord<R> row) {
            output.collect(row);
        }

        @Override
        public void processWatermark(Watermark mark) throws Exception {
            SinkJunction.this.processWatermark(mark);
        }

        @Override
        public void processWatermarkStatus(WatermarkStatus status) {
            output.emitWatermarkStatus(status);
        }

        @Override
        public void processLatencyMarker(LatencyMarker marker) {
            reportOrForwardLatencyMarker(marker);
        }

        @Override
        public void setKeyContextElement(StreamRecord<R> row) {}

        @Override
        public void processRecordAttributes(RecordAttributes attributes) {
            output.emitRecordAttributes(attributes);
        }
    }

    /** The completion pointer's output: no records, and its time is not the rows'. */
    private static final class SinkEnd implements Input<Void> {
        @Override
        public void processElement(StreamRecord<Void> nothing) {}

        @Override
        public void processWatermark(Watermark mark) {}

        @Override
        public void processWatermarkStatus(WatermarkStatus status) {}

        @Override
        public void processLatencyMarker(LatencyMarker marker) {}

        @Override
        public void setKeyContextElement(StreamRecord<Void> nothing) {}

        @Override
        public void processRecordAttributes(RecordAttributes attributes) {}
    }

    static final class Factory<R> extends AbstractStreamOperatorFactory<R> {
        private static final long serialVersionUID = 1L;

        @Override
        @SuppressWarnings("unchecked")
        public <T extends StreamOperator<R>> T createStreamOperator(
                StreamOperatorParameters<R> parameters) {
            return (T) new SinkJunction<>(parameters);
        }

        @Override
        @SuppressWarnings("rawtypes")
        public Class<? extends StreamOperator> getStreamOperatorClass(ClassLoader classLoader) {
            return SinkJunction.class;
        }
    }
}
