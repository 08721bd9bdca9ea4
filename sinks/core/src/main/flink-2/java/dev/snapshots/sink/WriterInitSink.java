package dev.snapshots.sink;

import org.apache.flink.api.connector.sink2.Sink;

/**
 * A sink whose writer needs a {@code WriterInitContext}: on Flink 2 that is every sink (the Flink
 * 1.20 copy answers the older {@code createWriter(InitContext)}, which Flink 2 removed).
 */
interface WriterInitSink<T> extends Sink<T> {}
