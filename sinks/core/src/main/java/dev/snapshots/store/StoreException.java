package dev.snapshots.store;

import java.io.IOException;
import org.apache.flink.annotation.PublicEvolving;

/** A store failure, classified so the caller knows what to do about it. */
@PublicEvolving
public final class StoreException extends IOException {
    private static final long serialVersionUID = 1L;

    public enum Kind {
        /** Throttling, 5xx, timeouts, dropped connections: try again after a pause. */
        TRANSIENT,
        /** S3 409 ConditionalRequestConflict: a concurrent conflicting write to the same key. */
        CONFLICT,
        /** The staged upload or temp file is gone (completed, aborted or expired). */
        STAGED_GONE,
        /** Access denied, no such bucket, bad request: retrying will not help. */
        PERMANENT
    }

    private final Kind kind;

    public StoreException(Kind kind, String message, Throwable cause) {
        super(message, cause);
        this.kind = kind;
    }

    public Kind kind() {
        return kind;
    }

    public boolean isRetryable() {
        return kind == Kind.TRANSIENT || kind == Kind.CONFLICT;
    }
}
