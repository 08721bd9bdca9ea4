package dev.snapshots.example;

import dev.snapshots.format.PojoRowFormat;
import dev.snapshots.sink.CanonicalSnapshotSink;
import dev.snapshots.store.StoreSpec;
import java.math.BigDecimal;
import java.time.Duration;
import org.apache.flink.api.common.functions.AggregateFunction;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.windowing.assigners.TumblingEventTimeWindows;
import org.apache.flink.table.annotation.DataTypeHint;

/**
 * The README's shortest job, as it stands there (between the markers; {@code ShortestJobITCase}
 * checks the README against this file and runs it): orders in, revenue per customer and hour out.
 */
public final class ShortestJob {
    private ShortestJob() {}

    // README:start
    public static class Order { // a Flink POJO: public fields, a no-argument constructor
        public String customer;
        public long timeMillis;
        public BigDecimal amount;
    }

    public static class CustomerHour { // a row of the output
        public String customer;
        public long orders;

        @DataTypeHint("DECIMAL(12, 2)")
        public BigDecimal revenue = BigDecimal.ZERO;
    }

    /** {@code orders}: with event-time timestamps and watermarks; checkpointing on. */
    public static void snapshots(DataStream<Order> orders, StoreSpec store) {
        PojoRowFormat<CustomerHour> format = PojoRowFormat.of(CustomerHour.class, "customer");
        CanonicalSnapshotSink<CustomerHour> sink =
                CanonicalSnapshotSink.<CustomerHour>builder()
                        .pipeline("orders")
                        .jobVersion(1)
                        .bucketCount(4)
                        .windowLength(Duration.ofHours(1))
                        .store(store) // StoreSpec.parse("s3://my-bucket/snapshots")
                        .rowFormat(format)
                        .build();
        sink.writeWindows(
                orders.keyBy(format.keySelector(Order.class)) // the key named once, above
                        .window(TumblingEventTimeWindows.of(Duration.ofHours(1)))
                        .aggregate(new Revenue()));
    }

    public static class Revenue implements AggregateFunction<Order, CustomerHour, CustomerHour> {
        @Override
        public CustomerHour createAccumulator() {
            return new CustomerHour();
        }

        @Override
        public CustomerHour add(Order order, CustomerHour hour) {
            hour.customer = order.customer;
            hour.orders++;
            hour.revenue = hour.revenue.add(order.amount);
            return hour;
        }

        @Override
        public CustomerHour getResult(CustomerHour hour) {
            return hour;
        }

        @Override
        public CustomerHour merge(CustomerHour a, CustomerHour b) {
            a.orders += b.orders;
            a.revenue = a.revenue.add(b.revenue);
            return a;
        }
    }
    // README:end
}
