package dev.snapshots.job;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

/**
 * {@code --name value} flags over their defaults, for the commands that take no store URI (chaos,
 * bench, protect). A name in {@code switches} takes no value and is set to "true" when given.
 * Unknown names and a missing value are errors, so a typo never runs with a default.
 */
final class Flags {
    private Flags() {}

    /** {@code defaults} holds {name, default value} pairs, in the order reports list them. */
    static Map<String, String> parse(String[] args, String[][] defaults, Set<String> switches) {
        Map<String, String> flags = new LinkedHashMap<>();
        for (String[] d : defaults) {
            flags.put(d[0], d[1]);
        }
        for (int i = 0; i < args.length; i++) {
            String name = args[i].startsWith("--") ? args[i].substring(2) : null;
            if (name != null && switches.contains(name)) {
                flags.put(name, "true");
            } else if (name != null && !switches.contains(name) && flags.containsKey(name) && i + 1 < args.length) {
                flags.put(name, args[++i]);
            } else {
                throw new IllegalArgumentException("unknown or incomplete flag '" + args[i] + "'");
            }
        }
        return flags;
    }
}
