package dev.snapshots.job.ingest;

import org.apache.flink.annotation.Internal;

/** Why a record became a dead letter; the code is what reports and metrics show. */
@Internal
public enum Rejection {
    NOT_JSON("not-json"),
    TRUNCATED_JSON("truncated-json"),
    NOT_AN_OBJECT("not-an-object"),
    MISSING_KEY("missing-key"),
    EMPTY_KEY("empty-key"),
    MISSING_TIMESTAMP("missing-timestamp"),
    BAD_TIMESTAMP("bad-timestamp"),
    TOO_FAR_IN_FUTURE("too-far-in-future"),
    TOO_FAR_IN_PAST("too-far-in-past"),
    WRONG_TYPE("wrong-type"),
    NOT_FINITE("not-finite"),
    OUT_OF_RANGE("out-of-range"),
    OVERSIZED("oversized"),
    INVALID_UTF8("invalid-utf8"),
    /** A KPL aggregate that does not check out; its user records cannot be read. */
    BAD_AGGREGATE("bad-aggregate"),
    /** Parsed fine, but its window had already been published. */
    LATE("late");

    private final String code;

    Rejection(String code) {
        this.code = code;
    }

    public String code() {
        return code;
    }

    public static Rejection of(String code) {
        for (Rejection r : values()) {
            if (r.code.equals(code)) {
                return r;
            }
        }
        throw new IllegalArgumentException("no rejection has the code " + code);
    }
}
