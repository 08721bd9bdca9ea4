package dev.snapshots.harness.testutils;

import dev.snapshots.harness.JobOutput;
import dev.snapshots.job.config.JobConfig;
import dev.snapshots.key.ObjectKeys;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * A job's rows per window, in one form for a reader's query and for the reference: windows keyed
 * {@code date/window} as the partitions spell them ({@code 2026-11-30/1005}), each row {@code
 * device,count,value_sum} with the sum in millionths, sorted.
 */
public final class WindowRows {
    private WindowRows() {}

    /** What the job must publish for {@code config}, computed from the generator's truth. */
    public static Map<String, List<String>> expected(JobConfig config) {
        Map<String, List<String>> windows = new TreeMap<>();
        JobOutput.expected(config)
                .parts
                .forEach(
                        (part, rows) -> {
                            long start = Long.parseLong(part.substring(0, part.indexOf('/')));
                            List<String> window =
                                    windows.computeIfAbsent(
                                            ObjectKeys.date(start) + "/" + ObjectKeys.time(start),
                                            w -> new ArrayList<>());
                            for (String row : rows) {
                                String[] f = row.split(",");
                                window.add(f[0] + "," + f[2] + "," + f[3]);
                            }
                        });
        windows.values().forEach(Collections::sort);
        return windows;
    }

    /**
     * The rows {@code sql} returns, by the {@code date} and {@code window} columns it returns with
     * {@code device}, {@code count} and {@code value_sum}.
     */
    public static Map<String, List<String>> query(Connection duckdb, String sql)
            throws SQLException {
        Map<String, List<String>> windows = new TreeMap<>();
        try (Statement st = duckdb.createStatement();
                ResultSet rs = st.executeQuery(sql)) {
            while (rs.next()) {
                windows.computeIfAbsent(
                                rs.getString("date") + "/" + rs.getString("window"),
                                w -> new ArrayList<>())
                        .add(
                                rs.getString("device")
                                        + ","
                                        + rs.getLong("count")
                                        + ","
                                        + Math.round(rs.getDouble("value_sum") * 1e6));
            }
        }
        windows.values().forEach(Collections::sort);
        return windows;
    }
}
