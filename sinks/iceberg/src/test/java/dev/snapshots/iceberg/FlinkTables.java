package dev.snapshots.iceberg;

import dev.snapshots.store.StoreSpec;
import java.util.Map;
import java.util.TreeMap;
import org.apache.hadoop.conf.Configuration;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.flink.CatalogLoader;
import org.apache.iceberg.flink.TableLoader;
import org.apache.iceberg.jdbc.JdbcCatalog;

/**
 * A table of the tests' JDBC catalog as Iceberg's own Flink source and sink load it. Apart from
 * {@link IcebergTableChecks}: the Spark module reuses that class, and has no iceberg-flink-runtime.
 */
final class FlinkTables {
    private FlinkTables() {}

    /** The table, its files read and written through the store ({@link StoreFileIO}). */
    static TableLoader loader(Map<String, String> catalog, StoreSpec store, TableIdentifier table) {
        Map<String, String> properties = new TreeMap<>(catalog);
        properties.putAll(StoreFileIO.properties(store));
        properties.put("warehouse", StoreFileIO.rootOf(store));
        return TableLoader.fromCatalog(
                CatalogLoader.custom(
                        // A JDBC catalog keeps its tables under its name: the sink's.
                        "snapshots", properties, new Configuration(), JdbcCatalog.class.getName()),
                table);
    }
}
