package dev.snapshots.jmh;

import dev.snapshots.format.PartEncoding;
import dev.snapshots.job.WindowAggregate;
import dev.snapshots.key.PartKind;
import dev.snapshots.sink.EncodedPart;
import dev.snapshots.store.Chunks;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.apache.avro.generic.GenericRecord;
import org.apache.flink.api.common.serialization.BulkWriter;
import org.apache.flink.core.fs.FSDataOutputStream;
import org.apache.flink.formats.parquet.ParquetWriterFactory;
import org.apache.hadoop.conf.Configuration;
import org.apache.parquet.avro.AvroSchemaConverter;
import org.apache.parquet.hadoop.ParquetWriter;
import org.apache.parquet.hadoop.api.WriteSupport;
import org.apache.parquet.hadoop.metadata.CompressionCodecName;
import org.apache.parquet.io.OutputFile;
import org.apache.parquet.io.api.Binary;
import org.apache.parquet.io.api.RecordConsumer;
import org.apache.parquet.schema.MessageType;
import org.openjdk.jmh.annotations.AuxCounters;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * One part of the job's rows ({@link WindowAggregate}), written three ways, in memory:
 *
 * <ul>
 *   <li>{@code ours}: the sink writer's path ({@link EncodedPart}): sort by key, Parquet from the
 *       fields, and the content fingerprint in the same pass;
 *   <li>{@code parquetAvro}: parquet-avro from an Avro record per row, unsorted, no fingerprint:
 *       what the benchmark's FileSink writes;
 *   <li>{@code floor}: Parquet's column writing alone, each field straight to the record consumer
 *       (no Avro, no sort, no fingerprint): what any sink that writes these rows as Parquet pays.
 * </ul>
 *
 * <p>All three with our parts' Parquet settings (Snappy, no dictionary), rows shuffled once per
 * trial so the sort has work to do. A score is one part; {@link PartBenchmarks} divides by its
 * rows.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Fork(
        value = 1,
        jvmArgsAppend = {"-Xms2g", "-Xmx2g"})
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
public class PartBenchmark {
    private static final WindowAggregate.Format FORMAT = new WindowAggregate.Format();

    @Param({"1000", "100000", "1000000"})
    public int rows;

    List<WindowAggregate> part;

    /** Ours builds every part in one buffer, as the sink's writer does. */
    final Chunks partBytes = new Chunks();

    /** Bytes of the last part written, printed at the end of a trial. */
    long outputBytes;

    @Setup(Level.Trial)
    public void rows() {
        part = rows(rows, 42);
    }

    @TearDown(Level.Trial)
    public void report() {
        // Read back by PartBenchmarks from the run's output.
        System.out.println("output bytes: " + outputBytes);
    }

    /** A window's rows: one per device, with plausible values, in no particular order. */
    static List<WindowAggregate> rows(int n, long seed) {
        Random random = new Random(seed);
        List<WindowAggregate> rows = new ArrayList<>(n);
        long start = 1_764_547_200_000L;
        for (int i = 0; i < n; i++) {
            WindowAggregate a = new WindowAggregate();
            a.device = String.format("dev-%05d", i);
            a.windowStart = start;
            a.windowEnd = start + 300_000;
            a.count = 1 + random.nextInt(40);
            a.minMicros = random.nextInt(50_000_000);
            a.maxMicros = a.minMicros + random.nextInt(50_000_000);
            a.sumMicros = a.count * ((a.minMicros + a.maxMicros) / 2);
            a.lastTimestamp = start + random.nextInt(300_000);
            a.lastMicros = a.minMicros + random.nextInt(1 + (int) (a.maxMicros - a.minMicros));
            a.bytes = a.count * (100 + random.nextInt(300));
            a.maxLatencyMicros = random.nextInt(5_000_000);
            rows.add(a);
        }
        Collections.shuffle(rows, random);
        return rows;
    }

    /**
     * The benchmark thread's CPU time and the parts it wrote, per iteration. On a shared 2-core
     * machine a part's wall time includes the time other processes ran; its CPU time does not, so
     * the ratios are taken from these.
     */
    @State(Scope.Thread)
    @AuxCounters(AuxCounters.Type.EVENTS)
    public static class Cpu {
        private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();
        public long cpuNanos;
        public long parts;
        private long started;

        @Setup(Level.Iteration)
        public void clean() {
            cpuNanos = 0;
            parts = 0;
        }

        void start() {
            started = THREADS.getCurrentThreadCpuTime();
        }

        void stop() {
            cpuNanos += THREADS.getCurrentThreadCpuTime() - started;
            parts++;
        }
    }

    /** One part through {@code path}, its thread's CPU time counted. */
    private static <R> R counted(Cpu cpu, PartPath<R> path) throws IOException {
        cpu.start();
        R written = path.write();
        cpu.stop();
        return written;
    }

    private interface PartPath<R> {
        R write() throws IOException;
    }

    @Benchmark
    public EncodedPart ours(Cpu cpu) throws IOException {
        return counted(cpu, this::ours);
    }

    EncodedPart ours() throws IOException {
        EncodedPart encoded =
                EncodedPart.of(
                        PartKind.SNAPSHOT,
                        FORMAT,
                        1,
                        PartEncoding.FINGERPRINT_SCHEME,
                        part,
                        partBytes);
        outputBytes = encoded.file().length();
        return encoded;
    }

    @Benchmark
    public long parquetAvro(Cpu cpu) throws IOException {
        return counted(cpu, this::parquetAvro);
    }

    long parquetAvro() throws IOException {
        Counting out = new Counting();
        BulkWriter<GenericRecord> writer = PartEncoding.parquetWriters(FORMAT.schema()).create(out);
        for (WindowAggregate row : part) {
            writer.addElement(FORMAT.toRecord(row));
        }
        writer.finish();
        return outputBytes = out.getPos();
    }

    @Benchmark
    public long floor(Cpu cpu) throws IOException {
        return counted(cpu, this::floor);
    }

    long floor() throws IOException {
        Counting out = new Counting();
        BulkWriter<WindowAggregate> writer =
                new ParquetWriterFactory<>(
                                file ->
                                        new FloorBuilder(file)
                                                .withCompressionCodec(CompressionCodecName.SNAPPY)
                                                .withDictionaryEncoding(false)
                                                .withConf(new Configuration(false))
                                                .build())
                        .create(out);
        for (WindowAggregate row : part) {
            writer.addElement(row);
        }
        writer.finish();
        return outputBytes = out.getPos();
    }

    private static final class FloorBuilder
            extends ParquetWriter.Builder<WindowAggregate, FloorBuilder> {
        FloorBuilder(OutputFile file) {
            super(file);
        }

        @Override
        protected FloorBuilder self() {
            return this;
        }

        @Override
        protected WriteSupport<WindowAggregate> getWriteSupport(Configuration conf) {
            return new FloorWriteSupport();
        }
    }

    /** Each field to the record consumer, as the file schema orders them; nothing else. */
    private static final class FloorWriteSupport extends WriteSupport<WindowAggregate>
            implements dev.snapshots.format.FlatRowFormat.Fields {
        private final MessageType type =
                new AvroSchemaConverter(new Configuration(false)).convert(FORMAT.schema());
        private RecordConsumer consumer;
        private int field;

        @Override
        public WriteContext init(Configuration configuration) {
            return new WriteContext(type, Map.of());
        }

        @Override
        public void prepareForWrite(RecordConsumer recordConsumer) {
            consumer = recordConsumer;
        }

        @Override
        public void write(WindowAggregate row) {
            consumer.startMessage();
            field = 0;
            FORMAT.writeFields(row, this);
            consumer.endMessage();
        }

        @Override
        public void string(String value) {
            consumer.startField(type.getFieldName(field), field);
            consumer.addBinary(
                    Binary.fromConstantByteArray(value.getBytes(StandardCharsets.UTF_8)));
            consumer.endField(type.getFieldName(field), field++);
        }

        @Override
        public void int64(long value) {
            consumer.startField(type.getFieldName(field), field);
            consumer.addLong(value);
            consumer.endField(type.getFieldName(field), field++);
        }

        @Override
        public void float64(double value) {
            consumer.startField(type.getFieldName(field), field);
            consumer.addDouble(value);
            consumer.endField(type.getFieldName(field), field++);
        }
    }

    /** Counts what Parquet writes and keeps none of it: the floor's output costs nothing. */
    private static final class Counting extends FSDataOutputStream {
        private long written;

        @Override
        public long getPos() {
            return written;
        }

        @Override
        public void write(int b) {
            written++;
        }

        @Override
        public void write(byte[] b, int off, int len) {
            written += len;
        }

        @Override
        public void flush() {}

        @Override
        public void sync() {}

        @Override
        public void close() {}
    }
}
