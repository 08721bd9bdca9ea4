package dev.snapshots.format;

import dev.snapshots.key.PartKind;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import org.apache.avro.Schema;
import org.apache.avro.SchemaNormalization;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericDatumReader;
import org.apache.avro.generic.GenericDatumWriter;
import org.apache.avro.generic.GenericRecord;
import org.apache.avro.io.BinaryEncoder;
import org.apache.avro.io.DecoderFactory;
import org.apache.avro.io.EncoderFactory;
import org.apache.avro.io.JsonEncoder;
import org.apache.flink.annotation.Internal;
import org.apache.flink.api.common.serialization.BulkWriter;
import org.apache.flink.core.fs.FSDataOutputStream;
import org.apache.flink.formats.parquet.ParquetBuilder;
import org.apache.flink.formats.parquet.ParquetWriterFactory;
import org.apache.hadoop.conf.Configuration;
import org.apache.parquet.avro.AvroParquetReader;
import org.apache.parquet.avro.AvroParquetWriter;
import org.apache.parquet.hadoop.ParquetReader;
import org.apache.parquet.hadoop.metadata.CompressionCodecName;

/**
 * Encodes a sorted part as Parquet (through flink-parquet) and computes its content fingerprint.
 *
 * <p>Nothing time- or host-dependent enters the file: parquet-java writes no timestamps, and
 * provenance goes into object metadata, not the file. Within one JVM equal rows give equal bytes.
 * Across JVMs parquet-java may order a footer's encoding list differently, which is why divergence
 * is judged on the {@linkplain #fingerprint fingerprint}, never on file bytes.
 */
@Internal
public final class PartEncoding {
    private static final byte[] FINGERPRINT_DOMAIN =
            "snapshots/part-fingerprint/v1".getBytes(StandardCharsets.US_ASCII);

    private PartEncoding() {}

    /** The file of a part of this kind: Parquet for snapshots, JSON lines for dead letters. */
    public static byte[] encode(PartKind kind, List<GenericRecord> rows, Schema schema)
            throws IOException {
        BytesOutput out = new BytesOutput();
        BulkWriter<GenericRecord> writer = writer(kind, schema, out);
        for (GenericRecord row : rows) {
            writer.addElement(row);
        }
        writer.finish();
        return out.bytes.toByteArray();
    }

    /** Parquet bytes of {@code rows}, in the order given. */
    public static byte[] encode(List<GenericRecord> rows, Schema schema) throws IOException {
        return encode(PartKind.SNAPSHOT, rows, schema);
    }

    public static List<GenericRecord> decode(PartKind kind, byte[] content, Schema schema)
            throws IOException {
        return kind == PartKind.SNAPSHOT ? decode(content) : decodeJsonLines(content, schema);
    }

    private static BulkWriter<GenericRecord> writer(
            PartKind kind, Schema schema, FSDataOutputStream out) throws IOException {
        return kind == PartKind.SNAPSHOT
                ? parquetWriters(schema).create(out)
                : new JsonLines(schema, out);
    }

    /**
     * Encodes one part row by row and fingerprints it on the way, so each row's record lives for
     * its own turn only: a part of 250,000 rows never holds 250,000 records (and their boxed
     * fields) at once, which G1 would otherwise promote and collect concurrently.
     */
    public static final class PartWriter {
        private final BytesOutput out = new BytesOutput();
        private final BulkWriter<GenericRecord> writer;
        private final Fingerprint fingerprint;
        private int rows;

        public PartWriter(PartKind kind, Schema schema, int schemaVersion) throws IOException {
            this.writer = writer(kind, schema, out);
            this.fingerprint = new Fingerprint(schema, schemaVersion);
        }

        public void add(GenericRecord row) throws IOException {
            fingerprint.add(row);
            writer.addElement(row);
            rows++;
        }

        /** The file, once every row is added. */
        public byte[] finish() throws IOException {
            writer.finish();
            return out.bytes.toByteArray();
        }

        /**
         * The part's {@linkplain PartEncoding#fingerprint fingerprint}, once every row is added.
         */
        public String fingerprint() {
            return fingerprint.hex();
        }

        public int rows() {
            return rows;
        }
    }

    /** One Avro-JSON object per line: readable with jq or any JSON-lines reader. */
    private static final class JsonLines implements BulkWriter<GenericRecord> {
        private final Schema schema;
        private final FSDataOutputStream out;
        private final GenericDatumWriter<GenericRecord> writer;

        JsonLines(Schema schema, FSDataOutputStream out) {
            this.schema = schema;
            this.out = out;
            this.writer = new GenericDatumWriter<>(schema);
        }

        @Override
        public void addElement(GenericRecord row) throws IOException {
            JsonEncoder encoder = EncoderFactory.get().jsonEncoder(schema, out);
            writer.write(row, encoder);
            encoder.flush();
            out.write('\n');
        }

        @Override
        public void flush() {}

        @Override
        public void finish() {}
    }

    static List<GenericRecord> decodeJsonLines(byte[] content, Schema schema) throws IOException {
        List<GenericRecord> rows = new ArrayList<>();
        GenericDatumReader<GenericRecord> reader = new GenericDatumReader<>(schema);
        for (String line : new String(content, StandardCharsets.UTF_8).split("\n")) {
            if (!line.isEmpty()) {
                rows.add(reader.read(null, DecoderFactory.get().jsonDecoder(schema, line)));
            }
        }
        return rows;
    }

    /**
     * The Parquet writers parts are encoded with (Snappy, no Hadoop defaults). Public so that a
     * comparison, such as the benchmark's FileSink, writes exactly the same format.
     *
     * <p>No dictionary encoding: a part holds one row per key, so key and measure columns are
     * nearly all distinct, and parquet-java would build each column's dictionary only to discard it
     * and encode the page again plainly (docs/BENCHMARKS.md has what it cost).
     */
    public static ParquetWriterFactory<GenericRecord> parquetWriters(Schema schema) {
        String schemaJson = schema.toString();
        ParquetBuilder<GenericRecord> builder =
                out ->
                        AvroParquetWriter.<GenericRecord>builder(out)
                                .withSchema(new Schema.Parser().parse(schemaJson))
                                .withDataModel(GenericData.get())
                                .withCompressionCodec(CompressionCodecName.SNAPPY)
                                .withDictionaryEncoding(false)
                                .withConf(hadoopConf())
                                .build();
        return new ParquetWriterFactory<>(builder);
    }

    /** The records of a Parquet part, read with parquet-avro's reader. */
    public static List<GenericRecord> decode(byte[] parquet) throws IOException {
        List<GenericRecord> rows = new ArrayList<>();
        try (ParquetReader<GenericRecord> reader =
                AvroParquetReader.<GenericRecord>builder(new ParquetBytes(parquet))
                        .withDataModel(GenericData.get())
                        .withConf(hadoopConf())
                        .build()) {
            for (GenericRecord r = reader.read(); r != null; r = reader.read()) {
                rows.add(r);
            }
        }
        return rows;
    }

    /**
     * SHA-256 over the schema version, the schema's canonical form and each row's Avro binary
     * encoding (length-prefixed), in order. It depends on the logical content only, so it is the
     * same whichever JVM wrote the file and whatever parquet-java put in the footer.
     */
    public static String fingerprint(List<GenericRecord> rows, Schema schema, int schemaVersion) {
        Fingerprint fingerprint = new Fingerprint(schema, schemaVersion);
        rows.forEach(fingerprint::add);
        return fingerprint.hex();
    }

    /** The fingerprint's hash, fed one row at a time. */
    private static final class Fingerprint {
        /** Bytes gathered before they are hashed: one digest call per row cost more than it. */
        private static final int CHUNK = 1 << 16;

        private static final byte[] LENGTH_SLOT = new byte[4];

        private final MessageDigest sha = sha256();
        private final GenericDatumWriter<GenericRecord> writer;

        /** Each row's length and encoding, in turn, until a chunk is full. */
        private final RowBuffer rows = new RowBuffer();

        private BinaryEncoder encoder;

        Fingerprint(Schema schema, int schemaVersion) {
            sha.update(FINGERPRINT_DOMAIN);
            sha.update(
                    ByteBuffer.allocate(12)
                            .putInt(schemaVersion)
                            .putLong(SchemaNormalization.parsingFingerprint64(schema))
                            .array());
            writer = new GenericDatumWriter<>(schema);
        }

        void add(GenericRecord r) {
            int start = rows.size();
            rows.write(LENGTH_SLOT, 0, 4);
            encoder = EncoderFactory.get().directBinaryEncoder(rows, encoder);
            try {
                writer.write(r, encoder);
            } catch (IOException e) {
                throw new IllegalArgumentException("row does not match the part schema: " + r, e);
            }
            ByteBuffer.wrap(rows.contents(), start, 4).putInt(rows.size() - start - 4);
            if (rows.size() >= CHUNK) {
                hashRows();
            }
        }

        String hex() {
            hashRows();
            return HexFormat.of().formatHex(sha.digest());
        }

        private void hashRows() {
            sha.update(rows.contents(), 0, rows.size());
            rows.reset();
        }
    }

    /** Avro binary encoding of one record: the canonical bytes rows are sorted and hashed by. */
    public static byte[] canonicalBytes(GenericRecord record) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try {
            new GenericDatumWriter<GenericRecord>(record.getSchema())
                    .write(record, EncoderFactory.get().directBinaryEncoder(out, null));
        } catch (IOException e) {
            throw new IllegalArgumentException("row does not match its schema: " + record, e);
        }
        return out.toByteArray();
    }

    /** Without defaults: nothing to load from XML, nothing from the environment. */
    private static Configuration hadoopConf() {
        return new Configuration(false);
    }

    private static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JVM ships SHA-256", e);
        }
    }

    private static final class RowBuffer extends ByteArrayOutputStream {
        byte[] contents() {
            return buf;
        }
    }

    /** flink-parquet writes to a Flink stream; a part is small enough to build in memory. */
    private static final class BytesOutput extends FSDataOutputStream {
        final ByteArrayOutputStream bytes = new ByteArrayOutputStream();

        @Override
        public long getPos() {
            return bytes.size();
        }

        @Override
        public void write(int b) {
            bytes.write(b);
        }

        @Override
        public void write(byte[] b, int off, int len) {
            bytes.write(b, off, len);
        }

        @Override
        public void flush() {}

        @Override
        public void sync() {}

        @Override
        public void close() {}
    }
}
