package dev.snapshots.job;

import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.connector.kinesis.source.serialization.KinesisDeserializationSchema;
import org.apache.flink.kinesis.shaded.software.amazon.awssdk.services.kinesis.model.Record;
import org.apache.flink.util.Collector;

/**
 * Kinesis records as {@link RawRecord}s, untouched: parsing happens in the job, where a bad record
 * becomes a dead letter instead of failing the source. The origin is shard and sequence number,
 * the arrival time Kinesis' own, so both are the same on every replay of the stream.
 */
final class KinesisRecords implements KinesisDeserializationSchema<RawRecord> {
    private static final long serialVersionUID = 1L;

    @Override
    public void deserialize(Record record, String stream, String shardId, Collector<RawRecord> out) {
        out.collect(new RawRecord(shardId + ":" + record.sequenceNumber(),
                record.approximateArrivalTimestamp().toEpochMilli(), record.data().asByteArray()));
    }

    @Override
    public TypeInformation<RawRecord> getProducedType() {
        return TypeInformation.of(RawRecord.class);
    }
}
