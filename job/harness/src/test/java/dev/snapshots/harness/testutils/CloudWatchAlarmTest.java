package dev.snapshots.harness.testutils;

import static org.assertj.core.api.Assertions.assertThat;

import dev.snapshots.harness.testutils.CloudWatchAlarm.Sample;
import dev.snapshots.harness.testutils.CloudWatchAlarm.Transition;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The evaluator against CloudWatch's documented examples ("Configuring how CloudWatch alarms treat
 * missing data": an alarm of 3 evaluation periods, 3 datapoints to alarm; 0 within the threshold, X
 * breaching, - missing), and metric math's DIFF over counters that restart.
 */
class CloudWatchAlarmTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    @ParameterizedTest(name = "{0} treated as {1}: {2}")
    @CsvSource({
        "0 0 0, missing, OK",
        "0 X X, missing, OK",
        "X X X, missing, ALARM",
        "- - X, missing, ALARM",
        "- - 0, missing, OK",
        "- - -, missing, INSUFFICIENT_DATA",
        "- - X, notBreaching, OK",
        "- - -, notBreaching, OK",
        "- - X, breaching, ALARM",
        "- - -, breaching, ALARM",
        "- - X, ignore, INSUFFICIENT_DATA",
        "X X X, ignore, ALARM",
    })
    void threeOfThreeAsDocumented(String points, String treatMissingData, String state)
            throws Exception {
        CloudWatchAlarm alarm =
                alarm(
                        "{\"metric_name\":\"m\",\"statistic\":\"Maximum\",\"period\":60,"
                                + "\"evaluation_periods\":3,\"datapoints_to_alarm\":3,"
                                + "\"comparison_operator\":\"GreaterThanThreshold\",\"threshold\":0,"
                                + "\"treat_missing_data\":\""
                                + treatMissingData
                                + "\",\"alarm_actions\":[\"topic\"]}");
        List<Sample> samples = new ArrayList<>();
        String[] each = points.split(" ");
        for (int p = 0; p < each.length; p++) {
            if (!each[p].equals("-")) {
                samples.add(
                        new Sample(
                                Duration.ofSeconds(60L * p + 30),
                                "m",
                                each[p].equals("X") ? 1 : 0));
            }
        }
        List<Transition> changes = alarm.evaluate(samples, Duration.ofMinutes(3));
        assertThat(changes.isEmpty() ? "INSUFFICIENT_DATA" : changes.get(changes.size() - 1).to())
                .isEqualTo(state);
    }

    @Test
    void aDiffAlarmSeesACounterThatStartsAgainAsNoIncreaseAndPagesOnThreeNewRestarts()
            throws Exception {
        CloudWatchAlarm restarts =
                alarm(
                        "{\"evaluation_periods\":15,\"datapoints_to_alarm\":3,"
                                + "\"comparison_operator\":\"GreaterThanThreshold\",\"threshold\":0,"
                                + "\"treat_missing_data\":\"notBreaching\",\"alarm_actions\":[\"topic\"],"
                                + "\"metric_query\":["
                                + "{\"id\":\"new\",\"expression\":\"DIFF(r)\",\"return_data\":true,\"metric\":[]},"
                                + "{\"id\":\"r\",\"expression\":null,\"return_data\":null,"
                                + "\"metric\":[{\"metric_name\":\"restarts\",\"stat\":\"Maximum\",\"period\":60}]}]}");
        // 2 restarts on the old JobManager, a new one from 0, then three minutes with a restart.
        double[] minutes = {2, 2, Double.NaN, 0, 0, 1, 2, 3};
        List<Sample> samples = new ArrayList<>();
        for (int p = 0; p < minutes.length; p++) {
            if (!Double.isNaN(minutes[p])) {
                samples.add(new Sample(Duration.ofSeconds(60L * p + 1), "restarts", minutes[p]));
            }
        }
        assertThat(restarts.datapoints(samples, Duration.ofMinutes(8)))
                .containsExactly(null, 0.0, null, -2.0, 0.0, 1.0, 1.0, 1.0);
        assertThat(restarts.pages(samples, Duration.ofMinutes(7))).isEmpty();
        assertThat(restarts.pages(samples, Duration.ofMinutes(8)))
                .extracting(Transition::at)
                .containsExactly(Duration.ofMinutes(8));
    }

    @Test
    void insufficientDataPagesOnlyWhereItsActionsNameATopicAndPeriodsScale() throws Exception {
        String silent =
                "{\"metric_name\":\"running\",\"statistic\":\"Minimum\",\"period\":60,"
                        + "\"evaluation_periods\":2,\"datapoints_to_alarm\":2,"
                        + "\"comparison_operator\":\"LessThanThreshold\",\"threshold\":1,"
                        + "\"treat_missing_data\":\"missing\",\"alarm_actions\":[\"topic\"]";
        List<Sample> reportsThenStops =
                List.of(
                        new Sample(Duration.ofSeconds(5), "running", 5000),
                        new Sample(Duration.ofSeconds(15), "running", 15000));
        CloudWatchAlarm paging = alarm(silent + ",\"insufficient_data_actions\":[\"topic\"]}", 6);
        assertThat(paging.period()).isEqualTo(Duration.ofSeconds(10));
        assertThat(paging.evaluate(reportsThenStops, Duration.ofSeconds(60)))
                .extracting(Transition::toString)
                .containsExactly(
                        "  10.0 s INSUFFICIENT_DATA -> OK",
                        "  40.0 s OK -> INSUFFICIENT_DATA (PAGE)");
        assertThat(alarm(silent + "}", 6).pages(reportsThenStops, Duration.ofSeconds(60)))
                .isEmpty();
    }

    private static CloudWatchAlarm alarm(String after) throws Exception {
        return alarm(after, 1);
    }

    private static CloudWatchAlarm alarm(String after, int timeScale) throws Exception {
        JsonNode node = JSON.readTree(after);
        return CloudWatchAlarm.fromPlan(node, timeScale);
    }
}
