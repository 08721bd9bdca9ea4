package dev.snapshots.iceberg;

import dev.snapshots.key.ObjectKeys;
import dev.snapshots.progress.CompletionPointer;
import dev.snapshots.progress.ReaderTable;
import dev.snapshots.progress.WindowManifest;
import dev.snapshots.store.ObjectStore;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DataFiles;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.Metrics;
import org.apache.iceberg.MetricsConfig;
import org.apache.iceberg.OverwriteFiles;
import org.apache.iceberg.PartitionData;
import org.apache.iceberg.PartitionField;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.SnapshotRef;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.Transaction;
import org.apache.iceberg.UpdateSchema;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.SupportsNamespaces;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.exceptions.AlreadyExistsException;
import org.apache.iceberg.exceptions.ValidationException;
import org.apache.iceberg.expressions.Expressions;
import org.apache.iceberg.inmemory.InMemoryInputFile;
import org.apache.iceberg.mapping.MappingUtil;
import org.apache.iceberg.mapping.NameMapping;
import org.apache.iceberg.mapping.NameMappingParser;
import org.apache.iceberg.parquet.ParquetUtil;
import org.apache.iceberg.transforms.Transform;
import org.apache.iceberg.types.Conversions;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;
import org.apache.iceberg.util.SnapshotUtil;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One job version's follower of an {@link IcebergTable}: appends each window the completion pointer
 * has passed to the version's branch, one commit per window, oldest first.
 *
 * <p>Exactly once, whoever runs it: a commit carries its window in the snapshot summary ({@link
 * #WINDOW_START_MILLIS}), and a follower first reads the newest window on the branch and starts
 * after it. Two followers racing for the same window (an old and a new deployment, a restarted
 * task) both find it missing; Iceberg retries the loser's commit on the new table state, and the
 * commit's validation (no data added for that {@code window_start} since the state it read) then
 * refuses it, so the window is committed once. A commit whose outcome is unknown is found on the
 * branch, or not, by the next call.
 *
 * <p>The windows come from the pointer in the store and the window manifests it chains ({@link
 * WindowManifest}), never from this task's memory: a follower that restarts, or runs in another
 * deployment, sees the same windows. A window without a manifest had no rows and adds nothing.
 */
final class IcebergWindows implements ReaderTable.Follower {
    private static final Logger LOG = LoggerFactory.getLogger(IcebergWindows.class);

    /** In a snapshot's summary: the window it added, and whose output that was. */
    static final String WINDOW_START_MILLIS = "snapshots.window-start-millis";

    static final String WINDOW_START = "snapshots.window-start";
    static final String PIPELINE = "snapshots.pipeline";
    static final String JOB_VERSION = "snapshots.job-version";

    /** The tag on the table's first, empty snapshot: where every version's branch starts. */
    static final String EMPTY = "snapshots-empty";

    private final IcebergTable.Opened catalog;
    private final ObjectStore store;
    private final ReaderTable.Output output;
    private final String root;
    private final String branch;
    private final Table table;

    IcebergWindows(
            IcebergTable.Opened catalog,
            TableIdentifier id,
            ObjectStore store,
            ReaderTable.Output output) {
        this.catalog = catalog;
        this.store = store;
        this.output = output;
        this.root = StoreFileIO.rootOf(output.store());
        this.branch = IcebergTable.branch(output.scope().jobVersion());
        Schema rows = IcebergSchemas.of(output.rows());
        this.table = loadOrCreate(catalog.catalog(), id, rows);
        evolveTo(rows);
    }

    @Override
    public int catchUp() throws IOException {
        CompletionPointer.Scope scope = output.scope();
        Optional<CompletionPointer.State> pointer =
                StoreFileIO.retried(
                        "read the completion pointer",
                        () ->
                                CompletionPointer.state(
                                        store, scope.kind(), scope.pipeline(), scope.jobVersion()));
        int added = 0;
        if (pointer.isPresent() && pointer.get().lastManifestMillis() != Long.MIN_VALUE) {
            table.refresh();
            ensureBranch();
            for (WindowManifest.Manifest window :
                    newerThan(committedThrough(), pointer.get().lastManifestMillis())) {
                if (commit(window)) {
                    added++;
                }
            }
        }
        followMain();
        return added;
    }

    /** The manifests from {@code last} back to, not including, {@code committed}: oldest first. */
    private Deque<WindowManifest.Manifest> newerThan(long committed, long last) throws IOException {
        Deque<WindowManifest.Manifest> windows = new ArrayDeque<>();
        OptionalLong next = OptionalLong.of(last);
        while (next.isPresent() && next.getAsLong() > committed) {
            String key = manifestKey(next.getAsLong());
            WindowManifest.Manifest m =
                    StoreFileIO.retried("read " + key, () -> WindowManifest.read(store, key))
                            .orElseThrow(
                                    () ->
                                            new IOException(
                                                    "the completion pointer names the window"
                                                            + " manifest "
                                                            + key
                                                            + ", which is not in the store: run"
                                                            + " snapshots audit"));
            windows.addFirst(m);
            next = m.previousWindowStartMillis();
        }
        return windows;
    }

    /** Appends one window; false if another follower had committed it meanwhile. */
    private boolean commit(WindowManifest.Manifest window) throws IOException {
        long start = window.windowStartMillis();
        if (committedThrough() >= start) {
            return false; // seen committed when an earlier window lost its race
        }
        Snapshot head = table.snapshot(branch);
        OverwriteFiles append =
                table.newOverwrite()
                        .toBranch(branch)
                        .validateFromSnapshot(head.snapshotId())
                        .conflictDetectionFilter(
                                Expressions.equal(IcebergSchemas.WINDOW_START, start * 1000))
                        .validateNoConflictingData();
        MetricsConfig metrics = MetricsConfig.forTable(table);
        NameMapping names = MappingUtil.create(table.schema());
        long rows = 0;
        for (WindowManifest.Listed part : window.parts().values()) {
            DataFile file = dataFile(part, start, metrics, names);
            rows += file.recordCount();
            append.addFile(file);
        }
        append.set(PIPELINE, output.scope().pipeline())
                .set(JOB_VERSION, Integer.toString(output.scope().jobVersion()))
                .set(WINDOW_START, Instant.ofEpochMilli(start).toString())
                .set(WINDOW_START_MILLIS, Long.toString(start));
        try {
            append.commit();
        } catch (ValidationException e) {
            table.refresh();
            if (committedThrough() >= start) {
                LOG.info(
                        "{} {}: window {} was committed by another follower meanwhile",
                        table.name(),
                        branch,
                        Instant.ofEpochMilli(start));
                return false;
            }
            throw e;
        }
        LOG.info(
                "{} {}: committed window {}, {} parts, {} rows",
                table.name(),
                branch,
                Instant.ofEpochMilli(start),
                window.parts().size(),
                rows);
        return true;
    }

    /**
     * A part as a data file: its footer's metrics, checked against the manifest's row count, so a
     * part that is not what the manifest says is never registered.
     */
    private DataFile dataFile(
            WindowManifest.Listed part, long start, MetricsConfig config, NameMapping names)
            throws IOException {
        byte[] content =
                StoreFileIO.retried("read " + part.key(), () -> store.get(part.key()))
                        .orElseThrow(
                                () ->
                                        new IOException(
                                                "the window manifest lists "
                                                        + part.key()
                                                        + ", which is not in the store: run"
                                                        + " snapshots audit"))
                        .content();
        String location = root + "/" + part.key();
        Metrics metrics =
                inMicros(
                        ParquetUtil.fileMetrics(
                                new InMemoryInputFile(location, content), config, names));
        if (metrics.recordCount() != part.rows()) {
            throw new IOException(
                    location
                            + " holds "
                            + metrics.recordCount()
                            + " rows, its window's manifest says "
                            + part.rows()
                            + ": not registered; run snapshots audit");
        }
        return DataFiles.builder(table.spec())
                .withPath(location)
                .withFormat(FileFormat.PARQUET)
                .withFileSizeInBytes(content.length)
                .withMetrics(metrics)
                .withPartition(window(start))
                .build();
    }

    /**
     * The partition of a window: its start in microseconds, as Iceberg keeps timestamps, through
     * the table's transform (identity; a day in tables created before 0.3.0's release).
     */
    @SuppressWarnings("unchecked")
    private PartitionData window(long start) {
        PartitionField field = table.spec().fields().get(0);
        Transform<Long, ?> transform = (Transform<Long, ?>) field.transform();
        PartitionData window = new PartitionData(table.spec().partitionType());
        window.set(
                0,
                transform
                        .bind(table.schema().findType(field.sourceId()))
                        .apply(Math.multiplyExact(start, 1000L)));
        return window;
    }

    /**
     * The metrics with timestamp bounds in microseconds, as Iceberg keeps timestamps. Parts hold
     * timestamps in milliseconds ({@code TIMESTAMP(MILLIS)}), and Iceberg's footer reader copies
     * their statistics as they are: a bound of 2026 would read as 1970, and readers filtering by
     * time would skip every file.
     */
    private Metrics inMicros(Metrics m) {
        Map<Integer, ByteBuffer> lower = new HashMap<>(m.lowerBounds());
        Map<Integer, ByteBuffer> upper = new HashMap<>(m.upperBounds());
        for (Types.NestedField column : table.schema().columns()) {
            if (column.type() instanceof Types.TimestampType) {
                lower.computeIfPresent(column.fieldId(), (id, b) -> micros(column.type(), b));
                upper.computeIfPresent(column.fieldId(), (id, b) -> micros(column.type(), b));
            }
        }
        return new Metrics(
                m.recordCount(),
                m.columnSizes(),
                m.valueCounts(),
                m.nullValueCounts(),
                m.nanValueCounts(),
                lower,
                upper);
    }

    private static ByteBuffer micros(Type type, ByteBuffer millis) {
        long value = Conversions.<Long>fromByteBuffer(type, millis);
        return Conversions.toByteBuffer(type, Math.multiplyExact(value, 1000L));
    }

    /** The start of the newest window on this version's branch; MIN before the first. */
    private long committedThrough() {
        SnapshotRef ref = table.refs().get(branch);
        if (ref == null) {
            return Long.MIN_VALUE;
        }
        for (Snapshot s : SnapshotUtil.ancestorsOf(ref.snapshotId(), table::snapshot)) {
            String start = s.summary().get(WINDOW_START_MILLIS);
            if (start != null) {
                return Long.parseLong(start);
            }
        }
        return Long.MIN_VALUE;
    }

    /** This version's branch, started from the table's empty snapshot: its own windows only. */
    private void ensureBranch() {
        if (table.refs().get(branch) != null) {
            return;
        }
        try {
            table.manageSnapshots()
                    .createBranch(branch, table.refs().get(EMPTY).snapshotId())
                    .commit();
            LOG.info(
                    "{}: created branch {} for job version {}",
                    table.name(),
                    branch,
                    output.scope().jobVersion());
        } catch (IllegalArgumentException e) {
            table.refresh(); // created meanwhile by another follower
            if (table.refs().get(branch) == null) {
                throw e;
            }
        }
    }

    /**
     * Moves {@code main} up to this branch's head when this version is the one readers follow. Only
     * ever forward: a promotion to another version meanwhile makes the move fail, and it stays so.
     */
    private void followMain() {
        String version = Integer.toString(output.scope().jobVersion());
        Snapshot head = table.snapshot(branch);
        Snapshot main = table.currentSnapshot();
        if (!version.equals(table.properties().get(IcebergTable.PROMOTED))
                || head == null
                || (main != null && main.snapshotId() == head.snapshotId())) {
            return;
        }
        try {
            table.manageSnapshots().fastForwardBranch(IcebergTable.MAIN, branch).commit();
        } catch (ValidationException | IllegalArgumentException e) {
            LOG.info("{}: main did not follow {}: {}", table.name(), branch, e.getMessage());
        }
    }

    private String manifestKey(long windowStart) {
        CompletionPointer.Scope s = output.scope();
        return ObjectKeys.manifestKey(
                s.kind(), s.pipeline(), s.jobVersion(), s.schemaVersion(), windowStart);
    }

    /**
     * The table, created with its first, empty snapshot tagged and {@code main} following the
     * creating version, all in one commit; or loaded, if it exists.
     */
    private Table loadOrCreate(Catalog c, TableIdentifier id, Schema schema) {
        if (c.tableExists(id)) {
            return c.loadTable(id);
        }
        if (c instanceof SupportsNamespaces namespaces
                && !namespaces.namespaceExists(id.namespace())) {
            try {
                namespaces.createNamespace(id.namespace());
            } catch (AlreadyExistsException e) {
                // created meanwhile by another follower
            }
        }
        try {
            Transaction create =
                    c.buildTable(id, schema)
                            .withPartitionSpec(IcebergSchemas.spec(schema))
                            .withLocation(
                                    root + "/" + ObjectKeys.readerTable(output.scope().pipeline()))
                            .withProperty(TableProperties.FORMAT_VERSION, "2")
                            .withProperty(
                                    TableProperties.DEFAULT_NAME_MAPPING,
                                    NameMappingParser.toJson(MappingUtil.create(schema)))
                            .withProperty(
                                    IcebergTable.PROMOTED,
                                    Integer.toString(output.scope().jobVersion()))
                            .createTransaction();
            create.newAppend().commit();
            create.manageSnapshots()
                    .createTag(EMPTY, create.table().currentSnapshot().snapshotId())
                    .commit();
            create.commitTransaction();
            LOG.info("created the Iceberg table {} for {}", id, output.scope().pipeline());
        } catch (AlreadyExistsException e) {
            // created meanwhile by another follower
        }
        return c.loadTable(id);
    }

    /**
     * A job version whose rows gained columns adds them (optional: older versions' files lack
     * them); one that lost columns makes them optional. A type changed beyond Iceberg's widening is
     * refused: a new table is needed then.
     */
    private void evolveTo(Schema rows) {
        Schema current = table.schema();
        UpdateSchema update;
        Schema next;
        try {
            // The union refuses a type change at once, not at apply().
            update = table.updateSchema().unionByNameWith(rows);
            current.columns().stream()
                    .filter(c -> c.isRequired() && rows.findField(c.name()) == null)
                    .forEach(c -> update.makeColumnOptional(c.name()));
            next = update.apply();
        } catch (IllegalArgumentException | IllegalStateException e) {
            throw new IllegalArgumentException(
                    "job version "
                            + output.scope().jobVersion()
                            + "'s rows cannot join the Iceberg table "
                            + table.name()
                            + " ("
                            + e.getMessage()
                            + "): write it to a table of its own",
                    e);
        }
        if (!next.sameSchema(current)) {
            update.commit();
            table.updateProperties()
                    .set(
                            TableProperties.DEFAULT_NAME_MAPPING,
                            NameMappingParser.toJson(MappingUtil.create(table.schema())))
                    .commit();
            LOG.info("{}: schema now {}", table.name(), table.schema());
        }
    }

    @Override
    public void close() {
        catalog.close();
    }
}
