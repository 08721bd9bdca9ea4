package dev.snapshots.progress;

import dev.snapshots.store.ObjectStore;
import dev.snapshots.store.StoreSpec;
import java.io.IOException;
import java.io.Serializable;
import org.apache.avro.Schema;
import org.apache.flink.annotation.PublicEvolving;

/**
 * A table that readers query, kept up with the completion pointer: each complete window appears in
 * it once and whole, whatever job, restart or deployment brings it up to date. The sink's
 * post-commit task follows one when the builder is given one (see {@code
 * CanonicalSnapshotSinkBuilder#readerTable}); {@code snapshots-sink-iceberg} provides an Iceberg
 * table.
 *
 * <p>Why an interface in the sink's core: the core keeps no dependency on a table format, and what
 * a table needs from the sink is small: the store, what the pointer is about, and a moment to catch
 * up.
 */
@PublicEvolving
public interface ReaderTable extends Serializable {

    /**
     * Opens the table for one sink's output.
     *
     * @param store the sink's store, open; the caller closes it
     */
    Follower follow(ObjectStore store, Output output) throws IOException;

    /**
     * One sink's output: where it is, what its pointer is about, and its rows' schema (what the
     * table's columns come from).
     */
    record Output(StoreSpec store, CompletionPointer.Scope scope, Schema rows) {}

    /** One sink's view of the table. */
    interface Follower extends AutoCloseable {
        /**
         * Adds every window the pointer in the store has passed and the table lacks, oldest first,
         * each exactly once however many followers run at once.
         *
         * @return how many windows this call added
         */
        int catchUp() throws IOException;

        @Override
        void close() throws IOException;
    }
}
