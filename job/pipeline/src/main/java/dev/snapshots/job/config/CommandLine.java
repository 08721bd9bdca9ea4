package dev.snapshots.job.config;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.apache.flink.annotation.Internal;
import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.description.HtmlFormatter;

/**
 * The one parser of every command: {@code --name value}, {@code --name=value}, switches and
 * positional arguments, against the options a command declares.
 *
 * <p>Options are Flink {@link ConfigOption}s; a flag is its option's key after the last '.', so
 * {@code --window 5m} sets {@code snapshots.window}. Values stay text in a Flink {@link
 * Configuration}, which converts them when read: text is what every source of Flink configuration
 * holds (flink-conf, {@code FLINK_PROPERTIES}), and text never passes through the JVM's locale
 * (Flink 1.20.1 writes a Duration option in the default locale's digits and cannot read it back).
 * Unknown flags and missing values are errors, so a typo never runs with a default.
 */
@Internal
public final class CommandLine {
    /**
     * What a command line set: its options over {@code base}, its switches, its positional
     * arguments.
     */
    public record Parsed(Configuration options, Set<String> switches, List<String> positional) {
        public <T> T get(ConfigOption<T> option) {
            return options.get(option);
        }

        public boolean has(String switchName) {
            return switches.contains(switchName);
        }
    }

    private CommandLine() {}

    /** The flag of an option: {@code --} and its key's last segment. */
    public static String flag(ConfigOption<?> option) {
        return "--" + name(option);
    }

    private static String name(ConfigOption<?> option) {
        return option.key().substring(option.key().lastIndexOf('.') + 1);
    }

    /**
     * @param base values that apply unless the command line sets them: a cluster's configuration,
     *     or a command's own defaults
     * @param maxPositional how many arguments without a flag it takes
     * @throws IllegalArgumentException naming the flag, with a message fit for the command line
     */
    public static Parsed parse(
            String[] args,
            List<ConfigOption<?>> options,
            Set<String> switches,
            int maxPositional,
            Configuration base) {
        Map<String, ConfigOption<?>> byName = new LinkedHashMap<>();
        options.forEach(o -> byName.put(name(o), o));
        Configuration values = new Configuration(base);
        Set<String> given = new TreeSet<>();
        List<String> positional = new ArrayList<>();
        for (int i = 0; i < args.length; i++) {
            String arg = args[i];
            if (!arg.startsWith("--")) {
                if (positional.size() == maxPositional) {
                    throw new IllegalArgumentException(
                            "unexpected argument '" + arg + "': flags look like --name value");
                }
                positional.add(arg);
                continue;
            }
            String name = arg.substring(2);
            String value = null;
            int eq = name.indexOf('=');
            if (eq >= 0) {
                value = name.substring(eq + 1);
                name = name.substring(0, eq);
            }
            if (switches.contains(name) && value == null) {
                given.add(name);
                continue;
            }
            ConfigOption<?> option = byName.get(name);
            if (option == null) {
                throw new IllegalArgumentException("unknown flag --" + name);
            }
            if (value == null) {
                if (i + 1 >= args.length) {
                    throw new IllegalArgumentException("--" + name + " needs a value");
                }
                value = args[++i];
            }
            values.setString(option.key(), value);
            check(values, option);
        }
        for (ConfigOption<?> option : options) {
            if (values.containsKey(option.key())) {
                check(values, option);
            }
        }
        return new Parsed(values, given, positional);
    }

    /**
     * Reads the option once, so a value of the wrong type is reported by its flag, not as a stack
     * trace later.
     */
    private static void check(Configuration values, ConfigOption<?> option) {
        try {
            values.get(option);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(
                    flag(option)
                            + " must be "
                            + expected(option)
                            + ", got '"
                            + values.getString(option.key(), null)
                            + "'");
        }
    }

    private static String expected(ConfigOption<?> option) {
        Object example = option.hasDefaultValue() ? option.defaultValue() : null;
        if (example instanceof Duration) {
            return "a duration like 500ms, 10s, 5m, 1h or 7d";
        } else if (example instanceof Integer) {
            return "a whole number up to " + Integer.MAX_VALUE;
        } else if (example instanceof Long) {
            return "a whole number";
        } else if (example instanceof Double) {
            return "a number";
        }
        return "valid";
    }

    /**
     * The flags of {@code options} with their help and the defaults that apply: a command's own
     * ({@code defaults}) over the options'.
     */
    public static String help(List<ConfigOption<?>> options, Configuration defaults) {
        StringBuilder sb = new StringBuilder();
        for (ConfigOption<?> o : options) {
            String current =
                    defaults.containsKey(o.key())
                            ? defaults.getString(o.key(), "")
                            : o.hasDefaultValue() ? text(o.defaultValue()) : null;
            String description =
                    new HtmlFormatter()
                            .format(o.description())
                            .replace("&lt;", "<")
                            .replace("&gt;", ">")
                            .replace("&amp;", "&");
            sb.append(
                    String.format(
                            Locale.ROOT,
                            "  %-22s %s%s%n",
                            flag(o),
                            description,
                            current == null || current.isEmpty() ? "" : " [" + current + "]"));
        }
        return sb.toString();
    }

    /** A value as a user would write it: 10s, 5m, 7d. */
    public static String text(Object value) {
        if (value instanceof Duration d) {
            long ms = d.toMillis();
            for (Object[] unit :
                    new Object[][] {
                        {86_400_000L, "d"}, {3_600_000L, "h"}, {60_000L, "m"}, {1_000L, "s"}
                    }) {
                if (ms != 0 && ms % (Long) unit[0] == 0) {
                    return ms / (Long) unit[0] + (String) unit[1];
                }
            }
            return ms == 0 ? "0s" : ms + "ms";
        }
        return String.valueOf(value);
    }
}
