package dev.snapshots.testkit;

import dev.snapshots.format.PartEncoding;
import dev.snapshots.key.ObjectKeys;
import dev.snapshots.key.ObjectKeys.PartKey;
import dev.snapshots.key.PartMetadata;
import dev.snapshots.store.ObjectStore;
import java.io.IOException;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericRecord;
import org.apache.flink.annotation.Internal;
import org.apache.flink.runtime.state.KeyGroupRangeAssignment;

/**
 * The README's shortest job judged from outside: its reference computed in plain Java from the
 * orders, and what its store holds, read back from the Parquet parts. Shared by the test that runs
 * the job on a MiniCluster and the one that builds it in a project of its own.
 */
@Internal
public final class CustomerHours {
    private static final long HOUR = 3_600_000L;

    /** An order as the job reads it. */
    public record Order(String customer, long timeMillis, BigDecimal amount) {}

    /** A row of the output, with where it was found (or, in the reference, belongs). */
    public record Row(long hour, int bucket, String customer, long orders, BigDecimal revenue) {}

    private CustomerHours() {}

    /**
     * Per hour and customer: the orders and their sum, in the bucket of the customer's key group
     * (B's share of Flink's 128 key groups).
     */
    public static List<Row> reference(List<Order> orders, int buckets) {
        Map<String, Map<Long, List<Order>>> byCustomer = new TreeMap<>();
        for (Order o : orders) {
            byCustomer
                    .computeIfAbsent(o.customer(), c -> new TreeMap<>())
                    .computeIfAbsent(o.timeMillis() - o.timeMillis() % HOUR, h -> new ArrayList<>())
                    .add(o);
        }
        List<Row> rows = new ArrayList<>();
        byCustomer.forEach(
                (customer, hours) ->
                        hours.forEach(
                                (hour, inHour) ->
                                        rows.add(
                                                new Row(
                                                        hour,
                                                        KeyGroupRangeAssignment.assignToKeyGroup(
                                                                        customer, 128)
                                                                * buckets
                                                                / 128,
                                                        customer,
                                                        inHour.size(),
                                                        inHour.stream()
                                                                .map(Order::amount)
                                                                .reduce(
                                                                        BigDecimal.ZERO,
                                                                        BigDecimal::add)))));
        rows.sort(Comparator.comparing(Row::hour).thenComparing(Row::customer));
        return rows;
    }

    /** Every Parquet part of the version, with the fingerprint it was published with. */
    public static Map<String, String> fingerprints(ObjectStore store, String pipeline, int version)
            throws IOException {
        Map<String, String> parts = new TreeMap<>();
        List<String> keys = new ArrayList<>();
        store.list(ObjectKeys.versionPrefix(pipeline, version), o -> keys.add(o.key()));
        for (String key : keys) {
            if (key.endsWith(".parquet")) {
                parts.put(
                        key,
                        store.head(key).orElseThrow().metadata().get(PartMetadata.FINGERPRINT));
            }
        }
        return parts;
    }

    /** The parts' rows, in the order each part holds them. */
    public static List<Row> rows(ObjectStore store, Iterable<String> keys) throws IOException {
        List<Row> rows = new ArrayList<>();
        for (String key : keys) {
            PartKey part = ObjectKeys.parse(key).orElseThrow();
            for (GenericRecord r : PartEncoding.decode(store.get(key).orElseThrow().content())) {
                GenericData.Fixed revenue = (GenericData.Fixed) r.get("revenue");
                rows.add(
                        new Row(
                                part.windowStartMillis(),
                                part.bucket(),
                                r.get("customer").toString(),
                                (Long) r.get("orders"),
                                new BigDecimal(new BigInteger(revenue.bytes()), 2)));
            }
        }
        return rows;
    }

    /** The divergence evidence the store holds: empty when every rerun agreed. */
    public static List<String> divergences(ObjectStore store) throws IOException {
        List<String> keys = new ArrayList<>();
        store.list(ObjectKeys.DIVERGENCE_PREFIX, o -> keys.add(o.key()));
        return keys;
    }

    /** Where the reference's rows belong: a part per (hour, bucket) with rows. */
    public static List<String> parts(List<Row> reference) {
        return reference.stream().map(r -> r.hour() + "/" + r.bucket()).distinct().toList();
    }

    /** Where a part belongs: its window start and bucket. */
    public static String partOf(String key) {
        PartKey part = ObjectKeys.parse(key).orElseThrow();
        return part.windowStartMillis() + "/" + part.bucket();
    }
}
