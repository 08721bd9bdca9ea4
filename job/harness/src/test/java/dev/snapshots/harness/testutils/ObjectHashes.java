package dev.snapshots.harness.testutils;

import dev.snapshots.store.ObjectStore;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/** SHA-256 of every object under a prefix, by key: what "untouched, byte for byte" compares. */
public final class ObjectHashes {
    private ObjectHashes() {}

    public static Map<String, String> of(ObjectStore store, String prefix) throws Exception {
        List<String> keys = new ArrayList<>();
        store.list(prefix, o -> keys.add(o.key()));
        Map<String, String> out = new TreeMap<>();
        for (String key : keys) {
            out.put(
                    key,
                    HexFormat.of()
                            .formatHex(
                                    MessageDigest.getInstance("SHA-256")
                                            .digest(store.get(key).orElseThrow().content())));
        }
        return out;
    }
}
