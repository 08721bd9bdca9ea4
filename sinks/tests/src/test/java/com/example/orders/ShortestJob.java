package com.example.orders;

import dev.snapshots.format.PojoRowFormat;
import dev.snapshots.sink.CanonicalSnapshotSink;
import dev.snapshots.store.StoreSpec;
import java.math.BigDecimal;
import java.time.Duration;
import java.time.Instant;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.functions.AggregateFunction;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.windowing.assigners.TumblingEventTimeWindows;
import org.apache.flink.table.annotation.DataTypeHint;

/** Orders in, revenue per customer and hour out: one Parquet object per (hour, bucket). */
public class ShortestJob {
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

    /** Args: the store, e.g. file:///tmp/orders or s3://my-bucket/snapshots. */
    public static void main(String[] args) throws Exception {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.enableCheckpointing(10_000); // the sink publishes a window's parts at a checkpoint
        DataStream<Order> orders =
                env.fromSequence(0, 9_999) // your source here
                        .map(ShortestJob::order)
                        .assignTimestampsAndWatermarks(
                                WatermarkStrategy.<Order>forMonotonousTimestamps()
                                        .withTimestampAssigner((order, time) -> order.timeMillis));
        snapshots(orders, StoreSpec.parse(args[0]));
        env.execute("orders");
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
                        .store(store)
                        .rowFormat(format)
                        .build();
        sink.writeWindows(
                orders.keyBy(format.keySelector(Order.class)) // the key named once, above
                        .window(TumblingEventTimeWindows.of(Duration.ofHours(1)))
                        .aggregate(new Revenue()));
    }

    /** Order {@code i}: one every 8 seconds of 2026-12-01, from 7 customers. */
    public static Order order(long i) {
        Order order = new Order();
        order.customer = "customer-" + i % 7;
        order.timeMillis = Instant.parse("2026-12-01T00:00:00Z").toEpochMilli() + i * 8_000;
        order.amount = BigDecimal.valueOf(i % 1_000, 2);
        return order;
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
}
