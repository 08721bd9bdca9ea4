package dev.snapshots.store;

import java.net.URI;
import java.util.Set;
import org.apache.flink.annotation.PublicEvolving;

/**
 * Opens the stores of one URI scheme. A store module registers its factory in {@code
 * META-INF/services/dev.snapshots.store.ObjectStoreFactory}, and {@link StoreSpec} finds it by the
 * scheme: a new store ({@code gs://}, say) is one module with one factory, which runs the test
 * kit's {@code ObjectStoreContract}. The local filesystem's ({@code file://}) is built in.
 */
@PublicEvolving
public interface ObjectStoreFactory {
    /** The URI scheme it opens, e.g. {@code s3}. */
    String scheme();

    /**
     * @throws IllegalArgumentException naming what is wrong with {@code uri}, and how a good one
     *     looks
     */
    void validate(URI uri);

    /**
     * The names of the {@link StoreSpec#option options} it understands (an endpoint, a region...).
     */
    Set<String> options();

    ObjectStore open(StoreSpec spec);
}
