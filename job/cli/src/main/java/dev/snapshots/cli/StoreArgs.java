package dev.snapshots.cli;

import dev.snapshots.job.config.CommandLine;
import dev.snapshots.store.StoreSpec;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.apache.flink.annotation.Internal;
import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.ConfigOptions;
import org.apache.flink.configuration.Configuration;

/**
 * {@code STORE_URI [--endpoint URL] [--json] [--flag value ...]}: the arguments of every command
 * that reads a store, read by {@link CommandLine}. Unknown flags are errors, so a typo never
 * silently changes a report. {@code switches} are the flags, besides {@code --json}, that take no
 * value.
 */
@Internal
public record StoreArgs(
        StoreSpec store, boolean json, Map<String, String> flags, Set<String> switches) {

    public static StoreArgs parse(String[] args, String usage, String... valueFlags) {
        return parse(args, usage, Set.of(), valueFlags);
    }

    public static StoreArgs parse(
            String[] args, String usage, Set<String> switches, String... valueFlags) {
        List<ConfigOption<?>> options = new ArrayList<>();
        for (String name : valueFlags) {
            options.add(ConfigOptions.key("store-args." + name).stringType().noDefaultValue());
        }
        options.add(ConfigOptions.key("store-args.endpoint").stringType().noDefaultValue());
        Set<String> allSwitches = new TreeSet<>(switches);
        allSwitches.add("json");
        CommandLine.Parsed parsed =
                CommandLine.parse(args, options, allSwitches, 1, new Configuration());
        if (parsed.positional().isEmpty()) {
            throw new IllegalArgumentException("STORE_URI is required\n" + usage);
        }
        Map<String, String> flags = new TreeMap<>();
        for (ConfigOption<?> option : options) {
            String value = parsed.options().getString(option.key(), null);
            if (value != null) {
                flags.put(option.key().substring("store-args.".length()), value);
            }
        }
        StoreSpec spec = StoreSpec.parse(parsed.positional().get(0));
        if (flags.containsKey("endpoint")) {
            spec = spec.withEndpoint(flags.get("endpoint"));
        }
        Set<String> given = new TreeSet<>(parsed.switches());
        given.remove("json");
        return new StoreArgs(spec, parsed.has("json"), flags, given);
    }
}
