package dev.snapshots.harness.testutils;

import java.time.Duration;
import java.util.ArrayList;
import java.util.DoubleSummaryStatistics;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;

/**
 * A CloudWatch metric alarm as a Terraform plan has it ({@code aws_cloudwatch_metric_alarm}'s
 * planned values), evaluated over recorded datapoints as CloudWatch documents it ("Using Amazon
 * CloudWatch alarms", "Configuring how CloudWatch alarms treat missing data"):
 *
 * <ul>
 *   <li>Samples fall into periods; a period's datapoint is the alarm's statistic over its samples,
 *       and a period with none is missing. An alarm on a metric query returns {@code DIFF(m)}: a
 *       datapoint minus the one before it in the series (none for the first).
 *   <li>At the end of each period the alarm looks at the last {@code evaluation_periods} periods
 *       and goes to ALARM when {@code datapoints_to_alarm} of them breach, else to OK. Missing
 *       datapoints count as {@code breaching} or {@code notBreaching} as configured; with {@code
 *       missing} only the real ones count: none is INSUFFICIENT_DATA, and fewer than the periods go
 *       to ALARM when no more of them are within the threshold than M-of-N allows (CloudWatch's
 *       table: "- - X - -" at 3 of 3 is ALARM); with {@code ignore} the state stays unless every
 *       period has a datapoint.
 *   <li>An alarm starts in INSUFFICIENT_DATA. Moving to a state whose actions name a topic pages
 *       (ALARM: {@code alarm_actions}, INSUFFICIENT_DATA: {@code insufficient_data_actions});
 *       {@code ok_actions} only tell that it is over.
 * </ul>
 *
 * <p>Where the documentation leaves room: the evaluation range is taken as exactly the evaluation
 * periods (CloudWatch may look a few periods further back for real datapoints); datapoints are
 * judged when their period ends (CloudWatch evaluates about once a minute, data arriving late).
 */
public record CloudWatchAlarm(
        String name,
        String metric,
        String statistic,
        Duration period,
        boolean diff,
        int evaluationPeriods,
        int datapointsToAlarm,
        String comparison,
        double threshold,
        String treatMissingData,
        boolean pagesOnAlarm,
        boolean pagesOnInsufficientData) {

    private static final Pattern DIFF = Pattern.compile("DIFF\\((\\w+)\\)");

    /** One sample of a metric, {@code at} from the start of the recording. */
    public record Sample(Duration at, String metric, double value) {}

    /** A change of the alarm's state at the end of a period. */
    public record Transition(Duration at, String from, String to, boolean pages) {
        @Override
        public String toString() {
            return String.format(
                    "%6.1f s %s -> %s%s", at.toMillis() / 1000.0, from, to, pages ? " (PAGE)" : "");
        }
    }

    /**
     * The alarm of a plan's {@code aws_cloudwatch_metric_alarm} resource change ({@code
     * change.after}), its periods divided by {@code timeScale}.
     */
    public static CloudWatchAlarm fromPlan(JsonNode after, int timeScale) {
        String metric = after.path("metric_name").asText();
        String statistic = after.path("statistic").asText();
        long period = after.path("period").asLong();
        boolean diff = false;
        for (JsonNode query : after.path("metric_query")) {
            if (!query.path("return_data").asBoolean()) {
                continue;
            }
            Matcher m = DIFF.matcher(query.path("expression").asText());
            if (!m.matches()) {
                throw new IllegalArgumentException(
                        after.path("alarm_name").asText()
                                + ": only DIFF(<metric query>) is evaluated here, not "
                                + query.path("expression"));
            }
            JsonNode source = metricQuery(after, m.group(1));
            metric = source.path("metric_name").asText();
            statistic = source.path("stat").asText();
            period = source.path("period").asLong();
            diff = true;
        }
        int evaluationPeriods = after.path("evaluation_periods").asInt();
        return new CloudWatchAlarm(
                after.path("alarm_name").asText(),
                metric,
                statistic,
                Duration.ofMillis(period * 1000 / timeScale),
                diff,
                evaluationPeriods,
                after.path("datapoints_to_alarm").isNull()
                        ? evaluationPeriods
                        : after.path("datapoints_to_alarm").asInt(),
                after.path("comparison_operator").asText(),
                after.path("threshold").asDouble(),
                after.path("treat_missing_data").asText(),
                !after.path("alarm_actions").isEmpty(),
                !after.path("insufficient_data_actions").isEmpty());
    }

    /** Whether the alarm pages at all (a topic among its alarm or insufficient-data actions). */
    public boolean pages() {
        return pagesOnAlarm || pagesOnInsufficientData;
    }

    /** Each period's datapoint from the start of the recording to {@code end}; null if missing. */
    public List<Double> datapoints(List<Sample> samples, Duration end) {
        int periods = (int) (end.toMillis() / period.toMillis());
        Map<Integer, DoubleSummaryStatistics> stats = new TreeMap<>();
        for (Sample s : samples) {
            int p = (int) (s.at().toMillis() / period.toMillis());
            if (s.metric().equals(metric) && p < periods) {
                stats.computeIfAbsent(p, k -> new DoubleSummaryStatistics()).accept(s.value());
            }
        }
        List<Double> points = new ArrayList<>();
        Double previous = null;
        for (int p = 0; p < periods; p++) {
            DoubleSummaryStatistics st = stats.get(p);
            Double value = st == null ? null : statistic(st);
            if (!diff) {
                points.add(value);
            } else if (value == null) {
                points.add(null);
            } else {
                points.add(previous == null ? null : value - previous);
                previous = value;
            }
        }
        return points;
    }

    /** The alarm's state changes over the recording, evaluated at the end of every period. */
    public List<Transition> evaluate(List<Sample> samples, Duration end) {
        List<Double> points = datapoints(samples, end);
        List<Transition> transitions = new ArrayList<>();
        String state = "INSUFFICIENT_DATA";
        for (int p = 0; p < points.size(); p++) {
            List<Double> range = points.subList(Math.max(0, p + 1 - evaluationPeriods), p + 1);
            String next = state(range, state);
            if (!next.equals(state)) {
                boolean pages =
                        next.equals("ALARM") && pagesOnAlarm
                                || next.equals("INSUFFICIENT_DATA") && pagesOnInsufficientData;
                transitions.add(new Transition(period.multipliedBy(p + 1), state, next, pages));
                state = next;
            }
        }
        return transitions;
    }

    /** The pages among the state changes. */
    public List<Transition> pages(List<Sample> samples, Duration end) {
        return evaluate(samples, end).stream().filter(Transition::pages).toList();
    }

    private String state(List<Double> range, String current) {
        // Periods before the alarm existed are missing too.
        int missing = evaluationPeriods - range.size();
        int breaching = 0;
        int within = 0;
        for (Double v : range) {
            if (v == null) {
                missing++;
            } else if (breaches(v)) {
                breaching++;
            } else {
                within++;
            }
        }
        switch (treatMissingData) {
            case "breaching":
                return breaching + missing >= datapointsToAlarm ? "ALARM" : "OK";
            case "notBreaching":
                return breaching >= datapointsToAlarm ? "ALARM" : "OK";
            case "ignore":
                if (missing > 0) {
                    return current;
                }
                return breaching >= datapointsToAlarm ? "ALARM" : "OK";
            case "missing":
                if (breaching + within == 0) {
                    return "INSUFFICIENT_DATA";
                }
                return within <= evaluationPeriods - datapointsToAlarm ? "ALARM" : "OK";
            default:
                throw new IllegalArgumentException(
                        name + ": treat_missing_data " + treatMissingData);
        }
    }

    private boolean breaches(double v) {
        switch (comparison) {
            case "GreaterThanThreshold":
                return v > threshold;
            case "GreaterThanOrEqualToThreshold":
                return v >= threshold;
            case "LessThanThreshold":
                return v < threshold;
            case "LessThanOrEqualToThreshold":
                return v <= threshold;
            default:
                throw new IllegalArgumentException(name + ": comparison " + comparison);
        }
    }

    private double statistic(DoubleSummaryStatistics st) {
        switch (statistic) {
            case "Minimum":
                return st.getMin();
            case "Maximum":
                return st.getMax();
            case "Sum":
                return st.getSum();
            case "Average":
                return st.getAverage();
            case "SampleCount":
                return st.getCount();
            default:
                throw new IllegalArgumentException(name + ": statistic " + statistic);
        }
    }

    private static JsonNode metricQuery(JsonNode after, String id) {
        for (JsonNode query : after.path("metric_query")) {
            if (query.path("id").asText().equals(id)) {
                return query.path("metric").path(0);
            }
        }
        throw new IllegalArgumentException(
                after.path("alarm_name").asText() + ": no metric query " + id);
    }
}
