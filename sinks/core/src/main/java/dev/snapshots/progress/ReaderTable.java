package dev.snapshots.progress;

import dev.snapshots.store.ObjectStore;
import dev.snapshots.store.StoreSpec;
import java.io.IOException;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.ServiceLoader;
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

    /**
     * Shows job version {@code jobVersion} to readers, all of it at once. The caller checks first
     * that readers lose nothing ({@code snapshots promote} does, with the audit before it).
     */
    void promote(StoreSpec store, int jobVersion) throws IOException;

    /**
     * The reader table of kind {@code kind} ({@code iceberg}) named {@code table}, made by the
     * {@link Factory} on the classpath: what SQL tables and the bundled job, which keep no
     * dependency on a table format, name by options.
     *
     * @throws IllegalArgumentException if no factory makes that kind, or it refuses the options
     */
    static ReaderTable of(String kind, String table, Map<String, String> properties) {
        List<String> kinds = new ArrayList<>();
        for (Factory f : ServiceLoader.load(Factory.class, Factory.class.getClassLoader())) {
            if (f.identifier().equals(kind)) {
                return f.create(table, properties);
            }
            kinds.add(f.identifier());
        }
        throw new IllegalArgumentException(
                "no reader table of kind '"
                        + kind
                        + "' on the classpath (found: "
                        + kinds
                        + "): an Iceberg table needs snapshots-sink-iceberg in the job, and"
                        + " Iceberg's iceberg-flink-runtime in Flink's lib/");
    }

    /** Makes reader tables of one kind from options; found through {@link ServiceLoader}. */
    interface Factory {
        String identifier();

        ReaderTable create(String table, Map<String, String> properties);
    }

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
