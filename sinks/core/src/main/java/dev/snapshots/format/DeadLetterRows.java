package dev.snapshots.format;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Base64;
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

    /** The most of a rejected record's payload a dead letter keeps. */
    public static final int MAX_PAYLOAD_CHARS = 1024;

    private DeadLetterRows() {}

    /**
     * A dead letter's {@code payload}: readable text, or {@code base64:...} for bytes that are not
     * text (invalid UTF-8, a KPL aggregate); bounded either way, so one huge record cannot swell a
     * part.
     */
    public static String preview(byte[] payload, boolean binary) {
        byte[] bytes = payload == null ? new byte[0] : payload;
        if (binary) {
            int n = Math.min(bytes.length, MAX_PAYLOAD_CHARS * 3 / 4);
            return "base64:" + Base64.getEncoder().encodeToString(Arrays.copyOf(bytes, n));
        }
        String text = new String(bytes, StandardCharsets.UTF_8);
        return text.length() <= MAX_PAYLOAD_CHARS
                ? text
                : text.substring(0, MAX_PAYLOAD_CHARS) + "...";
    }
}
