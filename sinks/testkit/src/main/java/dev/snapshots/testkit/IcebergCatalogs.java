package dev.snapshots.testkit;

import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;
import org.apache.flink.annotation.PublicEvolving;
import org.apache.iceberg.CatalogUtil;

/** Real Iceberg catalogs for tests of the Iceberg reader table. */
@PublicEvolving
public final class IcebergCatalogs {
    private IcebergCatalogs() {}

    /**
     * The properties of a JDBC catalog in the SQLite database {@code db}, its tables created.
     * Followers in several tasks use it at once: they wait for each other's writes (SQLite locks
     * the whole file) instead of failing. The tables are created here, once: Iceberg's check for
     * them leaves a statement open on its connection, which holds a read lock on the whole file and
     * blocks every writer.
     */
    public static Map<String, String> sqlite(Path db) throws Exception {
        Map<String, String> properties = new TreeMap<>();
        properties.put("type", "jdbc");
        properties.put("uri", "jdbc:sqlite:" + db);
        properties.put("jdbc.busy_timeout", "60000");
        Map<String, String> create = new TreeMap<>(properties);
        create.put("warehouse", db.getParent().toUri().toString());
        try (AutoCloseable tables =
                (AutoCloseable) CatalogUtil.buildIcebergCatalog("create", create, null)) {
            // created
        }
        properties.put("jdbc.init-catalog-tables", "false");
        return properties;
    }
}
