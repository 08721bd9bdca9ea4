package dev.snapshots.job;

import dev.snapshots.store.StoreSpec;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * {@code STORE_URI [--endpoint URL] [--json] [--flag value ...]}: the arguments of every command
 * that reads a store. Unknown flags are errors, so a typo never silently changes a report.
 */
record StoreArgs(StoreSpec store, boolean json, Map<String, String> flags) {

    static StoreArgs parse(String[] args, String usage, String... valueFlags) {
        List<String> known = new java.util.ArrayList<>(List.of(valueFlags));
        known.add("endpoint");
        Map<String, String> flags = new TreeMap<>();
        String uri = null;
        boolean json = false;
        for (int i = 0; i < args.length; i++) {
            String arg = args[i];
            if (arg.equals("--json")) {
                json = true;
            } else if (arg.startsWith("--") && known.contains(arg.substring(2))) {
                if (i + 1 >= args.length) {
                    throw new IllegalArgumentException(arg + " needs a value\n" + usage);
                }
                flags.put(arg.substring(2), args[++i]);
            } else if (!arg.startsWith("--") && uri == null) {
                uri = arg;
            } else {
                throw new IllegalArgumentException("unexpected argument '" + arg + "'\n" + usage);
            }
        }
        if (uri == null) {
            throw new IllegalArgumentException("STORE_URI is required\n" + usage);
        }
        StoreSpec spec = StoreSpec.parse(uri);
        if (flags.containsKey("endpoint")) {
            spec = spec.withEndpoint(flags.get("endpoint"));
        }
        return new StoreArgs(spec, json, flags);
    }
}
