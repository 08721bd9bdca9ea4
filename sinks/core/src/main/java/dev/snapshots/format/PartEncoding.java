package dev.snapshots.format;

import dev.snapshots.key.PartKind;
import dev.snapshots.store.Chunks;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.apache.avro.AvroRuntimeException;
import org.apache.avro.LogicalTypes;
import org.apache.avro.Schema;
import org.apache.avro.SchemaNormalization;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericDatumReader;
import org.apache.avro.generic.GenericDatumWriter;
import org.apache.avro.generic.GenericFixed;
import org.apache.avro.generic.GenericRecord;
import org.apache.avro.io.BinaryEncoder;
import org.apache.avro.io.DecoderFactory;
import org.apache.avro.io.Encoder;
import org.apache.avro.io.EncoderFactory;
import org.apache.avro.io.JsonEncoder;
import org.apache.avro.util.Utf8;
import org.apache.flink.annotation.Internal;
import org.apache.flink.api.common.serialization.BulkWriter;
import org.apache.flink.core.fs.FSDataOutputStream;
import org.apache.flink.formats.parquet.ParquetBuilder;
import org.apache.flink.formats.parquet.ParquetWriterFactory;
import org.apache.hadoop.conf.Configuration;
import org.apache.parquet.HadoopReadOptions;
import org.apache.parquet.avro.AvroReadSupport;
import org.apache.parquet.avro.AvroSchemaConverter;
import org.apache.parquet.avro.AvroWriteSupport;
import org.apache.parquet.column.page.PageReadStore;
import org.apache.parquet.filter2.compat.FilterCompat;
import org.apache.parquet.hadoop.ParquetFileReader;
import org.apache.parquet.hadoop.ParquetWriter;
import org.apache.parquet.hadoop.api.InitContext;
import org.apache.parquet.hadoop.api.ReadSupport;
import org.apache.parquet.hadoop.api.WriteSupport;
import org.apache.parquet.hadoop.metadata.CompressionCodecName;
import org.apache.parquet.hadoop.metadata.FileMetaData;
import org.apache.parquet.io.ColumnIOFactory;
import org.apache.parquet.io.MessageColumnIO;
import org.apache.parquet.io.OutputFile;
import org.apache.parquet.io.RecordReader;
import org.apache.parquet.io.api.Binary;
import org.apache.parquet.io.api.RecordConsumer;
import org.apache.parquet.io.api.RecordMaterializer;
import org.apache.parquet.schema.LogicalTypeAnnotation;
import org.apache.parquet.schema.MessageType;
import org.apache.parquet.schema.PrimitiveType.PrimitiveTypeName;
import org.apache.parquet.schema.Type;
import org.apache.parquet.schema.Types;

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
    /**
     * Fingerprint scheme 1: SHA-256 over each row's Avro binary encoding. What a job version whose
     * identity names no scheme (recorded before 0.3.0) was written with, and keeps.
     */
    public static final int FINGERPRINT_AVRO = 1;

    /**
     * Fingerprint scheme 2: SHA-256 over each row's typed values, without Avro (see {@link
     * TypedFingerprint}). What a new job version records.
     */
    public static final int FINGERPRINT_TYPED = 2;

    /** The scheme this release gives a job version that has recorded none yet. */
    public static final int FINGERPRINT_SCHEME = FINGERPRINT_TYPED;

    /** Where parquet-avro's writer keeps the Avro schema in the footer, and its reader looks. */
    private static final String AVRO_SCHEMA_KEY = "parquet.avro.schema";

    private PartEncoding() {}

    /** The file of a part of this kind: Parquet for snapshots, JSON lines for dead letters. */
    public static byte[] encode(PartKind kind, List<GenericRecord> rows, Schema schema)
            throws IOException {
        Chunks out = new Chunks();
        BulkWriter<GenericRecord> writer = writer(kind, schema, out);
        for (GenericRecord row : rows) {
            writer.addElement(row);
        }
        writer.finish();
        return out.toByteArray();
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
     * Encodes one part row by row and fingerprints it on the way, so each row's record, if it needs
     * one, lives for its own turn only: a part of 250,000 rows never holds 250,000 records (and
     * their boxed fields) at once, which G1 would otherwise promote and collect concurrently. A
     * {@link FlatRowFormat}'s snapshot rows need no record at all.
     */
    public static final class PartWriter<T> {
        private final Chunks out;
        private final RowFormat<T> format;
        private final Fingerprint fingerprint;

        /**
         * Set when rows are written from their fields, each field to the file and the fingerprint
         * at once; else {@link #records} is.
         */
        private final BulkWriter<T> fields;

        private final BulkWriter<GenericRecord> records;
        private int rows;

        /**
         * @param fingerprintScheme {@link #FINGERPRINT_AVRO} or {@link #FINGERPRINT_TYPED}: the one
         *     the part's job version recorded
         */
        public PartWriter(
                PartKind kind, RowFormat<T> format, int schemaVersion, int fingerprintScheme)
                throws IOException {
            this(kind, format, schemaVersion, fingerprintScheme, new Chunks());
        }

        /**
         * @param out where the file goes, emptied first: a writer's buffer, reused part after part
         */
        public PartWriter(
                PartKind kind,
                RowFormat<T> format,
                int schemaVersion,
                int fingerprintScheme,
                Chunks out)
                throws IOException {
            out.reset();
            this.out = out;
            this.format = format;
            this.fingerprint = Fingerprint.of(fingerprintScheme, format.schema(), schemaVersion);
            this.fields =
                    kind == PartKind.SNAPSHOT && format instanceof FlatRowFormat<T> flat
                            ? flatParquetWriter(flat, fingerprint, out)
                            : null;
            this.records = fields == null ? writer(kind, format.schema(), out) : null;
        }

        public void add(T row) throws IOException {
            if (fields != null) {
                fingerprint.startRow();
                fields.addElement(row);
                fingerprint.endRow();
            } else {
                GenericRecord record = format.toRecord(row);
                fingerprint.add(record);
                records.addElement(record);
            }
            rows++;
        }

        /** The file, once every row is added: the buffer given, until its next use. */
        public Chunks finish() throws IOException {
            if (fields != null) {
                fields.finish();
            } else {
                records.finish();
            }
            return out;
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
                        new RecordParquetBuilder(out, new Schema.Parser().parse(schemaJson))
                                .withCompressionCodec(CompressionCodecName.SNAPPY)
                                .withDictionaryEncoding(false)
                                .withConf(hadoopConf())
                                .build();
        return new ParquetWriterFactory<>(builder);
    }

    /**
     * The Avro schema a part was written with, from its footer: an empty part has one too. What a
     * reader's table declares ({@code snapshots ddl}).
     */
    public static Schema schema(byte[] parquet) throws IOException {
        try (ParquetFileReader reader = ParquetFileReader.open(new ParquetBytes(parquet))) {
            String avro =
                    reader.getFooter().getFileMetaData().getKeyValueMetaData().get(AVRO_SCHEMA_KEY);
            return avro != null
                    ? new Schema.Parser().parse(avro)
                    : new AvroSchemaConverter(hadoopConf())
                            .convert(reader.getFooter().getFileMetaData().getSchema());
        }
    }

    /**
     * parquet-avro's writer of records, with the file schema of {@link #fileSchema}: what {@code
     * AvroParquetWriter} builds (its builder cannot be given another file schema).
     */
    private static final class RecordParquetBuilder
            extends ParquetWriter.Builder<GenericRecord, RecordParquetBuilder> {
        private final Schema schema;

        RecordParquetBuilder(OutputFile file, Schema schema) {
            super(file);
            this.schema = schema;
        }

        @Override
        protected RecordParquetBuilder self() {
            return this;
        }

        @Override
        protected WriteSupport<GenericRecord> getWriteSupport(Configuration conf) {
            return new AvroWriteSupport<>(fileSchema(schema), schema, GenericData.get());
        }
    }

    /**
     * The Parquet schema parquet-avro gives a record schema, where a top-level field of Avro's
     * {@code local-timestamp-millis} becomes a timestamp not adjusted to UTC. parquet-avro 1.13
     * knows only the UTC one and writes a local timestamp as a bare int64, which readers (DuckDB,
     * Athena) show as a number: a SQL {@code TIMESTAMP(3)} column must read back as a timestamp.
     */
    static MessageType fileSchema(Schema schema) {
        MessageType converted = new AvroSchemaConverter(hadoopConf()).convert(schema);
        List<Type> fields = new ArrayList<>();
        for (Schema.Field field : schema.getFields()) {
            Type type = converted.getType(field.name());
            fields.add(
                    isLocalTimestampMillis(field.schema())
                            ? Types.primitive(PrimitiveTypeName.INT64, type.getRepetition())
                                    .as(
                                            LogicalTypeAnnotation.timestampType(
                                                    false, LogicalTypeAnnotation.TimeUnit.MILLIS))
                                    .named(field.name())
                            : type);
        }
        return new MessageType(converted.getName(), fields);
    }

    /** The field's type, or the non-null branch of a nullable one, is a local timestamp. */
    private static boolean isLocalTimestampMillis(Schema schema) {
        if (schema.getType() == Schema.Type.UNION) {
            return schema.getTypes().stream().anyMatch(PartEncoding::isLocalTimestampMillis);
        }
        return schema.getLogicalType() instanceof LogicalTypes.LocalTimestampMillis;
    }

    /**
     * The records of a Parquet part, read with parquet-avro's read support, row group by row group.
     * Not through {@code AvroParquetReader}'s builder: it makes a default Hadoop configuration for
     * every file before ours replaces it, and reading that parses core-default.xml from its jar,
     * about 40 ms a part on 2 busy cores (the audit of a week at B = 128 took hours of it).
     */
    public static List<GenericRecord> decode(byte[] parquet) throws IOException {
        Configuration conf = hadoopConf();
        List<GenericRecord> rows = new ArrayList<>();
        try (ParquetFileReader file =
                ParquetFileReader.open(
                        new ParquetBytes(parquet), HadoopReadOptions.builder(conf).build())) {
            FileMetaData meta = file.getFooter().getFileMetaData();
            Map<String, Set<String>> keyValues = new HashMap<>();
            meta.getKeyValueMetaData().forEach((k, v) -> keyValues.put(k, Set.of(v)));
            AvroReadSupport<GenericRecord> support = new AvroReadSupport<>(GenericData.get());
            ReadSupport.ReadContext context =
                    support.init(new InitContext(conf, keyValues, meta.getSchema()));
            RecordMaterializer<GenericRecord> materializer =
                    support.prepareForRead(
                            conf, meta.getKeyValueMetaData(), meta.getSchema(), context);
            MessageColumnIO columns =
                    new ColumnIOFactory(meta.getCreatedBy())
                            .getColumnIO(context.getRequestedSchema(), meta.getSchema(), true);
            for (PageReadStore group = file.readNextRowGroup();
                    group != null;
                    group = file.readNextRowGroup()) {
                RecordReader<GenericRecord> records =
                        columns.getRecordReader(group, materializer, FilterCompat.NOOP);
                for (long i = 0; i < group.getRowCount(); i++) {
                    rows.add(records.read());
                }
            }
        }
        return rows;
    }

    /**
     * The content fingerprint of a part of a scheme-1 job version ({@link #FINGERPRINT_AVRO}), as
     * {@link #fingerprint(List, Schema, int, int)}.
     */
    public static String fingerprint(List<GenericRecord> rows, Schema schema, int schemaVersion) {
        return fingerprint(rows, schema, schemaVersion, FINGERPRINT_AVRO);
    }

    /**
     * SHA-256 over the scheme's domain, the schema version, the schema's canonical form and the
     * rows in order, each as the scheme encodes it: {@link #FINGERPRINT_AVRO} its Avro binary
     * encoding (length-prefixed), {@link #FINGERPRINT_TYPED} its typed values. Any NaN counts as
     * the canonical one, as the file stores it. It depends on the logical content only, so it is
     * the same whichever JVM wrote the file and whatever parquet-java put in the footer.
     *
     * @throws IllegalArgumentException for a scheme this release does not know
     */
    public static String fingerprint(
            List<GenericRecord> rows, Schema schema, int schemaVersion, int fingerprintScheme) {
        Fingerprint fingerprint = Fingerprint.of(fingerprintScheme, schema, schemaVersion);
        rows.forEach(fingerprint::add);
        return fingerprint.hex();
    }

    /**
     * A part's fingerprint, fed one row at a time: a record, or a flat row's fields (between {@link
     * #startRow} and {@link #endRow}) as its {@link FlatWriteSupport} writes them to the file.
     */
    private abstract static class Fingerprint implements FlatRowFormat.Fields {
        /** Bytes gathered before they are hashed: one digest call per row cost more than it. */
        static final int CHUNK = 1 << 16;

        final MessageDigest sha = sha256();
        private String hex;

        static Fingerprint of(int scheme, Schema schema, int schemaVersion) {
            return switch (scheme) {
                case FINGERPRINT_AVRO -> new AvroFingerprint(schema, schemaVersion);
                case FINGERPRINT_TYPED -> new TypedFingerprint(schema, schemaVersion);
                default ->
                        throw new IllegalArgumentException(
                                "fingerprint scheme "
                                        + scheme
                                        + " is not one this release knows ("
                                        + FINGERPRINT_AVRO
                                        + " or "
                                        + FINGERPRINT_TYPED
                                        + "): the job version was written by a newer release");
            };
        }

        Fingerprint(String domain, Schema schema, int schemaVersion) {
            sha.update(domain.getBytes(StandardCharsets.US_ASCII));
            sha.update(
                    ByteBuffer.allocate(12)
                            .putInt(schemaVersion)
                            .putLong(SchemaNormalization.parsingFingerprint64(schema))
                            .array());
        }

        abstract void add(GenericRecord row);

        abstract void startRow();

        abstract void endRow();

        /** A string field already in UTF-8. */
        abstract void utf8(byte[] value);

        @Override
        public void string(String value) {
            utf8(value.getBytes(StandardCharsets.UTF_8));
        }

        /** Hashes what is gathered. */
        abstract void hashGathered();

        /** The hash of every row added; asking again gives the same, adding more is a bug. */
        String hex() {
            if (hex == null) {
                hashGathered();
                hex = HexFormat.of().formatHex(sha.digest());
            }
            return hex;
        }
    }

    /** Scheme 1: each row's length, then its Avro binary encoding. */
    private static final class AvroFingerprint extends Fingerprint {
        private static final byte[] LENGTH_SLOT = new byte[4];

        private final FileDatumWriter writer;

        /** Each row's length and encoding, in turn, until a chunk is full. */
        private final RowBuffer rows = new RowBuffer();

        private final BinaryEncoder encoder = EncoderFactory.get().directBinaryEncoder(rows, null);
        private final AvroFields fields = new AvroFields(encoder);
        private int rowStart;

        AvroFingerprint(Schema schema, int schemaVersion) {
            super("snapshots/part-fingerprint/v1", schema, schemaVersion);
            writer = new FileDatumWriter(schema);
        }

        @Override
        void add(GenericRecord r) {
            startRow();
            try {
                writer.write(r, encoder);
            } catch (IOException e) {
                throw new IllegalArgumentException("row does not match the part schema: " + r, e);
            }
            endRow();
        }

        /** The same bytes as the row's record would give: see {@link AvroFields}. */
        @Override
        void startRow() {
            rowStart = rows.size();
            rows.write(LENGTH_SLOT, 0, 4);
        }

        @Override
        void endRow() {
            ByteBuffer.wrap(rows.contents(), rowStart, 4).putInt(rows.size() - rowStart - 4);
            if (rows.size() >= CHUNK) {
                hashGathered();
            }
        }

        @Override
        void utf8(byte[] value) {
            fields.utf8(value);
        }

        @Override
        public void int64(long value) {
            fields.int64(value);
        }

        @Override
        public void float64(double value) {
            fields.float64(value);
        }

        @Override
        void hashGathered() {
            sha.update(rows.contents(), 0, rows.size());
            rows.reset();
        }
    }

    /**
     * Scheme 2: each row's values in schema order, each by its type, little-endian: a {@code long}
     * 8 bytes, an {@code int} 4, a {@code double} or {@code float} its IEEE bits (a NaN the
     * canonical one), a {@code boolean} 1 byte; a string or {@code bytes} its length (4 bytes) and
     * its bytes (a string's UTF-8), a {@code fixed} its bytes; a union the index of its branch (4
     * bytes) and the value; an enum its symbol's index; an array its length and items; a map its
     * size and its entries ordered by key; a record its fields. Given the schema this is read back
     * in one way only, so rows of different values never give the same bytes. Fixed widths write
     * without branches or Avro's variable-length integers, and a flat row's fields go straight from
     * the Parquet writer into the hash's buffer.
     */
    private static final class TypedFingerprint extends Fingerprint {
        private final Schema schema;
        private final ByteBuffer gathered =
                ByteBuffer.allocate(CHUNK).order(ByteOrder.LITTLE_ENDIAN);

        TypedFingerprint(Schema schema, int schemaVersion) {
            super("snapshots/part-fingerprint/v2", schema, schemaVersion);
            this.schema = schema;
        }

        @Override
        void add(GenericRecord row) {
            try {
                value(schema, row);
            } catch (ClassCastException | NullPointerException | AvroRuntimeException e) {
                throw new IllegalArgumentException("row does not match the part schema: " + row, e);
            }
        }

        @Override
        void startRow() {}

        @Override
        void endRow() {}

        @Override
        public void int64(long value) {
            room(8).putLong(value);
        }

        @Override
        public void float64(double value) {
            room(8).putLong(Double.doubleToLongBits(value));
        }

        @Override
        void utf8(byte[] value) {
            bytes(value, 0, value.length);
        }

        private void bytes(byte[] value, int offset, int length) {
            room(4).putInt(length);
            if (length <= gathered.remaining()) {
                gathered.put(value, offset, length);
            } else {
                hashGathered();
                sha.update(value, offset, length);
            }
        }

        private void value(Schema type, Object datum) {
            switch (type.getType()) {
                case RECORD -> {
                    GenericRecord record = (GenericRecord) datum;
                    for (Schema.Field field : type.getFields()) {
                        value(field.schema(), record.get(field.pos()));
                    }
                }
                case UNION -> {
                    int branch = GenericData.get().resolveUnion(type, datum);
                    room(4).putInt(branch);
                    value(type.getTypes().get(branch), datum);
                }
                case NULL -> {}
                case BOOLEAN -> room(1).put((byte) ((Boolean) datum ? 1 : 0));
                case INT -> room(4).putInt((Integer) datum);
                case LONG -> int64((Long) datum);
                case FLOAT -> room(4).putInt(Float.floatToIntBits((Float) datum));
                case DOUBLE -> float64((Double) datum);
                case STRING -> {
                    if (datum instanceof Utf8 utf8) {
                        bytes(utf8.getBytes(), 0, utf8.getByteLength());
                    } else {
                        utf8(datum.toString().getBytes(StandardCharsets.UTF_8));
                    }
                }
                case BYTES -> {
                    ByteBuffer b = ((ByteBuffer) datum).duplicate();
                    byte[] content = new byte[b.remaining()];
                    b.get(content);
                    utf8(content);
                }
                case FIXED -> {
                    byte[] content = ((GenericFixed) datum).bytes();
                    bytes(content, 0, content.length);
                }
                case ENUM -> room(4).putInt(type.getEnumOrdinal(datum.toString()));
                case ARRAY -> {
                    Collection<?> items = (Collection<?>) datum;
                    room(4).putInt(items.size());
                    for (Object item : items) {
                        value(type.getElementType(), item);
                    }
                }
                case MAP -> {
                    Map<?, ?> map = (Map<?, ?>) datum;
                    room(4).putInt(map.size());
                    Map<String, Object> byKey = new TreeMap<>();
                    map.forEach((k, v) -> byKey.put(k.toString(), v));
                    byKey.forEach(
                            (k, v) -> {
                                utf8(k.getBytes(StandardCharsets.UTF_8));
                                value(type.getValueType(), v);
                            });
                }
            }
        }

        /** The buffer, with room for {@code bytes} more. */
        private ByteBuffer room(int bytes) {
            if (gathered.remaining() < bytes) {
                hashGathered();
            }
            return gathered;
        }

        @Override
        void hashGathered() {
            sha.update(gathered.array(), 0, gathered.position());
            gathered.clear();
        }
    }

    /**
     * A flat row's fields in Avro binary encoding: byte for byte what Avro writes for its record,
     * since a record's encoding is its fields' encodings in order, and these are Avro's own.
     */
    private record AvroFields(BinaryEncoder encoder) implements FlatRowFormat.Fields {
        @Override
        public void string(String value) {
            utf8(value.getBytes(StandardCharsets.UTF_8));
        }

        /** A string already in UTF-8: Avro writes a string as its UTF-8 bytes, length first. */
        void utf8(byte[] value) {
            try {
                encoder.writeBytes(value);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }

        @Override
        public void int64(long value) {
            try {
                encoder.writeLong(value);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }

        @Override
        public void float64(double value) {
            try {
                encoder.writeDouble(Double.isNaN(value) ? Double.NaN : value);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }

    /**
     * Avro's binary encoding of a record as its Parquet file holds it. Parquet stores any NaN as
     * the canonical one ({@code Double.doubleToLongBits}), while Avro's encoder writes a NaN's raw
     * bits; so a NaN is hashed as the canonical NaN, and the fingerprint recomputed from the file
     * is the writer's. Without this, a NaN of other bits (as x86 arithmetic makes at run time) made
     * the audit report a part as altered, and two executions of equal files look divergent.
     */
    private static final class FileDatumWriter extends GenericDatumWriter<GenericRecord> {
        FileDatumWriter(Schema schema) {
            super(schema);
        }

        @Override
        protected void writeWithoutConversion(Schema schema, Object datum, Encoder out)
                throws IOException {
            if (datum instanceof Double d && d.isNaN()) {
                out.writeDouble(Double.NaN);
            } else if (datum instanceof Float f && f.isNaN()) {
                out.writeFloat(Float.NaN);
            } else {
                super.writeWithoutConversion(schema, datum, out);
            }
        }
    }

    /**
     * Avro binary encoding of one record: the canonical bytes rows are sorted by (whatever their
     * fingerprint scheme).
     */
    private static byte[] canonicalBytes(GenericRecord record) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try {
            new FileDatumWriter(record.getSchema())
                    .write(record, EncoderFactory.get().directBinaryEncoder(out, null));
        } catch (IOException e) {
            throw new IllegalArgumentException("row does not match its schema: " + record, e);
        }
        return out.toByteArray();
    }

    /** {@link #canonicalBytes(GenericRecord)} of the row's record, from its fields if flat. */
    public static <T> byte[] canonicalBytes(RowFormat<T> format, T row) {
        if (!(format instanceof FlatRowFormat<T> flat)) {
            return canonicalBytes(format.toRecord(row));
        }
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        flat.writeFields(row, new AvroFields(EncoderFactory.get().directBinaryEncoder(out, null)));
        return out.toByteArray();
    }

    /**
     * Refuses a schema a {@link FlatRowFormat} cannot write: anything but required strings, longs
     * and doubles.
     *
     * @throws IllegalArgumentException naming the field and its type
     */
    public static void requireFlat(Schema schema) {
        flatParquetType(schema);
    }

    /**
     * The Parquet schema parquet-avro gives the Avro one, so that both ways of writing a part give
     * the same file schema.
     */
    private static MessageType flatParquetType(Schema schema) {
        for (Schema.Field field : schema.getFields()) {
            Schema.Type type = field.schema().getType();
            if (type != Schema.Type.STRING
                    && type != Schema.Type.LONG
                    && type != Schema.Type.DOUBLE) {
                throw new IllegalArgumentException(
                        "a FlatRowFormat writes required strings, longs and doubles only; field '"
                                + field.name()
                                + "' of "
                                + schema.getFullName()
                                + " is "
                                + field.schema()
                                + ": implement RowFormat instead");
            }
        }
        return new AvroSchemaConverter(hadoopConf()).convert(schema);
    }

    /**
     * The Parquet writer of a flat format's part: as {@link #parquetWriters}, from fields instead
     * of records, each field also going to {@code canonical}. The footer carries the Avro schema,
     * as parquet-avro's does, so readers get the same records back. The factory serves this part
     * only and is never serialized, so it may hold the fingerprint.
     */
    private static <T> BulkWriter<T> flatParquetWriter(
            FlatRowFormat<T> format, Fingerprint canonical, FSDataOutputStream out)
            throws IOException {
        ParquetBuilder<T> builder =
                file ->
                        new FlatParquetBuilder<>(file, format, canonical)
                                .withCompressionCodec(CompressionCodecName.SNAPPY)
                                .withDictionaryEncoding(false)
                                .withConf(hadoopConf())
                                .build();
        return new ParquetWriterFactory<>(builder).create(out);
    }

    private static final class FlatParquetBuilder<T>
            extends ParquetWriter.Builder<T, FlatParquetBuilder<T>> {
        private final FlatRowFormat<T> format;
        private final Fingerprint canonical;

        FlatParquetBuilder(OutputFile file, FlatRowFormat<T> format, Fingerprint canonical) {
            super(file);
            this.format = format;
            this.canonical = canonical;
        }

        @Override
        protected FlatParquetBuilder<T> self() {
            return this;
        }

        @Override
        protected WriteSupport<T> getWriteSupport(Configuration conf) {
            return new FlatWriteSupport<>(format, canonical);
        }
    }

    /**
     * Hands each field to Parquet's record consumer, checking it against the schema, and to the
     * fingerprint's encoder: one pass over a row's fields, a string encoded to UTF-8 once.
     */
    private static final class FlatWriteSupport<T> extends WriteSupport<T>
            implements FlatRowFormat.Fields {
        private final FlatRowFormat<T> format;
        private final Fingerprint canonical;
        private final MessageType type;
        private final PrimitiveTypeName[] types;
        private RecordConsumer consumer;
        private int field;

        FlatWriteSupport(FlatRowFormat<T> format, Fingerprint canonical) {
            this.format = format;
            this.canonical = canonical;
            this.type = flatParquetType(format.schema());
            this.types =
                    type.getFields().stream()
                            .map(f -> f.asPrimitiveType().getPrimitiveTypeName())
                            .toArray(PrimitiveTypeName[]::new);
        }

        @Override
        public WriteContext init(Configuration configuration) {
            return new WriteContext(type, Map.of(AVRO_SCHEMA_KEY, format.schema().toString()));
        }

        @Override
        public void prepareForWrite(RecordConsumer recordConsumer) {
            this.consumer = recordConsumer;
        }

        @Override
        public void write(T row) {
            consumer.startMessage();
            field = 0;
            format.writeFields(row, this);
            if (field != types.length) {
                throw new IllegalArgumentException(
                        "writeFields wrote "
                                + field
                                + " of the "
                                + types.length
                                + " fields of "
                                + type.getName());
            }
            consumer.endMessage();
        }

        @Override
        public void string(String value) {
            if (value == null) {
                throw new IllegalArgumentException(
                        "field '" + type.getFieldName(field) + "' is a required string, got null");
            }
            byte[] utf8 = value.getBytes(StandardCharsets.UTF_8);
            start(PrimitiveTypeName.BINARY);
            consumer.addBinary(Binary.fromConstantByteArray(utf8));
            end();
            canonical.utf8(utf8);
        }

        @Override
        public void int64(long value) {
            start(PrimitiveTypeName.INT64);
            consumer.addLong(value);
            end();
            canonical.int64(value);
        }

        @Override
        public void float64(double value) {
            start(PrimitiveTypeName.DOUBLE);
            consumer.addDouble(value);
            end();
            canonical.float64(value);
        }

        private void start(PrimitiveTypeName written) {
            if (field >= types.length || types[field] != written) {
                throw new IllegalArgumentException(
                        "writeFields wrote a "
                                + written
                                + " as field "
                                + field
                                + " of "
                                + type.getName()
                                + ", whose fields are "
                                + type.getFields());
            }
            consumer.startField(type.getFieldName(field), field);
        }

        private void end() {
            consumer.endField(type.getFieldName(field), field);
            field++;
        }
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
}
