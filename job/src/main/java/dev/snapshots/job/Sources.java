package dev.snapshots.job;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.connector.source.SourceReaderContext;
import org.apache.flink.api.connector.source.util.ratelimit.RateLimiterStrategy;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.connector.datagen.source.DataGeneratorSource;
import org.apache.flink.connector.kinesis.source.KinesisStreamsSource;
import org.apache.flink.connector.kinesis.source.config.KinesisStreamsSourceConfigConstants;
import org.apache.flink.kinesis.shaded.org.apache.flink.connector.aws.config.AWSConfigConstants;
import org.apache.flink.connector.datagen.source.GeneratorFunction;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;

/** The job's sources, each delivering {@link RawRecord}s with positions in Flink's checkpoints. */
public final class Sources {
    private Sources() {}

    public static DataStream<RawRecord> create(StreamExecutionEnvironment env, JobConfig config) {
        switch (config.source()) {
            case "generator":
                return generator(env, config);
            case "file":
                return file(env, config);
            default:
                return kinesis(env, config);
        }
    }

    public static TelemetryGenerator generatorFunction(JobConfig c) {
        return new TelemetryGenerator(c.instant("start").toEpochMilli(), c.number("seed"), (int) c.number("keys"), c.windowLength().toMillis(),
                (int) c.number("events-per-window"), (int) c.number("bad-every"), (int) c.number("late-every"),
                c.duration("out-of-orderness").toMillis(), (int) c.number("max-record-bytes"));
    }

    /** How many records the generator makes: windows x events per window, or unbounded. */
    public static long generatorCount(JobConfig c) {
        long windows = c.number("windows");
        return windows == 0 ? Long.MAX_VALUE : windows * c.number("events-per-window");
    }

    /**
     * Kinesis through the FLIP-27 source; shard positions live in Flink's checkpoints. Every
     * subtask reads its own shards and parses and watermarks them itself (see SnapshotPipeline),
     * so give the job about as many subtasks as the stream has shards.
     */
    private static DataStream<RawRecord> kinesis(StreamExecutionEnvironment env, JobConfig c) {
        String arn = c.string("stream-arn");
        Configuration source = new Configuration();
        source.set(KinesisStreamsSourceConfigConstants.STREAM_INITIAL_POSITION,
                KinesisStreamsSourceConfigConstants.InitialPosition.valueOf(c.string("initial-position")));
        source.setString(AWSConfigConstants.AWS_REGION, arn.split(":")[3]);
        if (!c.string("kinesis-endpoint").isEmpty()) {
            source.setString(AWSConfigConstants.AWS_ENDPOINT, c.string("kinesis-endpoint"));
        }
        KinesisStreamsSource<RawRecord> kinesis = KinesisStreamsSource.<RawRecord>builder()
                .setStreamArn(arn)
                .setSourceConfig(source)
                .setDeserializationSchema(new KinesisRecords())
                .build();
        // The 4.3.0 source does not expose its produced type, so it is given here.
        return env.fromSource(kinesis, WatermarkStrategy.noWatermarks(), "kinesis", TypeInformation.of(RawRecord.class))
                .uid("source-kinesis");
    }

    /** One reader: which events are late must depend on the input order alone. */
    private static DataStream<RawRecord> generator(StreamExecutionEnvironment env, JobConfig c) {
        DataGeneratorSource<RawRecord> source = new DataGeneratorSource<>(generatorFunction(c), generatorCount(c),
                RateLimiterStrategy.perSecond(c.number("events-per-second")), TypeInformation.of(RawRecord.class));
        return env.fromSource(source, WatermarkStrategy.noWatermarks(), "generator").uid("source-generator").setParallelism(1);
    }

    /**
     * Replays a JSON-lines file in order, one reader. A file has no arrival times: each line
     * arrives at its own {@code ts} (so the time horizon never rejects a replayed line), and a
     * line without a readable one at the arrival of the line before it.
     */
    private static DataStream<RawRecord> file(StreamExecutionEnvironment env, JobConfig c) {
        Path path = Path.of(c.string("file"));
        long lines;
        try (Stream<String> s = Files.lines(path, StandardCharsets.ISO_8859_1)) { // counts lines of any bytes
            lines = s.count();
        } catch (IOException | UncheckedIOException e) {
            throw new IllegalArgumentException("--file " + path + " cannot be read: " + e.getMessage());
        }
        DataGeneratorSource<RawRecord> source = new DataGeneratorSource<>(new FileLines(path.toAbsolutePath().toString()),
                lines, TypeInformation.of(RawRecord.class));
        return env.fromSource(source, WatermarkStrategy.noWatermarks(), "file").uid("source-file").setParallelism(1);
    }

    static final class FileLines implements GeneratorFunction<Long, RawRecord> {
        private static final Pattern TS = Pattern.compile("\"ts\"\\s*:\\s*(?:\"([^\"]+)\"|(-?\\d{1,18}))");
        private final String path;
        private transient List<byte[]> lines;
        private transient long[] arrivals;

        FileLines(String path) {
            this.path = path;
        }

        @Override
        public void open(SourceReaderContext context) throws IOException {
            lines = Files.readAllLines(Path.of(path), StandardCharsets.ISO_8859_1).stream()
                    .map(l -> l.getBytes(StandardCharsets.ISO_8859_1)) // the raw bytes, UTF-8 or not
                    .toList();
            arrivals = new long[lines.size()];
            long last = 0;
            for (int i = 0; i < arrivals.length; i++) {
                last = ownTimestamp(new String(lines.get(i), StandardCharsets.ISO_8859_1)).orElse(last);
                arrivals[i] = last;
            }
        }

        private static java.util.Optional<Long> ownTimestamp(String line) {
            Matcher m = TS.matcher(line);
            if (!m.find()) {
                return java.util.Optional.empty();
            }
            try {
                return java.util.Optional.of(m.group(2) != null
                        ? Long.parseLong(m.group(2))
                        : java.time.OffsetDateTime.parse(m.group(1)).toInstant().toEpochMilli());
            } catch (RuntimeException e) {
                return java.util.Optional.empty();
            }
        }

        @Override
        public RawRecord map(Long index) {
            byte[] line = lines.get(index.intValue());
            return new RawRecord("file:" + (index + 1), arrivals[index.intValue()], line);
        }
    }
}
