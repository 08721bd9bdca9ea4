package dev.snapshots.kinesis;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import org.apache.flink.table.api.EnvironmentSettings;
import org.apache.flink.table.api.TableEnvironment;
import org.apache.flink.table.api.ValidationException;
import org.assertj.core.api.AbstractThrowableAssert;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

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

    /** A snapshots table's columns, windows first. */
    private static final String HOURLY =
            "window_start TIMESTAMP(3) NOT NULL, window_end TIMESTAMP(3) NOT NULL, customer STRING"
                    + " NOT NULL, orders BIGINT NOT NULL, PRIMARY KEY (window_start, window_end,"
                    + " customer) NOT ENFORCED";

    private static void plan(String columns, String options) {
        TableEnvironment tables = TableEnvironment.create(EnvironmentSettings.inStreamingMode());
        tables.getConfig().set("execution.checkpointing.interval", "10 s");
        tables.executeSql("CREATE TABLE orders (" + columns + ") WITH (" + options + ")");
        tables.explainSql("SELECT * FROM orders");
    }

    /**
     * The table closes windows of its 'window' (a late row is a dead letter): a snapshots table
     * that writes windows of another length is refused when the INSERT is planned.
     */
    @Test
    void aSnapshotsTableOfAnotherWindowIsRefusedWhenTheInsertIsPlanned(@TempDir Path store) {
        TableEnvironment tables = TableEnvironment.create(EnvironmentSettings.inStreamingMode());
        tables.getConfig().set("execution.checkpointing.interval", "10 s");
        tables.executeSql(
                "CREATE TABLE orders ("
                        + WATERMARKED
                        + ") WITH ("
                        + OPTIONS.replace("file:///nowhere", store.toUri().toString())
                        + ")");
        tables.executeSql(
                "CREATE TABLE hourly ("
                        + HOURLY
                        + ") WITH ('connector' = 'canonical-snapshots', 'store' = '"
                        + store.toUri()
                        + "', 'pipeline' = 'orders', 'job-version' = '1', 'buckets' = '2',"
                        + " 'window' = '1 h')");

        assertThatThrownBy(
                        () ->
                                tables.executeSql(
                                        "INSERT INTO hourly SELECT window_start, window_end,"
                                                + " customer, COUNT(*) FROM TABLE(TUMBLE(TABLE"
                                                + " orders, DESCRIPTOR(order_time), INTERVAL '1'"
                                                + " HOUR)) GROUP BY window_start, window_end,"
                                                + " customer"))
                .isInstanceOf(ValidationException.class)
                .hasMessageContaining(
                        "table hourly: the table's 'window' is PT1H but its input 'kinesis orders'"
                                + " judges lateness by windows of PT1M");
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

    /** The innermost cause of planning the watermarked table with {@code extra} options. */
    private static AbstractThrowableAssert<?, ? extends Throwable> refusal(String extra) {
        return assertThatThrownBy(() -> plan(WATERMARKED, OPTIONS + extra)).rootCause();
    }

    private static final String AT_TIMESTAMP = ", 'source.init.position' = 'AT_TIMESTAMP'";

    private static final String ASSUME_ROLE = ", 'aws.credentials.provider' = 'ASSUME_ROLE'";

    @Test
    void anAtTimestampStartWithoutItsTimestampIsRefusedNamingTheOption() {
        refusal(AT_TIMESTAMP)
                .hasMessageContaining(
                        "source.init.position AT_TIMESTAMP needs source.init.timestamp");
    }

    @Test
    void aTimestampThatIsNoneOrInTheFutureIsRefused() {
        refusal(AT_TIMESTAMP + ", 'source.init.timestamp' = 'yesterday'")
                .hasMessageContaining("source.init.timestamp must be ISO-8601");
        refusal(AT_TIMESTAMP + ", 'source.init.timestamp' = '2999-01-01T00:00:00Z'")
                .hasMessageContaining("is in the future");
    }

    @Test
    void aTimestampInEpochSecondsOrWithAnOffsetIsTaken() {
        plan(WATERMARKED, OPTIONS + AT_TIMESTAMP + ", 'source.init.timestamp' = '1796083200.25'");
        plan(
                WATERMARKED,
                OPTIONS + AT_TIMESTAMP + ", 'source.init.timestamp' = '2026-12-01T01:00:00+01:00'");
    }

    @Test
    void anUnknownCredentialsProviderIsRefusedNamingTheOption() {
        assertThatThrownBy(
                        () -> plan(WATERMARKED, OPTIONS + ", 'aws.credentials.provider' = 'ECS'"))
                .isInstanceOf(ValidationException.class);
        refusal(", 'aws.credentials.provider' = 'ECS'")
                .hasMessageContaining(
                        "aws.credentials.provider 'ECS' is not a credentials provider; one of"
                                + " [ASSUME_ROLE, AUTO, BASIC, CONTAINER, CUSTOM, ENV_VAR,"
                                + " PROFILE, SYS_PROP, WEB_IDENTITY_TOKEN]");
    }

    @Test
    void anAssumedRoleWithoutItsArnIsRefusedNamingTheOption() {
        refusal(ASSUME_ROLE + ", 'aws.credentials.provider.role.sessionName' = 's'")
                .hasMessageContaining(
                        "aws.credentials.provider ASSUME_ROLE needs"
                                + " aws.credentials.provider.role.arn");
    }

    @Test
    void anAssumedRolesBaseProviderIsCheckedToo() {
        refusal(
                        ASSUME_ROLE
                                + ", 'aws.credentials.provider.role.arn' ="
                                + " 'arn:aws:iam::123456789012:role/r',"
                                + " 'aws.credentials.provider.role.sessionName' = 's',"
                                + " 'aws.credentials.provider.role.provider' = 'TASK_ROLE'")
                .hasMessageContaining(
                        "aws.credentials.provider.role.provider 'TASK_ROLE' is not a credentials"
                                + " provider");
    }

    /** Metadata columns are Flink's Kinesis table's: a key it does not have is refused. */
    @Test
    void anUnknownMetadataKeyIsRefusedListingTheKnownOnes() {
        assertThatThrownBy(
                        () ->
                                plan(
                                        WATERMARKED
                                                + ", pk STRING METADATA FROM"
                                                + " 'partition-key' VIRTUAL",
                                        OPTIONS))
                .hasMessageContaining("partition-key")
                .hasMessageContaining("arrival-time");
    }
}
