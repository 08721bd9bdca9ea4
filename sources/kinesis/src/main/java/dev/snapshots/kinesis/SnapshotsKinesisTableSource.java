package dev.snapshots.kinesis;

import dev.snapshots.job.source.LatenessRule;
import dev.snapshots.job.source.kinesis.KinesisShardSource;
import dev.snapshots.sink.CanonicalSnapshotSink;
import java.time.Duration;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.flink.annotation.Internal;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.serialization.DeserializationSchema;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.api.ValidationException;
import org.apache.flink.table.connector.ChangelogMode;
import org.apache.flink.table.connector.ProviderContext;
import org.apache.flink.table.connector.format.DecodingFormat;
import org.apache.flink.table.connector.source.DataStreamScanProvider;
import org.apache.flink.table.connector.source.DynamicTableSource;
import org.apache.flink.table.connector.source.ScanTableSource;
import org.apache.flink.table.connector.source.abilities.SupportsReadingMetadata;
import org.apache.flink.table.connector.source.abilities.SupportsWatermarkPushDown;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.runtime.typeutils.InternalTypeInfo;
import org.apache.flink.table.types.DataType;
import org.apache.flink.table.types.logical.RowType;

/**
 * The Kinesis source as a table: its records read by the table's format, judged per shard, the dead
 * letters published beside the query.
 *
 * <pre>
 *  KinesisShardSource (per shard: format, late gate, WATERMARK) ─► route ─────────────► junction ─► the query
 *                                                                     └─ dead letters ─► assemble  ─┘
 *                                                                        (B = 1, JSON lines, _deadletter/)
 * </pre>
 *
 * <p>The rows reach the query through a junction the dead letters' sink also feeds ({@link
 * dev.snapshots.sink.CanonicalSnapshotSink#assembleAhead}): Flink's planner keeps what the query's
 * sinks reach, so the sink runs whatever runs the statement (SQL Client, SQL Gateway, {@code
 * executeSql}, {@code ./snapshots run --sql}).
 */
@Internal
final class SnapshotsKinesisTableSource
        implements ScanTableSource, SupportsWatermarkPushDown, SupportsReadingMetadata {
    /** How often subtasks report their watermarks for alignment (Flink's default). */
    private static final Duration ALIGNMENT_UPDATE = Duration.ofSeconds(1);

    private final String table;
    private final KinesisShardSource.Settings settings;
    private final DecodingFormat<DeserializationSchema<RowData>> format;
    private final DataType physical;
    private final int rowtime;
    private final int rowtimePrecision;
    private final LatenessRule rule;
    private final Duration maxDrift;
    private final CanonicalSnapshotSink<RowData> deadLetters;
    private WatermarkStrategy<RowData> watermarks;
    private List<KinesisMetadata> metadata = List.of();

    /** The physical row, then the metadata the query reads. */
    private DataType produced;

    SnapshotsKinesisTableSource(
            String table,
            KinesisShardSource.Settings settings,
            DecodingFormat<DeserializationSchema<RowData>> format,
            DataType physical,
            int rowtime,
            int rowtimePrecision,
            LatenessRule rule,
            Duration maxDrift,
            CanonicalSnapshotSink<RowData> deadLetters) {
        this.table = table;
        this.settings = settings;
        this.format = format;
        this.physical = physical;
        this.rowtime = rowtime;
        this.rowtimePrecision = rowtimePrecision;
        this.rule = rule;
        this.maxDrift = maxDrift;
        this.deadLetters = deadLetters;
        this.produced = physical;
    }

    @Override
    public ChangelogMode getChangelogMode() {
        return ChangelogMode.insertOnly();
    }

    @Override
    public void applyWatermark(WatermarkStrategy<RowData> watermarkStrategy) {
        this.watermarks = watermarkStrategy;
    }

    @Override
    public Map<String, DataType> listReadableMetadata() {
        Map<String, DataType> keys = new LinkedHashMap<>();
        Arrays.stream(KinesisMetadata.values()).forEach(m -> keys.put(m.key, m.type));
        return keys;
    }

    @Override
    public void applyReadableMetadata(List<String> metadataKeys, DataType producedDataType) {
        this.metadata = metadataKeys.stream().map(KinesisMetadata::of).toList();
        this.produced = producedDataType;
    }

    @Override
    public ScanRuntimeProvider getScanRuntimeProvider(ScanContext context) {
        if (watermarks == null) {
            throw new ValidationException(
                    "table " + table + ": the planner did not push its WATERMARK into the source");
        }
        RowType rows = (RowType) produced.getLogicalType();
        RowJudge judge =
                new RowJudge(
                        format.createRuntimeDecoder(context, physical),
                        watermarks,
                        rowtime,
                        rowtimePrecision,
                        rule,
                        metadata);
        return new DataStreamScanProvider() {
            @Override
            public DataStream<RowData> produceDataStream(
                    ProviderContext provider, StreamExecutionEnvironment env) {
                KinesisShardSource<RowData> source =
                        new KinesisShardSource<>(
                                settings, judge, InternalTypeInfo.of(RowJudge.judgedType(rows)));
                // The source emits each shard's watermark itself; the strategy adds alignment.
                WatermarkStrategy<RowData> strategy = WatermarkStrategy.noWatermarks();
                if (!maxDrift.isZero()) {
                    strategy =
                            strategy.withWatermarkAlignment(
                                    "snapshots-kinesis-" + table, maxDrift, ALIGNMENT_UPDATE);
                }
                DataStream<RowData> judged =
                        env.fromSource(source, strategy, "kinesis " + table)
                                .uid("source-kinesis-" + table);
                SingleOutputStreamOperator<RowData> routed =
                        judged.transform(
                                        "route " + table,
                                        InternalTypeInfo.of(rows),
                                        new RouteDeadLetters(rows.getFieldCount()))
                                .uid("route-" + table)
                                .setParallelism(judged.getParallelism());
                // Dead letters are few: one bucket, one JSON-lines object per window. The rows pass
                // the sink's end, so the planner, which keeps what the query's sinks reach, keeps
                // it.
                return deadLetters.assembleAhead(
                        routed.getSideOutput(RouteDeadLetters.DEAD_LETTERS), routed);
            }

            @Override
            public boolean isBounded() {
                return false;
            }
        };
    }

    @Override
    public DynamicTableSource copy() {
        SnapshotsKinesisTableSource copy =
                new SnapshotsKinesisTableSource(
                        table,
                        settings,
                        format,
                        physical,
                        rowtime,
                        rowtimePrecision,
                        rule,
                        maxDrift,
                        deadLetters);
        copy.watermarks = watermarks;
        copy.metadata = metadata;
        copy.produced = produced;
        return copy;
    }

    @Override
    public String asSummaryString() {
        return "snapshots-kinesis " + settings.streamArn();
    }
}
