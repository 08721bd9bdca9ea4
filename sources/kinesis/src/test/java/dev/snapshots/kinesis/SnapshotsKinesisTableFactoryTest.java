package dev.snapshots.kinesis;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.apache.flink.table.api.EnvironmentSettings;
import org.apache.flink.table.api.TableEnvironment;
import org.apache.flink.table.api.ValidationException;
import org.junit.jupiter.api.Test;

/**
 * What {@code 'connector' = 'snapshots-kinesis'} refuses when a query is planned, each refusal
 * naming what to change. Nothing here reaches Kinesis or a store.
 */
class SnapshotsKinesisTableFactoryTest {
    private static final String OPTIONS =
            "'connector' = 'snapshots-kinesis', 'format' = 'json',"
                    + " 'stream.arn' = 'arn:aws:kinesis:us-east-1:000000000000:stream/orders',"
                    + " 'window' = '1 min', 'dead-letters.store' = 'file:///nowhere',"
                    + " 'dead-letters.pipeline' = 'orders', 'dead-letters.job-version' = '1'";

    private static final String WATERMARKED =
            "customer STRING, order_time TIMESTAMP(3), WATERMARK FOR order_time AS order_time";

    private static void plan(String columns, String options) {
        TableEnvironment tables = TableEnvironment.create(EnvironmentSettings.inStreamingMode());
        tables.executeSql("CREATE TABLE orders (" + columns + ") WITH (" + options + ")");
        tables.explainSql("SELECT * FROM orders");
    }

    @Test
    void aTableWithoutAWatermarkIsRefused() {
        assertThatThrownBy(() -> plan("customer STRING, order_time TIMESTAMP(3)", OPTIONS))
                .rootCause()
                .isInstanceOf(ValidationException.class)
                .hasMessageContaining("needs a WATERMARK");
    }

    @Test
    void aComputedRowtimeIsRefusedNamingTheColumn() {
        assertThatThrownBy(
                        () ->
                                plan(
                                        "customer STRING, millis BIGINT,"
                                                + " order_time AS TO_TIMESTAMP_LTZ(millis, 3),"
                                                + " WATERMARK FOR order_time AS order_time",
                                        OPTIONS))
                .rootCause()
                .hasMessageContaining("the WATERMARK's column order_time must be a physical");
    }

    @Test
    void aStreamArnThatIsNotOneIsRefused() {
        assertThatThrownBy(
                        () ->
                                plan(
                                        WATERMARKED,
                                        OPTIONS.replace(
                                                "arn:aws:kinesis:us-east-1:000000000000:stream/orders",
                                                "orders")))
                .rootCause()
                .hasMessageContaining("stream.arn must look like");
    }

    @Test
    void aMissingDeadLetterDestinationIsRefusedNamingTheOption() {
        assertThatThrownBy(
                        () ->
                                plan(
                                        WATERMARKED,
                                        OPTIONS.replace(
                                                ", 'dead-letters.store' = 'file:///nowhere'", "")))
                .rootCause()
                .hasMessageContaining("dead-letters.store");
    }
}
