package dev.snapshots.kinesis;

import dev.snapshots.job.source.LatenessRule;
import dev.snapshots.job.source.RawRecord;
import dev.snapshots.job.source.RecordJudge;
import dev.snapshots.job.source.SplitProgress;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import org.apache.flink.annotation.Internal;
import org.apache.flink.api.common.eventtime.Watermark;
import org.apache.flink.api.common.eventtime.WatermarkGenerator;
import org.apache.flink.api.common.eventtime.WatermarkGeneratorSupplier;
import org.apache.flink.api.common.eventtime.WatermarkOutput;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.serialization.DeserializationSchema;
import org.apache.flink.api.connector.source.SourceOutput;
import org.apache.flink.api.connector.source.SourceReaderContext;
import org.apache.flink.metrics.MetricGroup;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.utils.JoinedRowData;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.util.UserCodeClassLoader;
import org.apache.flink.util.clock.RelativeClock;
import org.apache.flink.util.clock.SystemClock;

/**
 * A SQL table's judgement of a record, inside the source, per shard: the table's format reads it (a
 * record it rejects is a dead letter {@code bad-format}), its rowtime column is its event time, the
 * shard's {@link LatenessRule} decides whether it is late, and the table's {@code WATERMARK}
 * expression, applied to the shard's own rows, moves the shard's watermark.
 *
 * <p>Emits a row of two nullable fields, the table's row (its metadata columns after the format's)
 * or a dead letter ({@link #judgedType}), so both leave the source in order, with the timestamps
 * the shard gave them.
 */
@Internal
final class RowJudge implements RecordJudge<RowData> {
    private static final long serialVersionUID = 1L;
    private static final int MAX_DETAIL_CHARS = 300;

    private final DeserializationSchema<RowData> format;
    private final WatermarkStrategy<RowData> watermarks;
    private final int rowtime;
    private final int rowtimePrecision;
    private final LatenessRule rule;
    private final List<KinesisMetadata> metadata;
    private transient WatermarkGeneratorSupplier.Context generatorContext;

    /**
     * One generator per shard, since Flink's generated one keeps the highest watermark it saw:
     * shared by a reader's shards, one shard's rows would move another's watermark. It is not
     * checkpointed; the shard's progress is, and only rises.
     */
    private transient Map<SplitProgress, WatermarkGenerator<RowData>> generators;

    RowJudge(
            DeserializationSchema<RowData> format,
            WatermarkStrategy<RowData> watermarks,
            int rowtime,
            int rowtimePrecision,
            LatenessRule rule,
            List<KinesisMetadata> metadata) {
        this.format = format;
        this.watermarks = watermarks;
        this.rowtime = rowtime;
        this.rowtimePrecision = rowtimePrecision;
        this.rule = rule;
        this.metadata = metadata;
    }

    /** What the source emits: the table's row, or a dead letter ({@link DeadLetterRow#TYPE}). */
    static RowType judgedType(RowType physical) {
        return RowType.of(
                new org.apache.flink.table.types.logical.LogicalType[] {
                    physical.copy(true), DeadLetterRow.TYPE.copy(true)
                },
                new String[] {"row", "dead_letter"});
    }

    @Override
    public LatenessRule rule() {
        return rule;
    }

    @Override
    public void open(SourceReaderContext context) throws Exception {
        MetricGroup metrics = context.metricGroup();
        format.open(
                new DeserializationSchema.InitializationContext() {
                    @Override
                    public MetricGroup getMetricGroup() {
                        return metrics.addGroup("format");
                    }

                    @Override
                    public UserCodeClassLoader getUserCodeClassLoader() {
                        return context.getUserCodeClassLoader();
                    }
                });
        // Both methods spelled out: Flink 2 made the clock abstract (1.20 defaults it to this one).
        generatorContext =
                new WatermarkGeneratorSupplier.Context() {
                    @Override
                    public MetricGroup getMetricGroup() {
                        return metrics;
                    }

                    @Override
                    public RelativeClock getInputActivityClock() {
                        return SystemClock.getInstance();
                    }
                };
        generators = new IdentityHashMap<>();
    }

    @Override
    public void judge(RawRecord raw, SplitProgress progress, SourceOutput<RowData> out) {
        rule.arrive(progress, raw.arrivalMillis);
        if (raw.defect != null) {
            reject(raw, DeadLetterRow.BAD_AGGREGATE, raw.defect, progress, out);
            return;
        }
        RowData row;
        try {
            row = format.deserialize(raw.payload);
        } catch (Exception e) {
            reject(raw, DeadLetterRow.BAD_FORMAT, detail(e), progress, out);
            return;
        }
        if (row == null) { // a format told to ignore parse errors
            reject(raw, DeadLetterRow.BAD_FORMAT, "the format skipped it", progress, out);
        } else if (row.isNullAt(rowtime)) {
            reject(raw, DeadLetterRow.MISSING_TIMESTAMP, "", progress, out);
        } else {
            long time = row.getTimestamp(rowtime, rowtimePrecision).getMillisecond();
            if (rule.isLate(progress, time)) {
                reject(raw, DeadLetterRow.LATE, rule.lateDetail(progress, time), progress, out);
            } else {
                RowData produced = withMetadata(row, raw);
                rule.acceptWithWatermark(progress, watermarkAfter(progress, produced, time));
                out.collect(GenericRowData.of(produced, null), time);
            }
        }
    }

    /** The format's row, then the metadata the query reads, in the planner's order. */
    private RowData withMetadata(RowData row, RawRecord raw) {
        if (metadata.isEmpty()) {
            return row;
        }
        GenericRowData values = new GenericRowData(metadata.size());
        for (int i = 0; i < metadata.size(); i++) {
            values.setField(i, metadata.get(i).read(raw));
        }
        return new JoinedRowData(row, values);
    }

    /**
     * The table's WATERMARK expression over the shard's rows so far; Flink's planner generates it
     * for the rows the source produces, metadata included.
     */
    private long watermarkAfter(SplitProgress shard, RowData row, long time) {
        WatermarkGenerator<RowData> generator =
                generators.computeIfAbsent(
                        shard, s -> watermarks.createWatermarkGenerator(generatorContext));
        long[] emitted = {Long.MIN_VALUE};
        WatermarkOutput capture =
                new WatermarkOutput() {
                    @Override
                    public void emitWatermark(Watermark watermark) {
                        emitted[0] = Math.max(emitted[0], watermark.getTimestamp());
                    }

                    @Override
                    public void markIdle() {}

                    @Override
                    public void markActive() {}
                };
        generator.onEvent(row, time, capture);
        generator.onPeriodicEmit(capture);
        return emitted[0];
    }

    private void reject(
            RawRecord raw,
            String reason,
            String detail,
            SplitProgress progress,
            SourceOutput<RowData> out) {
        out.collect(
                GenericRowData.of(null, DeadLetterRow.of(raw, reason, detail)),
                rule.timestampOfRejected(progress, raw.arrivalMillis));
    }

    /** The innermost message: Flink's formats wrap the parser's, which says what was wrong. */
    private static String detail(Throwable e) {
        Throwable t = e;
        while (t.getCause() != null) {
            t = t.getCause();
        }
        String message = String.valueOf(t.getMessage());
        return message.length() <= MAX_DETAIL_CHARS
                ? message
                : message.substring(0, MAX_DETAIL_CHARS) + "...";
    }
}
