package dev.snapshots.format;

import static org.assertj.core.api.Assertions.assertThat;

import dev.snapshots.key.PartKind;
import dev.snapshots.testutils.KeyTotal;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import org.apache.avro.generic.GenericRecord;
import org.apache.parquet.column.page.PageReadStore;
import org.apache.parquet.example.data.Group;
import org.apache.parquet.example.data.simple.convert.GroupRecordConverter;
import org.apache.parquet.hadoop.ParquetFileReader;
import org.apache.parquet.io.ColumnIOFactory;
import org.apache.parquet.io.RecordReader;
import org.apache.parquet.schema.MessageType;

/** A part's bytes and fingerprint depend on its rows alone, and any Parquet reader can read it. */
class PartEncodingTest {
    private static final KeyTotal.Format FORMAT = new KeyTotal.Format();

    @Property(tries = 50)
    void sameRowsGiveTheSameFingerprintAndWithinOneJvmTheSameBytes(@ForAll("parts") List<KeyTotal> rows) throws Exception {
        List<GenericRecord> a = records(rows);
        List<GenericRecord> b = records(new ArrayList<>(rows)); // fresh record objects, same content

        assertThat(PartEncoding.fingerprint(b, KeyTotal.SCHEMA, 1)).isEqualTo(PartEncoding.fingerprint(a, KeyTotal.SCHEMA, 1));
        assertThat(PartEncoding.encode(b, KeyTotal.SCHEMA)).isEqualTo(PartEncoding.encode(a, KeyTotal.SCHEMA));
    }

    @Property(tries = 50)
    void decodedRowsEqualTheInput(@ForAll("parts") List<KeyTotal> rows) throws Exception {
        byte[] parquet = PartEncoding.encode(records(rows), KeyTotal.SCHEMA);

        List<KeyTotal> decoded = new ArrayList<>();
        PartEncoding.decode(parquet).forEach(r -> decoded.add(KeyTotal.fromRecord(r)));
        assertThat(decoded).containsExactlyElementsOf(rows);
        assertThat(PartEncoding.fingerprint(PartEncoding.decode(parquet), KeyTotal.SCHEMA, 1))
                .as("the fingerprint can be recomputed from the file alone")
                .isEqualTo(PartEncoding.fingerprint(records(rows), KeyTotal.SCHEMA, 1));
    }

    @Property(tries = 30)
    void deadLetterPartsAreJsonLinesThatDecodeToTheInput(@ForAll("parts") List<KeyTotal> rows) throws Exception {
        byte[] jsonl = PartEncoding.encode(PartKind.DEAD_LETTER, records(rows), KeyTotal.SCHEMA);

        String text = new String(jsonl, java.nio.charset.StandardCharsets.UTF_8);
        assertThat(text.split("\n")).hasSize(rows.size()).allSatisfy(line -> assertThat(line).startsWith("{\"key\":"));
        assertThat(PartEncoding.decode(PartKind.DEAD_LETTER, jsonl, KeyTotal.SCHEMA)).containsExactlyElementsOf(records(rows));
    }

    @Property(tries = 50)
    void anyChangeOfContentOrSchemaVersionChangesTheFingerprint(@ForAll("parts") List<KeyTotal> rows) {
        String fingerprint = PartEncoding.fingerprint(records(rows), KeyTotal.SCHEMA, 1);
        List<KeyTotal> changed = new ArrayList<>(rows);
        KeyTotal first = changed.get(0);
        changed.set(0, new KeyTotal(first.key, first.windowStart, first.count, first.sum + 1));

        assertThat(PartEncoding.fingerprint(records(changed), KeyTotal.SCHEMA, 1)).isNotEqualTo(fingerprint);
        assertThat(PartEncoding.fingerprint(records(rows), KeyTotal.SCHEMA, 2)).isNotEqualTo(fingerprint);
        if (rows.size() > 1) {
            List<KeyTotal> reordered = new ArrayList<>(rows);
            Collections.rotate(reordered, 1);
            assertThat(PartEncoding.fingerprint(records(reordered), KeyTotal.SCHEMA, 1))
                    .as("order is content: the writer sorts before hashing").isNotEqualTo(fingerprint);
        }
    }

    @Example
    void aReaderThatIsNotOursReadsTheFile() throws Exception {
        List<KeyTotal> rows = List.of(new KeyTotal("dev-001", 60_000, 3, 42), new KeyTotal("dev-002", 60_000, 1, -7));
        byte[] parquet = PartEncoding.encode(records(rows), KeyTotal.SCHEMA);

        // parquet-column's example Group model: no Avro, no Flink, no code of ours.
        List<String> read = new ArrayList<>();
        try (ParquetFileReader reader = ParquetFileReader.open(new ParquetBytes(parquet))) {
            MessageType schema = reader.getFooter().getFileMetaData().getSchema();
            for (PageReadStore pages = reader.readNextRowGroup(); pages != null; pages = reader.readNextRowGroup()) {
                RecordReader<Group> records =
                        new ColumnIOFactory().getColumnIO(schema).getRecordReader(pages, new GroupRecordConverter(schema));
                for (long i = 0; i < pages.getRowCount(); i++) {
                    Group g = records.read();
                    read.add(g.getString("key", 0) + "," + g.getLong("window_start", 0) + "," + g.getLong("count", 0)
                            + "," + g.getLong("sum", 0));
                }
            }
        }
        assertThat(read).containsExactly("dev-001,60000,3,42", "dev-002,60000,1,-7");
    }

    @Example
    void theFileHoldsNothingAboutTheHostOrTheTime() throws Exception {
        byte[] parquet = PartEncoding.encode(records(List.of(new KeyTotal("k", 0, 1, 1))), KeyTotal.SCHEMA);
        String text = new String(parquet, java.nio.charset.StandardCharsets.ISO_8859_1);
        assertThat(text).doesNotContain(java.net.InetAddress.getLocalHost().getHostName());
        assertThat(text).doesNotContain(String.valueOf(java.time.Year.now().getValue()));
    }

    @Provide
    Arbitrary<List<KeyTotal>> parts() {
        Arbitrary<KeyTotal> row = Combinators.combine(
                        Arbitraries.strings().ofMinLength(1).ofMaxLength(12),
                        Arbitraries.longs().between(0, 1_000_000),
                        Arbitraries.longs(),
                        Arbitraries.longs())
                .as((k, w, c, s) -> new KeyTotal(k, w * 60_000, c, s));
        return row.list().ofMinSize(1).ofMaxSize(200).uniqueElements(r -> r.key);
    }

    private static List<GenericRecord> records(List<KeyTotal> rows) {
        List<GenericRecord> out = new ArrayList<>();
        rows.forEach(r -> out.add(FORMAT.toRecord(r)));
        return out;
    }
}
