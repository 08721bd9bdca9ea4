package dev.snapshots.key;

import java.util.Map;
import org.apache.flink.annotation.PublicEvolving;

/**
 * Names of the object metadata a part carries (S3 user metadata, or extended attributes on the
 * filesystem). Lower-case, because S3 lower-cases metadata names.
 */
@PublicEvolving
public final class PartMetadata {
    /** SHA-256 of the part's logical content: what divergence is judged on. */
    public static final String FINGERPRINT = "fingerprint";

    public static final String ROWS = "rows";
    public static final String SCHEMA_VERSION = "schema-version";
    public static final String JOB_VERSION = "job-version";
    public static final String WINDOW_START = "window-start";
    public static final String WINDOW_END = "window-end";

    /** Who wrote it: informational, never part of the key or the content. */
    public static final String WRITER_JOB = "writer-job";

    public static final String WRITER_HOST = "writer-host";
    public static final String WRITER_TASK = "writer-task";

    private PartMetadata() {}

    /**
     * What a part says of its work and content, beside its writer's provenance: what an audit
     * checks the part's content and key against.
     */
    public static Map<String, String> of(WorkIdentity id, String fingerprint, int rows) {
        return Map.of(
                FINGERPRINT, fingerprint,
                ROWS, Integer.toString(rows),
                SCHEMA_VERSION, Integer.toString(id.schemaVersion()),
                JOB_VERSION, Integer.toString(id.jobVersion()),
                WINDOW_START, Long.toString(id.windowStartMillis()),
                WINDOW_END, Long.toString(id.windowEndMillis()));
    }
}
