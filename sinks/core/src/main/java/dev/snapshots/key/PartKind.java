package dev.snapshots.key;

import org.apache.flink.annotation.PublicEvolving;

/**
 * What a part holds, which decides where its key lives and how its file is encoded: snapshot rows
 * as Parquet, or rejected input as JSON lines under {@code _deadletter/}. Both are published by the
 * same sink with the same exactly-once protocol.
 */
@PublicEvolving
public enum PartKind {
    SNAPSHOT("", "parquet"),
    DEAD_LETTER("_deadletter/", "jsonl");

    private final String prefix;
    private final String extension;

    PartKind(String prefix, String extension) {
        this.prefix = prefix;
        this.extension = extension;
    }

    /** Prepended to every key of this kind, including its completion pointer. */
    public String prefix() {
        return prefix;
    }

    public String extension() {
        return extension;
    }
}
