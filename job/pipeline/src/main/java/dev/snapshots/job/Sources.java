package dev.snapshots.job;

import dev.snapshots.job.config.JobConfig;
import dev.snapshots.job.config.JobOptions;
import dev.snapshots.job.ingest.EventJudge;
import dev.snapshots.job.ingest.EventParser;
import dev.snapshots.job.ingest.Ingested;
import dev.snapshots.job.source.IndexedSource;
import dev.snapshots.job.source.LatenessRule;
import dev.snapshots.job.source.RawRecord;
import dev.snapshots.job.source.TelemetryGenerator;
import dev.snapshots.job.source.kinesis.KinesisShardSource;
import dev.snapshots.kinesis.SnapshotsKinesisOptions;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.List;
import java.util.Optional;
import java.util.Properties;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.apache.flink.annotation.Internal;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.connector.source.SourceReaderContext;
import org.apache.flink.api.connector.source.util.ratelimit.RateLimiterStrategy;
import org.apache.flink.connector.datagen.source.GeneratorFunction;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;

/**
 * The job's sources. Each judges its records inside the source, split by split ({@link EventJudge}:
 * a Kinesis shard, a generator or file range), and emits each split's watermark on the split's own
 * output, so a window closes only when every split has passed it. Watermark alignment pauses a
 * split that runs more than {@code --max-drift} ahead of the slowest.
 */
@Internal
public final class Sources {
    /** How often subtasks report their watermarks for alignment (Flink's default). */
    private static final Duration ALIGNMENT_UPDATE = Duration.ofSeconds(1);

    private Sources() {}

    public static DataStream<Ingested> create(StreamExecutionEnvironment env, JobConfig config) {
        switch (config.source()) {
            case "generator":
                return indexed(
                        env,
                        config,
                        generatorFunction(config),
                        generatorCount(config),
                        1,
                        RateLimiterStrategy.perSecond(config.get(JobOptions.EVENTS_PER_SECOND)),
                        "generator");
            case "file":
                return file(env, config);
            default:
                return kinesis(env, config, 0);
        }
    }

    public static TelemetryGenerator generatorFunction(JobConfig c) {
        return new TelemetryGenerator(
                c.start().toEpochMilli(),
                c.get(JobOptions.SEED),
                (int) c.get(JobOptions.KEYS),
                c.windowLength().toMillis(),
                (int) c.get(JobOptions.EVENTS_PER_WINDOW),
                (int) c.get(JobOptions.BAD_EVERY),
                (int) c.get(JobOptions.LATE_EVERY),
                c.get(JobOptions.OUT_OF_ORDERNESS).toMillis(),
                (int) c.get(JobOptions.MAX_RECORD_BYTES));
    }

    /** How many records the generator makes: windows x events per window, or unbounded. */
    public static long generatorCount(JobConfig c) {
        long windows = c.get(JobOptions.WINDOWS);
        return windows == 0
                ? IndexedSource.UNBOUNDED
                : windows * c.get(JobOptions.EVENTS_PER_WINDOW);
    }

    /** The job's parsing and lateness rule, which every source applies to every split. */
    public static EventJudge judge(JobConfig c) {
        EventParser parser =
                new EventParser(
                        (int) c.get(JobOptions.MAX_RECORD_BYTES),
                        c.get(JobOptions.FUTURE_HORIZON).toMillis(),
                        c.get(JobOptions.PAST_HORIZON).toMillis());
        return new EventJudge(
                parser,
                new LatenessRule(
                        c.windowLength().toMillis(),
                        c.get(JobOptions.OUT_OF_ORDERNESS).toMillis(),
                        c.get(JobOptions.IDLENESS).toMillis()));
    }

    /**
     * The sources emit each split's watermark themselves; the strategy adds the alignment between
     * splits.
     */
    static WatermarkStrategy<Ingested> watermarks(JobConfig c) {
        WatermarkStrategy<Ingested> strategy = WatermarkStrategy.noWatermarks();
        Duration drift = c.get(JobOptions.MAX_DRIFT);
        return drift.isZero()
                ? strategy
                : strategy.withWatermarkAlignment(
                        "snapshots-" + c.pipeline(), drift, ALIGNMENT_UPDATE);
    }

    /**
     * Kinesis: shard positions and each shard's progress live in Flink's checkpoints. Any number of
     * shards per subtask; a shard read to its end hands its progress to its children.
     *
     * @param assignmentSeed 0: shards go to readers in shard id order; otherwise shuffled by it
     *     (tests)
     */
    static DataStream<Ingested> kinesis(
            StreamExecutionEnvironment env, JobConfig c, long assignmentSeed) {
        String arn = c.get(JobOptions.STREAM_ARN);
        Properties aws = new Properties();
        aws.setProperty(SnapshotsKinesisOptions.AWS_REGION.key(), arn.split(":")[3]);
        if (!c.get(JobOptions.KINESIS_ENDPOINT).isEmpty()) {
            aws.setProperty(
                    SnapshotsKinesisOptions.AWS_ENDPOINT.key(), c.get(JobOptions.KINESIS_ENDPOINT));
        }
        KinesisShardSource.Settings settings =
                new KinesisShardSource.Settings(
                        arn,
                        aws,
                        c.get(JobOptions.INITIAL_POSITION),
                        c.get(JobOptions.SHARD_DISCOVERY),
                        c.get(JobOptions.SHARD_POLL_INTERVAL),
                        assignmentSeed);
        return env.fromSource(
                        new KinesisShardSource<>(
                                settings, judge(c), TypeInformation.of(Ingested.class)),
                        watermarks(c),
                        "kinesis")
                .uid("source-kinesis");
    }

    /**
     * Records by index from {@code records}, in {@code splits} ranges, one reader per split. The
     * uid is {@code source-NAME}.
     *
     * @param rate null: as fast as the job takes them
     */
    public static DataStream<Ingested> indexed(
            StreamExecutionEnvironment env,
            JobConfig c,
            GeneratorFunction<Long, RawRecord> records,
            long count,
            int splits,
            RateLimiterStrategy rate,
            String name) {
        return indexed(
                        env,
                        c,
                        new IndexedSource<>(
                                records,
                                count,
                                splits,
                                judge(c),
                                TypeInformation.of(Ingested.class),
                                rate),
                        name)
                .setParallelism(splits);
    }

    /**
     * An indexed source of the job's records, with the job's watermarks; uid {@code source-NAME}.
     */
    public static SingleOutputStreamOperator<Ingested> indexed(
            StreamExecutionEnvironment env,
            JobConfig c,
            IndexedSource<Ingested> source,
            String name) {
        return env.fromSource(source, watermarks(c), name).uid("source-" + name);
    }

    /**
     * Replays a JSON-lines file in order. A file has no arrival times: each line arrives at its own
     * {@code ts} (so the time horizon never rejects a replayed line), and a line without a readable
     * one at the arrival of the line before it.
     */
    private static DataStream<Ingested> file(StreamExecutionEnvironment env, JobConfig c) {
        Path path = Path.of(c.get(JobOptions.FILE));
        long lines;
        try (Stream<String> s =
                Files.lines(path, StandardCharsets.ISO_8859_1)) { // counts lines of any bytes
            lines = s.count();
        } catch (IOException | UncheckedIOException e) {
            throw new IllegalArgumentException(
                    "--file " + path + " cannot be read: " + e.getMessage());
        }
        return indexed(
                env, c, new FileLines(path.toAbsolutePath().toString()), lines, 1, null, "file");
    }

    static final class FileLines implements GeneratorFunction<Long, RawRecord> {
        private static final Pattern TS =
                Pattern.compile("\"ts\"\\s*:\\s*(?:\"([^\"]+)\"|(-?\\d{1,18}))");
        private final String path;
        private transient List<byte[]> lines;
        private transient long[] arrivals;

        FileLines(String path) {
            this.path = path;
        }

        @Override
        public void open(SourceReaderContext context) throws IOException {
            lines =
                    Files.readAllLines(Path.of(path), StandardCharsets.ISO_8859_1).stream()
                            .map(
                                    l ->
                                            l.getBytes(
                                                    StandardCharsets
                                                            .ISO_8859_1)) // the raw bytes, UTF-8 or
                            // not
                            .toList();
            arrivals = new long[lines.size()];
            long last = 0;
            for (int i = 0; i < arrivals.length; i++) {
                last =
                        ownTimestamp(new String(lines.get(i), StandardCharsets.ISO_8859_1))
                                .orElse(last);
                arrivals[i] = last;
            }
        }

        private static Optional<Long> ownTimestamp(String line) {
            Matcher m = TS.matcher(line);
            if (!m.find()) {
                return Optional.empty();
            }
            try {
                return Optional.of(
                        m.group(2) != null
                                ? Long.parseLong(m.group(2))
                                : OffsetDateTime.parse(m.group(1)).toInstant().toEpochMilli());
            } catch (RuntimeException e) {
                return Optional.empty();
            }
        }

        @Override
        public RawRecord map(Long index) {
            byte[] line = lines.get(index.intValue());
            return new RawRecord("file:" + (index + 1), arrivals[index.intValue()], line);
        }
    }
}
