package dev.snapshots.iceberg;

import dev.snapshots.progress.ReaderTable;
import dev.snapshots.store.ObjectStore;
import dev.snapshots.store.StoreSpec;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import org.apache.flink.annotation.PublicEvolving;
import org.apache.iceberg.CatalogUtil;
import org.apache.iceberg.Table;
import org.apache.iceberg.Transaction;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An Iceberg table that every query engine reads, kept up with the sink's completion pointer: each
 * complete window is appended in one commit, its canonical objects registered as the data files
 * (nothing is copied), exactly once however many jobs, restarts and deployments follow the pointer.
 *
 * <pre>{@code
 * CanonicalSnapshotSink.builder()...
 *     .readerTable(IcebergTable.in(Map.of("type", "glue"), "analytics.telemetry"))
 * }</pre>
 *
 * <p>Job version N commits to branch {@code vN}; {@code main}, what readers query by default,
 * follows the promoted version's branch ({@link #promote}), and at first the version that created
 * the table. A replay is invisible to readers until promoted, then visible at once: write, audit,
 * publish.
 *
 * <p>The catalog is any Iceberg catalog ({@code type} {@code glue}, {@code rest}, {@code jdbc}, ...
 * or {@code catalog-impl}); unless its properties name an {@code io-impl}, the table's metadata
 * goes through the sink's own store (see {@link StoreFileIO}), and a catalog without a {@code
 * warehouse} gets the store's root. The table lives at {@code {store}/{pipeline}/_iceberg} unless
 * it exists already. Iceberg itself ({@code iceberg-flink-runtime}) is not bundled: put it into
 * Flink's {@code lib/}, as Iceberg's own Flink documentation asks.
 */
@PublicEvolving
public final class IcebergTable implements ReaderTable {
    private static final long serialVersionUID = 1L;
    private static final Logger LOG = LoggerFactory.getLogger(IcebergTable.class);

    /** The branch readers query by default. */
    public static final String MAIN = "main";

    /** The table property naming the job version {@code main} follows. */
    static final String PROMOTED = "snapshots.promoted-version";

    private final TreeMap<String, String> catalog;
    private final String table;

    private IcebergTable(Map<String, String> catalog, String table) {
        this.catalog = new TreeMap<>(catalog);
        this.table = table;
    }

    /**
     * @param catalog the catalog's properties, as Iceberg's {@code CatalogUtil} takes them
     * @param table {@code namespace.name}
     */
    public static IcebergTable in(Map<String, String> catalog, String table) {
        Objects.requireNonNull(catalog, "catalog properties");
        if (!catalog.containsKey(CatalogUtil.ICEBERG_CATALOG_TYPE)
                && !catalog.containsKey("catalog-impl")) {
            throw new IllegalArgumentException(
                    "the Iceberg catalog's properties need a 'type' (glue, rest, jdbc, ...) or a"
                            + " 'catalog-impl', got "
                            + catalog.keySet());
        }
        TableIdentifier.parse(Objects.requireNonNull(table, "table"));
        if (!table.contains(".")) {
            throw new IllegalArgumentException(
                    "the Iceberg table is named namespace.name, got '" + table + "'");
        }
        return new IcebergTable(catalog, table);
    }

    /** The branch job version {@code jobVersion} commits to. */
    public static String branch(int jobVersion) {
        return "v" + jobVersion;
    }

    @Override
    public Follower follow(ObjectStore store, Output output) {
        return new IcebergWindows(open(output.store()), identifier(), store, output);
    }

    /**
     * Points {@code main} at job version {@code jobVersion}'s branch, and keeps it following that
     * branch, in one commit: readers see the whole version at once. The caller checks first that
     * readers lose nothing (the audit, the bounds check of {@code snapshots promote}).
     *
     * @throws IllegalArgumentException if the version never committed to the table
     */
    @Override
    public void promote(StoreSpec store, int jobVersion) {
        try (Opened opened = open(store)) {
            Table t = opened.catalog().loadTable(identifier());
            String branch = branch(jobVersion);
            if (t.refs().get(branch) == null) {
                throw new IllegalArgumentException(
                        "job version "
                                + jobVersion
                                + " has no branch "
                                + branch
                                + " in "
                                + table
                                + ": it has committed no window to it");
            }
            Transaction promote = t.newTransaction();
            promote.manageSnapshots().replaceBranch(MAIN, branch).commit();
            promote.updateProperties().set(PROMOTED, Integer.toString(jobVersion)).commit();
            promote.commitTransaction();
            LOG.info(
                    "{}: main now shows job version {} (snapshot {})",
                    table,
                    jobVersion,
                    t.refs().get(branch).snapshotId());
        }
    }

    public TableIdentifier identifier() {
        return TableIdentifier.parse(table);
    }

    /**
     * The catalog as the sink opens it, with the store's FileIO and root unless the properties say
     * otherwise: for tools and tests that read the table as the sink wrote it.
     */
    public Opened open(StoreSpec store) {
        Map<String, String> properties = new TreeMap<>();
        if (!catalog.containsKey("io-impl")) {
            properties.putAll(fileIO(store));
        }
        properties.put("warehouse", StoreFileIO.rootOf(store));
        properties.putAll(catalog);
        return new Opened(
                CatalogUtil.buildIcebergCatalog(
                        catalog.getOrDefault("name", "snapshots"), properties, null));
    }

    /**
     * {@link StoreFileIO} where Iceberg can load it: Iceberg loads a FileIO with its own class
     * loader, so with Iceberg in Flink's lib/ and this module in a job jar it cannot. Then
     * Iceberg's own, told the store's endpoint: S3FileIO for s3:// (the AWS SDK beside Iceberg, as
     * iceberg-aws-bundle puts it), HadoopFileIO for file://.
     */
    private static Map<String, String> fileIO(StoreSpec store) {
        try {
            Class.forName(StoreFileIO.class.getName(), false, CatalogUtil.class.getClassLoader());
            return StoreFileIO.properties(store);
        } catch (ClassNotFoundException e) {
            LOG.info(
                    "Iceberg is loaded apart from snapshots-sink-iceberg (Flink's lib/ and the"
                            + " job jar): the table's metadata goes through Iceberg's"
                            + " ResolvingFileIO, not the sink's store client");
            Map<String, String> p = new TreeMap<>();
            p.put("io-impl", "org.apache.iceberg.io.ResolvingFileIO");
            store.endpoint()
                    .ifPresent(
                            endpoint -> {
                                p.put("s3.endpoint", endpoint);
                                p.put("s3.path-style-access", "true");
                            });
            store.region().ifPresent(region -> p.put("client.region", region));
            return p;
        }
    }

    /** A catalog, closed with the follower or command that opened it. */
    public record Opened(Catalog catalog) implements AutoCloseable {
        @Override
        public void close() {
            if (catalog instanceof AutoCloseable closeable) {
                try {
                    closeable.close();
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            }
        }
    }

    /**
     * {@code iceberg}: for SQL tables and the bundled job, which name the table by options. Iceberg
     * itself missing from the classpath is said here, not on the first window.
     */
    public static final class Factory implements ReaderTable.Factory {
        @Override
        public String identifier() {
            return "iceberg";
        }

        @Override
        public ReaderTable create(String table, Map<String, String> properties) {
            try {
                Class.forName("org.apache.iceberg.CatalogUtil", false, getClass().getClassLoader());
            } catch (ClassNotFoundException e) {
                throw new IllegalArgumentException(
                        "an Iceberg table needs Iceberg: put iceberg-flink-runtime-1.20 or, on"
                                + " Flink 2, iceberg-flink-runtime-2.0 (1.10 or later) into Flink's"
                                + " lib/",
                        e);
            }
            return in(properties, table);
        }
    }

    @Override
    public String toString() {
        return "Iceberg table "
                + table
                + " ("
                + catalog.getOrDefault("type", catalog.get("catalog-impl"))
                + ")";
    }
}
