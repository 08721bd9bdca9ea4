package dev.snapshots.job.source.kinesis;

import java.time.Instant;
import java.util.Objects;
import software.amazon.awssdk.services.kinesis.model.ShardIteratorType;

/**
 * Where reading a shard resumes: the iterator type of a GetShardIterator call and its marker (a
 * sequence number, a timestamp, or none for TRIM_HORIZON).
 *
 * @param sequenceNumber AFTER_SEQUENCE_NUMBER's record, null for the others
 * @param timestamp AT_TIMESTAMP's time, null for the others
 */
public record ShardPosition(ShardIteratorType type, String sequenceNumber, Instant timestamp) {
    public ShardPosition {
        Objects.requireNonNull(type, "type");
        boolean fits =
                switch (type) {
                    case TRIM_HORIZON -> sequenceNumber == null && timestamp == null;
                    case AFTER_SEQUENCE_NUMBER -> sequenceNumber != null && timestamp == null;
                    case AT_TIMESTAMP -> sequenceNumber == null && timestamp != null;
                    default -> false;
                };
        if (!fits) {
            throw new IllegalArgumentException(
                    "a shard position of "
                            + type
                            + " with sequence number "
                            + sequenceNumber
                            + " and timestamp "
                            + timestamp);
        }
    }

    /** The shard's oldest record still retained. */
    public static ShardPosition fromStart() {
        return new ShardPosition(ShardIteratorType.TRIM_HORIZON, null, null);
    }

    /** Just after the record read last. */
    public static ShardPosition continueFromSequenceNumber(String sequenceNumber) {
        return new ShardPosition(ShardIteratorType.AFTER_SEQUENCE_NUMBER, sequenceNumber, null);
    }

    /** The first record that arrived at or after {@code at}. */
    public static ShardPosition fromTimestamp(Instant at) {
        return new ShardPosition(ShardIteratorType.AT_TIMESTAMP, null, at);
    }

    @Override
    public String toString() {
        return type
                + (sequenceNumber != null ? " " + sequenceNumber : "")
                + (timestamp != null ? " " + timestamp : "");
    }
}
