package dev.snapshots.format;

import static org.assertj.core.api.Assertions.assertThat;

import dev.snapshots.key.PartKind;
import dev.snapshots.testkit.RandomInputs;
import dev.snapshots.testutils.KeyTotal;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.time.Year;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.stream.LongStream;
import org.apache.avro.generic.GenericRecord;
import org.apache.parquet.column.page.PageReadStore;
import org.apache.parquet.example.data.Group;
import org.apache.parquet.example.data.simple.convert.GroupRecordConverter;
import org.apache.parquet.hadoop.ParquetFileReader;
import org.apache.parquet.io.ColumnIOFactory;
import org.apache.parquet.io.RecordReader;
import org.apache.parquet.schema.MessageType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** A part's bytes and fingerprint depend on its rows alone, and any Parquet reader can read it. */
class PartEncodingTest {
    private static final KeyTotal.Format FORMAT = new KeyTotal.Format();

    static LongStream fiftySeeds() {
        return LongStream.rangeClosed(1, 50);
    }

    static LongStream thirtySeeds() {
        return LongStream.rangeClosed(1, 30);
    }

    @ParameterizedTest(name = "seed {0}")
    @MethodSource("fiftySeeds")
    void sameRowsGiveTheSameFingerprintAndWithinOneJvmTheSameBytes(long seed) throws Exception {
        List<KeyTotal> rows = part(new RandomInputs(seed));
        List<GenericRecord> a = records(rows);
        List<GenericRecord> b =
                records(new ArrayList<>(rows)); // fresh record objects, same content

        assertThat(PartEncoding.fingerprint(b, KeyTotal.SCHEMA, 1))
                .as("seed %d", seed)
                .isEqualTo(PartEncoding.fingerprint(a, KeyTotal.SCHEMA, 1));
        assertThat(PartEncoding.encode(b, KeyTotal.SCHEMA))
                .as("seed %d", seed)
                .isEqualTo(PartEncoding.encode(a, KeyTotal.SCHEMA));
    }

    @ParameterizedTest(name = "seed {0}")
    @MethodSource("fiftySeeds")
    void decodedRowsEqualTheInput(long seed) throws Exception {
        List<KeyTotal> rows = part(new RandomInputs(seed));
        byte[] parquet = PartEncoding.encode(records(rows), KeyTotal.SCHEMA);

        List<KeyTotal> decoded = new ArrayList<>();
        PartEncoding.decode(parquet).forEach(r -> decoded.add(KeyTotal.fromRecord(r)));
        assertThat(decoded).as("seed %d", seed).containsExactlyElementsOf(rows);
        assertThat(PartEncoding.fingerprint(PartEncoding.decode(parquet), KeyTotal.SCHEMA, 1))
                .as("seed %d: the fingerprint can be recomputed from the file alone", seed)
                .isEqualTo(PartEncoding.fingerprint(records(rows), KeyTotal.SCHEMA, 1));
    }

    @ParameterizedTest(name = "seed {0}")
    @MethodSource("thirtySeeds")
    void deadLetterPartsAreJsonLinesThatDecodeToTheInput(long seed) throws Exception {
        List<KeyTotal> rows = part(new RandomInputs(seed));
        byte[] jsonl = PartEncoding.encode(PartKind.DEAD_LETTER, records(rows), KeyTotal.SCHEMA);

        String text = new String(jsonl, StandardCharsets.UTF_8);
        assertThat(text.split("\n"))
                .as("seed %d", seed)
                .hasSize(rows.size())
                .allSatisfy(line -> assertThat(line).startsWith("{\"key\":"));
        assertThat(PartEncoding.decode(PartKind.DEAD_LETTER, jsonl, KeyTotal.SCHEMA))
                .as("seed %d", seed)
                .containsExactlyElementsOf(records(rows));
    }

    @ParameterizedTest(name = "seed {0}")
    @MethodSource("fiftySeeds")
    void anyChangeOfContentOrSchemaVersionChangesTheFingerprint(long seed) {
        List<KeyTotal> rows = part(new RandomInputs(seed));
        String fingerprint = PartEncoding.fingerprint(records(rows), KeyTotal.SCHEMA, 1);
        List<KeyTotal> changed = new ArrayList<>(rows);
        KeyTotal first = changed.get(0);
        changed.set(0, new KeyTotal(first.key, first.windowStart, first.count, first.sum + 1));

        assertThat(PartEncoding.fingerprint(records(changed), KeyTotal.SCHEMA, 1))
                .as("seed %d", seed)
                .isNotEqualTo(fingerprint);
        assertThat(PartEncoding.fingerprint(records(rows), KeyTotal.SCHEMA, 2))
                .as("seed %d", seed)
                .isNotEqualTo(fingerprint);
        if (rows.size() > 1) {
            List<KeyTotal> reordered = new ArrayList<>(rows);
            Collections.rotate(reordered, 1);
            assertThat(PartEncoding.fingerprint(records(reordered), KeyTotal.SCHEMA, 1))
                    .as("seed %d: order is content: the writer sorts before hashing", seed)
                    .isNotEqualTo(fingerprint);
        }
    }

    @Test
    void aReaderThatIsNotOursReadsTheFile() throws Exception {
        List<KeyTotal> rows =
                List.of(
                        new KeyTotal("dev-001", 60_000, 3, 42),
                        new KeyTotal("dev-002", 60_000, 1, -7));
        byte[] parquet = PartEncoding.encode(records(rows), KeyTotal.SCHEMA);

        // parquet-column's example Group model: no Avro, no Flink, no code of ours.
        List<String> read = new ArrayList<>();
        try (ParquetFileReader reader = ParquetFileReader.open(new ParquetBytes(parquet))) {
            MessageType schema = reader.getFooter().getFileMetaData().getSchema();
            for (PageReadStore pages = reader.readNextRowGroup();
                    pages != null;
                    pages = reader.readNextRowGroup()) {
                RecordReader<Group> records =
                        new ColumnIOFactory()
                                .getColumnIO(schema)
                                .getRecordReader(pages, new GroupRecordConverter(schema));
                for (long i = 0; i < pages.getRowCount(); i++) {
                    Group g = records.read();
                    read.add(
                            g.getString("key", 0)
                                    + ","
                                    + g.getLong("window_start", 0)
                                    + ","
                                    + g.getLong("count", 0)
                                    + ","
                                    + g.getLong("sum", 0));
                }
            }
        }
        assertThat(read).containsExactly("dev-001,60000,3,42", "dev-002,60000,1,-7");
    }

    @Test
    void theFileHoldsNothingAboutTheHostOrTheTime() throws Exception {
        byte[] parquet =
                PartEncoding.encode(records(List.of(new KeyTotal("k", 0, 1, 1))), KeyTotal.SCHEMA);
        String text = new String(parquet, StandardCharsets.ISO_8859_1);
        assertThat(text).doesNotContain(InetAddress.getLocalHost().getHostName());
        assertThat(text).doesNotContain(String.valueOf(Year.now().getValue()));
    }

    /**
     * The rows of one part: 1-200 of them with distinct keys of 1-12 characters (any text, not just
     * ASCII), windows starting at any of the first million minutes since 1970, and any count and
     * sum.
     */
    private static List<KeyTotal> part(RandomInputs in) {
        int size = in.between(1, 200);
        Set<String> keys = new HashSet<>();
        List<KeyTotal> rows = new ArrayList<>();
        while (rows.size() < size) {
            String key = in.string(1, 12);
            if (keys.add(key)) {
                rows.add(
                        new KeyTotal(
                                key,
                                in.between(0, 1_000_000) * 60_000L,
                                in.anyLong(),
                                in.anyLong()));
            }
        }
        return rows;
    }

    private static List<GenericRecord> records(List<KeyTotal> rows) {
        List<GenericRecord> out = new ArrayList<>();
        rows.forEach(r -> out.add(FORMAT.toRecord(r)));
        return out;
    }
}
