package dev.snapshots.job.source.kinesis;

import java.util.List;
import software.amazon.awssdk.services.kinesis.model.Record;

/**
 * What one GetRecords call returned for one shard, handed from the fetcher thread to the reader.
 *
 * @param atTip nothing was returned and Kinesis reports the shard caught up: every record that
 *     arrived before {@code polledAtMillis} has been read
 * @param exhausted the shard is closed (split or merged) and has been read to its end
 */
record ShardBatch(List<Record> records, boolean atTip, boolean exhausted, long polledAtMillis) {}
