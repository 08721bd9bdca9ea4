package dev.snapshots.iceberg;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.snapshots.progress.ReaderTable;
import dev.snapshots.store.ObjectStore;
import dev.snapshots.store.StoreSpec;
import dev.snapshots.testkit.IcebergCatalogs;
import java.nio.file.Path;
import org.apache.avro.Schema;
import org.apache.avro.SchemaBuilder;
import org.apache.iceberg.Table;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Job versions whose rows differ share the table: columns a version adds join it (optional, as the
 * older versions' files lack them), columns it drops become optional, and a type changed beyond
 * Iceberg's widening is refused before anything is written.
 */
class IcebergSchemaEvolutionITCase {
    @TempDir Path tmp;

    @Test
    void aVersionAddingOrDroppingColumnsJoinsTheTableAndAChangedTypeIsRefused() throws Exception {
        StoreSpec store = StoreSpec.local(tmp.resolve("store"));
        IcebergTable table =
                IcebergTable.in(
                        IcebergCatalogs.sqlite(tmp.resolve("catalog.db")), "analytics.payments");
        Schema v1 = WindowTotals.format().schema();
        Schema v2 =
                SchemaBuilder.record(v1.getName())
                        .fields()
                        .name("device")
                        .type(v1.getField("device").schema())
                        .noDefault()
                        .name("window_start")
                        .type(v1.getField("window_start").schema())
                        .noDefault()
                        .name("amount")
                        .type(v1.getField("amount").schema())
                        .noDefault()
                        .requiredString("currency")
                        .endRecord();
        try (ObjectStore objects = store.open()) {
            follow(table, objects, store, 1, v1);
            follow(table, objects, store, 2, v2);

            Table t = IcebergTableChecks.load(table, store);
            assertThat(t.schema().findField("currency"))
                    .as("the column version 2 added, optional: version 1's files lack it")
                    .satisfies(c -> assertThat(c.isOptional()).isTrue());
            assertThat(t.schema().findField("payments"))
                    .as("the column version 2 dropped, now optional")
                    .satisfies(c -> assertThat(c.isOptional()).isTrue());
            assertThat(t.schema().findField("amount").type())
                    .isEqualTo(Types.DecimalType.of(12, 2));

            Schema v3 =
                    SchemaBuilder.record(v1.getName())
                            .fields()
                            .name("device")
                            .type(v1.getField("device").schema())
                            .noDefault()
                            .name("window_start")
                            .type(v1.getField("window_start").schema())
                            .noDefault()
                            .requiredString("amount")
                            .endRecord();
            assertThatThrownBy(() -> follow(table, objects, store, 3, v3))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("cannot join the Iceberg table")
                    .hasMessageContaining("a table of its own");
        }
    }

    /** A record of {@code v1}'s fields named, to which a test adds one. */
    private static SchemaBuilder.FieldAssembler<Schema> keep(Schema v1, String... fields) {
        SchemaBuilder.FieldAssembler<Schema> record = SchemaBuilder.record(v1.getName()).fields();
        for (String field : fields) {
            record = record.name(field).type(v1.getField(field).schema()).noDefault();
        }
        return record;
    }

    private static void follow(
            IcebergTable table, ObjectStore objects, StoreSpec store, int jobVersion, Schema rows)
            throws Exception {
        ReaderTable.Output output =
                new ReaderTable.Output(
                        store, IcebergTableChecks.output(store, jobVersion).scope(), rows);
        table.follow(objects, output).close();
    }
}
