package dev.snapshots.cli;

import dev.snapshots.job.config.CommandLine;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.flink.annotation.Internal;
import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.ConfigOptions;
import org.apache.flink.configuration.Configuration;

/**
 * {@code --name value} flags of a command with no store argument (chaos, bench, protect) over their
 * defaults, read by {@link CommandLine}; a name in {@code switches} takes no value and is "true"
 * when given.
 */
@Internal
public final class Flags {
    private Flags() {}

    /** {@code defaults} holds {name, default value} pairs, in the order reports list them. */
    public static Map<String, String> parse(
            String[] args, String[][] defaults, Set<String> switches) {
        List<ConfigOption<?>> options = new ArrayList<>();
        for (String[] d : defaults) {
            options.add(ConfigOptions.key("flags." + d[0]).stringType().defaultValue(d[1]));
        }
        CommandLine.Parsed parsed =
                CommandLine.parse(args, options, switches, 0, new Configuration());
        Map<String, String> flags = new LinkedHashMap<>();
        for (String[] d : defaults) {
            flags.put(d[0], parsed.options().getString("flags." + d[0], d[1]));
        }
        parsed.switches().forEach(s -> flags.put(s, "true"));
        return flags;
    }
}
