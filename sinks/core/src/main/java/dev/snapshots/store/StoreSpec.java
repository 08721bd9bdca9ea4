package dev.snapshots.store;

import java.io.Serializable;
import java.net.URI;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.ServiceLoader;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.apache.flink.annotation.PublicEvolving;

/**
 * Where snapshots go, as a serializable value the sink carries to every task; the store itself
 * (clients, connections) is opened on the task, by the {@link ObjectStoreFactory} of the URI's
 * scheme found on the classpath:
 *
 * <ul>
 *   <li>{@code file:///var/snapshots}: the local filesystem (built in, the embedded default)
 *   <li>{@code s3://bucket/prefix}: S3 (module {@code snapshots-sink-s3}); options {@link
 *       #ENDPOINT} for a local S3 server (path-style addressing is then used) and {@link #REGION}
 * </ul>
 */
@PublicEvolving
public final class StoreSpec implements Serializable {
    private static final long serialVersionUID = 2L;

    /** A store's network endpoint, when not the provider's default: a local S3 server, say. */
    public static final String ENDPOINT = "endpoint";

    public static final String REGION = "region";

    private final URI uri;
    private final TreeMap<String, String> options;

    private StoreSpec(URI uri, TreeMap<String, String> options) {
        this.uri = uri;
        this.options = options;
    }

    /**
     * @throws IllegalArgumentException if no store on the classpath opens the URI's scheme, or the
     *     URI is not one it can use
     */
    public static StoreSpec parse(String uri) {
        Objects.requireNonNull(uri, "store URI");
        URI parsed;
        try {
            parsed = URI.create(uri);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(
                    "store URI '" + uri + "' is not a valid URI: " + e.getMessage(), e);
        }
        factory(parsed).validate(parsed);
        return new StoreSpec(parsed, new TreeMap<>());
    }

    public static StoreSpec local(Path dir) {
        return new StoreSpec(dir.toAbsolutePath().toUri(), new TreeMap<>());
    }

    /** See {@link #ENDPOINT}. */
    public StoreSpec withEndpoint(String endpoint) {
        return withOption(ENDPOINT, endpoint);
    }

    public StoreSpec withRegion(String region) {
        return withOption(REGION, region);
    }

    /**
     * @throws IllegalArgumentException if this URI's store does not understand {@code name}
     */
    public StoreSpec withOption(String name, String value) {
        Set<String> known = factory(uri).options();
        if (!known.contains(name)) {
            throw new IllegalArgumentException(
                    "a store option '"
                            + name
                            + "' does not apply to "
                            + uri.getScheme()
                            + ":// stores ("
                            + (known.isEmpty()
                                    ? "they take none"
                                    : "they take " + String.join(", ", new TreeSet<>(known)))
                            + "), as in "
                            + uri);
        }
        TreeMap<String, String> next = new TreeMap<>(options);
        next.put(name, Objects.requireNonNull(value, name));
        return new StoreSpec(uri, next);
    }

    public URI uri() {
        return uri;
    }

    public Optional<String> option(String name) {
        return Optional.ofNullable(options.get(name));
    }

    public Optional<String> endpoint() {
        return option(ENDPOINT);
    }

    public Optional<String> region() {
        return option(REGION);
    }

    public ObjectStore open() {
        return factory(uri).open(this);
    }

    private static ObjectStoreFactory factory(URI uri) {
        String scheme = Optional.ofNullable(uri.getScheme()).orElse("");
        List<String> schemes = new ArrayList<>();
        for (ObjectStoreFactory f :
                ServiceLoader.load(
                        ObjectStoreFactory.class, ObjectStoreFactory.class.getClassLoader())) {
            if (f.scheme().equals(scheme)) {
                return f;
            }
            schemes.add(f.scheme() + "://");
        }
        Collections.sort(schemes);
        throw new IllegalArgumentException(
                "store URI '"
                        + uri
                        + "' must start with "
                        + String.join(" or ", schemes)
                        + " (got scheme '"
                        + scheme
                        + "'; a store module on the classpath adds its scheme)");
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof StoreSpec
                && uri.equals(((StoreSpec) o).uri)
                && options.equals(((StoreSpec) o).options);
    }

    @Override
    public int hashCode() {
        return Objects.hash(uri, options);
    }

    @Override
    public String toString() {
        return uri + endpoint().map(e -> " via " + e).orElse("");
    }
}
