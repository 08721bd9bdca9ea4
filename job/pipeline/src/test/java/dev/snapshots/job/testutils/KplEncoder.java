package dev.snapshots.job.testutils;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.List;

/**
 * Writes Kinesis Producer Library aggregates as the KPL documents them ("KPL Aggregated Record
 * Format"): magic F3 89 9A C2, then the protobuf {@code AggregatedRecord} (field 1: partition key
 * table; 3: records, each with partition_key_index = 1 and data = 3), then the MD5 of the protobuf
 * bytes. Written here from that description, apart from the decoder it tests.
 */
public final class KplEncoder {
    private KplEncoder() {}

    public static byte[] aggregate(String partitionKey, List<byte[]> userRecords) {
        ByteArrayOutputStream message = new ByteArrayOutputStream();
        lengthDelimited(message, 1, partitionKey.getBytes(StandardCharsets.UTF_8));
        for (byte[] data : userRecords) {
            ByteArrayOutputStream record = new ByteArrayOutputStream();
            varintField(record, 1, 0); // partition_key_index: the only key in the table
            lengthDelimited(record, 3, data);
            lengthDelimited(message, 3, record.toByteArray());
        }
        byte[] protobuf = message.toByteArray();
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.writeBytes(new byte[] {(byte) 0xF3, (byte) 0x89, (byte) 0x9A, (byte) 0xC2});
        out.writeBytes(protobuf);
        try {
            out.writeBytes(MessageDigest.getInstance("MD5").digest(protobuf));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
        return out.toByteArray();
    }

    private static void varintField(ByteArrayOutputStream out, int field, long value) {
        varint(out, (long) field << 3);
        varint(out, value);
    }

    private static void lengthDelimited(ByteArrayOutputStream out, int field, byte[] bytes) {
        varint(out, (long) field << 3 | 2);
        varint(out, bytes.length);
        out.writeBytes(bytes);
    }

    private static void varint(ByteArrayOutputStream out, long value) {
        while ((value & ~0x7FL) != 0) {
            out.write((int) ((value & 0x7F) | 0x80));
            value >>>= 7;
        }
        out.write((int) value);
    }
}
