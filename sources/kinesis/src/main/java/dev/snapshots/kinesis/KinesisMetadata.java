package dev.snapshots.kinesis;

import dev.snapshots.job.source.RawRecord;
import java.util.Arrays;
import org.apache.flink.annotation.Internal;
import org.apache.flink.table.api.DataTypes;
import org.apache.flink.table.data.StringData;
import org.apache.flink.table.data.TimestampData;
import org.apache.flink.table.types.DataType;

/**
 * The metadata a snapshots-kinesis table reads ({@code METADATA VIRTUAL}), named and typed as
 * Flink's own Kinesis table names them, plus {@code arrival-time}, the name the project's docs use
 * for {@code timestamp}. Each is fixed by Kinesis when the record is written, so a replay gives a
 * row the same values. A KPL user record carries its Kinesis record's sequence number, as in
 * Flink's connector; its index within the aggregate is not a column.
 */
@Internal
enum KinesisMetadata {
    /** Kinesis' ApproximateArrivalTimestamp: set once, when the record was written. */
    TIMESTAMP("timestamp", DataTypes.TIMESTAMP_WITH_LOCAL_TIME_ZONE(3).notNull()),
    ARRIVAL_TIME("arrival-time", DataTypes.TIMESTAMP_WITH_LOCAL_TIME_ZONE(3).notNull()),
    SHARD_ID("shard-id", DataTypes.VARCHAR(128).notNull()),
    SEQUENCE_NUMBER("sequence-number", DataTypes.VARCHAR(128).notNull());

    final String key;
    final DataType type;

    KinesisMetadata(String key, DataType type) {
        this.key = key;
        this.type = type;
    }

    /** The planner has checked {@code key} against {@link #values()}' keys. */
    static KinesisMetadata of(String key) {
        return Arrays.stream(values()).filter(m -> m.key.equals(key)).findFirst().orElseThrow();
    }

    /**
     * This metadata of a record whose origin is {@code SHARD:SEQUENCE} or, inside a KPL aggregate,
     * {@code SHARD:SEQUENCE:INDEX} (ShardEmitter and KplAggregate write it so).
     */
    Object read(RawRecord raw) {
        String origin = raw.origin;
        int shardEnd = origin.indexOf(':');
        return switch (this) {
            case TIMESTAMP, ARRIVAL_TIME -> TimestampData.fromEpochMillis(raw.arrivalMillis);
            case SHARD_ID -> StringData.fromString(origin.substring(0, shardEnd));
            case SEQUENCE_NUMBER -> {
                int sequenceEnd = origin.indexOf(':', shardEnd + 1);
                yield StringData.fromString(
                        origin.substring(
                                shardEnd + 1, sequenceEnd < 0 ? origin.length() : sequenceEnd));
            }
        };
    }
}
