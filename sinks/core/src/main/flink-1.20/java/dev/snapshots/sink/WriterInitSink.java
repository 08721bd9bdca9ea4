package dev.snapshots.sink;

import java.io.IOException;
import org.apache.flink.api.connector.sink2.Sink;
import org.apache.flink.api.connector.sink2.SinkWriter;

/**
 * A sink whose writer needs a {@code WriterInitContext}. Flink 1.20 still declares the older {@code
 * createWriter(InitContext)} abstract and never calls it when the newer one is there; Flink 2
 * removed it (this interface's Flink 2 copy is empty).
 */
interface WriterInitSink<T> extends Sink<T> {
    @Override
    @Deprecated
    default SinkWriter<T> createWriter(InitContext context) throws IOException {
        throw new UnsupportedOperationException(
                "this sink needs a WriterInitContext (Flink 1.19 or later)");
    }
}
