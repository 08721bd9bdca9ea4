package dev.snapshots.format;

import org.apache.avro.Schema;
import org.apache.avro.SchemaBuilder;
import org.apache.flink.annotation.PublicEvolving;

/**
 * The row format of dead letters ({@code PartKind.DEAD_LETTER}, JSON lines): the library's, so that
 * the tools that check a store (the audit) can re-fingerprint the dead letters of any job built on
 * the sink. The record's name and namespace are those of the job that first wrote it: a fingerprint
 * covers the schema, so changing either would make every recomputed dead-letter part look
 * divergent.
 */
@PublicEvolving
public final class DeadLetterRows {
    public static final Schema SCHEMA =
            SchemaBuilder.record("DeadLetter")
                    .namespace("dev.snapshots.job")
                    .fields()
                    .requiredString("origin")
                    .requiredString("reason")
                    .requiredString("detail")
                    .requiredLong("arrival_millis")
                    .requiredString("payload")
                    .endRecord();

    private DeadLetterRows() {}
}
