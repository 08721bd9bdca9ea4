package dev.snapshots.harness.bench;

import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Figures of interleaved rounds (A B C A B C ...): their range, and whether a goal stated as a
 * ratio of two sinks is met. A ratio is taken within each round, where both sinks ran minutes apart
 * on the same machine; its spread across rounds says whether the machine let the rounds agree.
 */
final class Rounds {
    /**
     * A ratio whose rounds spread wider than this (max - min, over the median) decides nothing: the
     * wall-clock ratio of two identical runs once went 0.775 and 1.371.
     */
    static final double INCONCLUSIVE_SPREAD_PERCENT = 5;

    /** Min, median and max of the rounds, and their spread: (max - min) / median, in percent. */
    record Stats(double min, double median, double max, double spreadPercent) {
        Map<String, Object> toMap(int digits) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("min", BenchSummary.round(min, digits));
            m.put("median", BenchSummary.round(median, digits));
            m.put("max", BenchSummary.round(max, digits));
            m.put("spreadPercent", BenchSummary.round(spreadPercent, 1));
            return m;
        }
    }

    private Rounds() {}

    static Stats of(double... values) {
        if (values.length == 0) {
            throw new IllegalArgumentException("no rounds");
        }
        double[] sorted = values.clone();
        Arrays.sort(sorted);
        double median = median(sorted);
        double spread =
                median == 0 ? 0 : 100 * (sorted[sorted.length - 1] - sorted[0]) / Math.abs(median);
        return new Stats(sorted[0], median, sorted[sorted.length - 1], spread);
    }

    static double median(double[] sorted) {
        int n = sorted.length;
        return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
    }

    /** Round by round, a[i] / b[i]. */
    static double[] ratios(double[] a, double[] b) {
        return pairwise(a, b, true);
    }

    /** Round by round, a[i] - b[i]: a sink's own cost over the discarding sink of its round. */
    static double[] differences(double[] a, double[] b) {
        return pairwise(a, b, false);
    }

    private static double[] pairwise(double[] a, double[] b, boolean divide) {
        if (a.length != b.length) {
            throw new IllegalArgumentException(
                    "rounds differ in number: " + a.length + " and " + b.length);
        }
        double[] out = new double[a.length];
        for (int i = 0; i < a.length; i++) {
            out[i] = divide ? a[i] / b[i] : a[i] - b[i];
        }
        return out;
    }

    /**
     * The verdict on a goal "ratio at most {@code atMost}": inconclusive when the ratio's rounds
     * spread more than {@value #INCONCLUSIVE_SPREAD_PERCENT} %, else met or missed by its median.
     */
    static String verdict(Stats ratio, double atMost) {
        if (ratio.spreadPercent() > INCONCLUSIVE_SPREAD_PERCENT) {
            return "inconclusive";
        }
        return ratio.median() <= atMost ? "met" : "missed";
    }

    /**
     * The verdict on "at most {@code atMost}" for a figure whose rounds scatter by nature (a p99 of
     * a few dozen commits): met when every round is within it, missed when none is, else
     * inconclusive.
     */
    static String verdictByRange(Stats rounds, double atMost) {
        if (rounds.max() <= atMost) {
            return "met";
        }
        return rounds.min() > atMost ? "missed" : "inconclusive";
    }
}
