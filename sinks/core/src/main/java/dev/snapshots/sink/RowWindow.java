package dev.snapshots.sink;

import java.io.Serializable;
import org.apache.flink.annotation.PublicEvolving;

/**
 * The window a row says it belongs to, for rows that carry theirs (a SQL window's {@code
 * window_start} and {@code window_end}). Given to {@link CanonicalSnapshotSinkBuilder#rowWindow},
 * it places each row in its own window, and can give the sink its window length.
 */
@PublicEvolving
public interface RowWindow<T> extends Serializable {
    /** The window's first millisecond since the epoch. */
    long startMillis(T row);

    /** The millisecond after the window's last. */
    long endMillis(T row);
}
