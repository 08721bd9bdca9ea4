package dev.snapshots.store;

import java.io.Serializable;
import java.net.URI;
import java.nio.file.Path;
import java.util.Objects;
import java.util.Optional;

/**
 * Where snapshots go, as a serializable value the sink carries to every task; the store itself
 * (clients, connections) is opened on the task.
 *
 * <ul>
 *   <li>{@code file:///var/snapshots}: the local filesystem (the embedded default)
 *   <li>{@code s3://bucket/prefix}: S3, credentials from the default chain; {@link #withEndpoint}
 *       for a local S3 server (path-style addressing is then used)
 * </ul>
 */
public final class StoreSpec implements Serializable {
    private static final long serialVersionUID = 1L;

    private final URI uri;
    private final String endpoint;
    private final String region;

    private StoreSpec(URI uri, String endpoint, String region) {
        this.uri = uri;
        this.endpoint = endpoint;
        this.region = region;
    }

    /** @throws IllegalArgumentException if the URI is neither {@code file:} nor {@code s3:} */
    public static StoreSpec parse(String uri) {
        Objects.requireNonNull(uri, "store URI");
        URI parsed;
        try {
            parsed = URI.create(uri);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("store URI '" + uri + "' is not a valid URI: " + e.getMessage(), e);
        }
        String scheme = Optional.ofNullable(parsed.getScheme()).orElse("");
        switch (scheme) {
            case "file":
                if (parsed.getPath() == null || parsed.getPath().isEmpty()) {
                    throw new IllegalArgumentException("store URI '" + uri + "' needs an absolute path, e.g. file:///tmp/snapshots");
                }
                break;
            case "s3":
                if (parsed.getHost() == null || parsed.getHost().isEmpty()) {
                    throw new IllegalArgumentException("store URI '" + uri + "' needs a bucket, e.g. s3://my-bucket/snapshots");
                }
                break;
            default:
                throw new IllegalArgumentException(
                        "store URI '" + uri + "' must start with file:// or s3:// (got scheme '" + scheme + "')");
        }
        return new StoreSpec(parsed, null, null);
    }

    public static StoreSpec local(Path dir) {
        return new StoreSpec(dir.toAbsolutePath().toUri(), null, null);
    }

    /** An S3-compatible endpoint such as {@code http://127.0.0.1:9000}; implies path-style access. */
    public StoreSpec withEndpoint(String endpoint) {
        requireS3("an endpoint");
        return new StoreSpec(uri, endpoint, region);
    }

    public StoreSpec withRegion(String region) {
        requireS3("a region");
        return new StoreSpec(uri, endpoint, region);
    }

    private void requireS3(String what) {
        if (!isS3()) {
            throw new IllegalArgumentException(what + " only applies to s3:// stores, not " + uri);
        }
    }

    public boolean isS3() {
        return "s3".equals(uri.getScheme());
    }

    public URI uri() {
        return uri;
    }

    public Optional<String> endpoint() {
        return Optional.ofNullable(endpoint);
    }

    public Optional<String> region() {
        return Optional.ofNullable(region);
    }

    /** The S3 bucket; only for s3:// stores. */
    String bucket() {
        return uri.getHost();
    }

    /** The key prefix under the bucket, empty or ending in '/'. */
    String prefix() {
        String path = Optional.ofNullable(uri.getPath()).orElse("").replaceAll("^/+", "");
        return path.isEmpty() || path.endsWith("/") ? path : path + "/";
    }

    public ObjectStore open() {
        return isS3() ? new S3ObjectStore(this) : new LocalObjectStore(Path.of(uri));
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof StoreSpec
                && uri.equals(((StoreSpec) o).uri)
                && Objects.equals(endpoint, ((StoreSpec) o).endpoint)
                && Objects.equals(region, ((StoreSpec) o).region);
    }

    @Override
    public int hashCode() {
        return Objects.hash(uri, endpoint, region);
    }

    @Override
    public String toString() {
        return uri + (endpoint == null ? "" : " via " + endpoint);
    }
}
