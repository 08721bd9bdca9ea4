package dev.snapshots.job.source.kinesis;

import dev.snapshots.job.source.RawRecord;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Unpacks Kinesis Producer Library aggregates: records that hold many user records, as producers
 * built on the KPL (Flink's own FlinkKinesisProducer among them) write by default. The published
 * format: the magic bytes F3 89 9A C2, a protobuf {@code AggregatedRecord}, and the MD5 of that
 * protobuf. Only the user records' {@code data} (field 3 of each {@code Record}, itself field 3 of
 * the aggregate) matters here; partition keys and tags are skipped.
 */
final class KplAggregate {
    private static final byte[] MAGIC = {(byte) 0xF3, (byte) 0x89, (byte) 0x9A, (byte) 0xC2};
    private static final int DIGEST_BYTES = 16;

    private KplAggregate() {}

    /**
     * The user records of one Kinesis record: itself when it is not an aggregate; each user record,
     * origin {@code ORIGIN:INDEX} (the KPL's sub-sequence number), when it is; one defective record
     * when it carries the magic bytes but does not check out.
     */
    static List<RawRecord> userRecords(String origin, long arrivalMillis, byte[] data) {
        if (data.length < MAGIC.length
                || !Arrays.equals(data, 0, MAGIC.length, MAGIC, 0, MAGIC.length)) {
            return List.of(new RawRecord(origin, arrivalMillis, data));
        }
        if (data.length < MAGIC.length + DIGEST_BYTES) {
            return List.of(
                    RawRecord.defective(
                            origin,
                            arrivalMillis,
                            data,
                            "KPL aggregate of "
                                    + data.length
                                    + " bytes has no room for its digest"));
        }
        int end = data.length - DIGEST_BYTES;
        byte[] digest = md5(data, MAGIC.length, end - MAGIC.length);
        if (!Arrays.equals(digest, 0, DIGEST_BYTES, data, end, data.length)) {
            return List.of(
                    RawRecord.defective(
                            origin,
                            arrivalMillis,
                            data,
                            "KPL aggregate's MD5 digest does not match its content"));
        }
        try {
            List<byte[]> payloads = new ArrayList<>();
            Protobuf aggregate = new Protobuf(data, MAGIC.length, end);
            while (aggregate.more()) {
                if (aggregate.tag() == (3 << 3 | 2)) { // records: a length-delimited Record
                    Protobuf record = aggregate.message();
                    byte[] payload = null;
                    while (record.more()) {
                        if (record.tag() == (3 << 3 | 2)) { // data
                            payload = record.bytes();
                        } else {
                            record.skip();
                        }
                    }
                    if (payload == null) {
                        throw new IllegalArgumentException(
                                "user record " + payloads.size() + " has no data");
                    }
                    payloads.add(payload);
                } else {
                    aggregate.skip();
                }
            }
            List<RawRecord> out = new ArrayList<>(payloads.size());
            for (int i = 0; i < payloads.size(); i++) {
                out.add(new RawRecord(origin + ":" + i, arrivalMillis, payloads.get(i)));
            }
            return out;
        } catch (IllegalArgumentException | IndexOutOfBoundsException e) {
            return List.of(
                    RawRecord.defective(
                            origin,
                            arrivalMillis,
                            data,
                            "KPL aggregate is not a valid AggregatedRecord: " + e.getMessage()));
        }
    }

    private static byte[] md5(byte[] data, int offset, int length) {
        try {
            MessageDigest md5 = MessageDigest.getInstance("MD5");
            md5.update(data, offset, length);
            return md5.digest();
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JVM has MD5", e);
        }
    }

    /**
     * Just enough of the protobuf wire format to walk a message: tags, varints, length-delimited
     * fields.
     */
    private static final class Protobuf {
        private final byte[] buf;
        private int pos;
        private final int end;
        private int wireType;

        Protobuf(byte[] buf, int from, int end) {
            this.buf = buf;
            this.pos = from;
            this.end = end;
        }

        boolean more() {
            return pos < end;
        }

        int tag() {
            long tag = varint();
            wireType = (int) (tag & 7);
            return (int) tag;
        }

        Protobuf message() {
            int length = length();
            Protobuf m = new Protobuf(buf, pos, pos + length);
            pos += length;
            return m;
        }

        byte[] bytes() {
            int length = length();
            byte[] b = Arrays.copyOfRange(buf, pos, pos + length);
            pos += length;
            return b;
        }

        void skip() {
            switch (wireType) {
                case 0 -> varint();
                case 1 -> pos += 8;
                case 2 -> {
                    int length =
                            length(); // read before adding: "pos += length()" would add to the old
                    // pos
                    pos += length;
                }
                case 5 -> pos += 4;
                default ->
                        throw new IllegalArgumentException(
                                "wire type " + wireType + " at byte " + pos);
            }
            if (pos > end) {
                throw new IllegalArgumentException("a field runs past the end of its message");
            }
        }

        private int length() {
            long n = varint();
            if (n < 0 || n > end - pos) {
                throw new IllegalArgumentException(
                        "a length of "
                                + n
                                + " at byte "
                                + pos
                                + " runs past the end of its message");
            }
            return (int) n;
        }

        private long varint() {
            long value = 0;
            for (int shift = 0; shift < 64; shift += 7) {
                if (pos >= end) {
                    throw new IllegalArgumentException("a varint runs past the end of its message");
                }
                byte b = buf[pos++];
                value |= (long) (b & 0x7F) << shift;
                if (b >= 0) {
                    return value;
                }
            }
            throw new IllegalArgumentException("a varint longer than 10 bytes");
        }
    }
}
