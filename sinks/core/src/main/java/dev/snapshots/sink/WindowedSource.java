package dev.snapshots.sink;

import java.time.Duration;
import org.apache.flink.annotation.PublicEvolving;

/**
 * A source that judges lateness by tumbling windows of one length: a row is late when its window
 * has closed (the Kinesis source's rule, per shard). What reads it must write windows of that
 * length: with longer ones, rows still on time for their window are dropped as late at the source;
 * with shorter ones, rows whose window has closed pass the source and are dropped, unseen, by the
 * window. The SQL table sink finds such a source upstream and holds its windows to this length.
 */
@PublicEvolving
public interface WindowedSource {
    Duration windowLength();
}
