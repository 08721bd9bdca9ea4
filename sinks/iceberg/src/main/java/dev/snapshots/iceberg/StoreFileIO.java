package dev.snapshots.iceberg;

import dev.snapshots.sink.Backoff;
import dev.snapshots.store.ObjectStore;
import dev.snapshots.store.StoreSpec;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.io.UncheckedIOException;
import java.util.Map;
import java.util.TreeMap;
import org.apache.flink.annotation.Internal;
import org.apache.flink.metrics.SimpleCounter;
import org.apache.iceberg.exceptions.AlreadyExistsException;
import org.apache.iceberg.exceptions.NotFoundException;
import org.apache.iceberg.inmemory.InMemoryInputFile;
import org.apache.iceberg.io.FileIO;
import org.apache.iceberg.io.InputFile;
import org.apache.iceberg.io.OutputFile;
import org.apache.iceberg.io.PositionOutputStream;
import org.apache.iceberg.io.SeekableInputStream;

/**
 * Iceberg's file access through the sink's own store: the table's metadata is read and written with
 * the store's client, endpoint and credentials, so a {@code file://} store needs no Hadoop and an
 * {@code s3://} store no second configuration. Readers use their engine's own FileIO: the locations
 * are the store's plain URIs.
 *
 * <p>Metadata files are small (a table's JSON, manifest lists, manifests), so a file is read whole
 * and written from memory; a new file is created only where none is ({@link
 * ObjectStore#putIfAbsent}), as Iceberg's {@code create()} asks.
 */
@Internal
public final class StoreFileIO implements FileIO {
    private static final long serialVersionUID = 1L;

    /** The catalog property with the store's URI; {@code snapshots.store.<option>} its options. */
    static final String STORE = "snapshots.store";

    private StoreSpec spec;
    private transient ObjectStore store;
    private String root;

    /** For Iceberg's {@code io-impl}: configured by {@link #initialize}. */
    public StoreFileIO() {}

    @Override
    public void initialize(Map<String, String> properties) {
        String uri = properties.get(STORE);
        if (uri == null) {
            throw new IllegalArgumentException(
                    getClass().getName() + " needs the catalog property " + STORE);
        }
        StoreSpec parsed = StoreSpec.parse(uri);
        String prefix = STORE + ".";
        for (Map.Entry<String, String> e : properties.entrySet()) {
            if (e.getKey().startsWith(prefix)) {
                parsed = parsed.withOption(e.getKey().substring(prefix.length()), e.getValue());
            }
        }
        spec = parsed;
        root = rootOf(spec);
    }

    /** The store's URI as locations start with, without a trailing slash. */
    static String rootOf(StoreSpec spec) {
        String uri = spec.uri().toString();
        return uri.endsWith("/") ? uri.substring(0, uri.length() - 1) : uri;
    }

    /** The catalog properties that make a catalog's FileIO this store. */
    static Map<String, String> properties(StoreSpec spec) {
        Map<String, String> p = new TreeMap<>();
        p.put("io-impl", StoreFileIO.class.getName());
        p.put(STORE, spec.uri().toString());
        spec.endpoint().ifPresent(e -> p.put(STORE + "." + StoreSpec.ENDPOINT, e));
        spec.region().ifPresent(r -> p.put(STORE + "." + StoreSpec.REGION, r));
        return p;
    }

    /**
     * A store call, retried as the sink retries its own (throttling, 5xx, dropped connections): the
     * store's clients never retry by themselves, and Iceberg's retries of a whole commit are fewer
     * and shorter than an outage the sink rides out.
     */
    static <T> T retried(String what, Backoff.StoreCall<T> call) throws IOException {
        // Iceberg reads on its shared worker threads, which keep the context class loader of the
        // thread that started them: a Flink job's, closed once that job ends, where the store's
        // HTTP client looks up its logging. Its calls get this module's loader instead.
        Thread thread = Thread.currentThread();
        ClassLoader context = thread.getContextClassLoader();
        thread.setContextClassLoader(StoreFileIO.class.getClassLoader());
        try {
            // Counted in the log: Backoff logs each retry, and a FileIO has no metric group.
            return Backoff.DEFAULT.run(new SimpleCounter(), what, call);
        } catch (InterruptedException e) {
            thread.interrupt();
            throw new InterruptedIOException(what + " interrupted");
        } finally {
            thread.setContextClassLoader(context);
        }
    }

    private synchronized ObjectStore store() {
        if (store == null) {
            store = spec.open();
        }
        return store;
    }

    private String key(String location) {
        if (!location.startsWith(root + "/")) {
            throw new IllegalArgumentException(
                    location + " is outside the store " + root + " this table's files live in");
        }
        return location.substring(root.length() + 1);
    }

    @Override
    public InputFile newInputFile(String location) {
        return new StoreInputFile(location);
    }

    @Override
    public OutputFile newOutputFile(String location) {
        return new StoreOutputFile(location);
    }

    @Override
    public void deleteFile(String location) {
        try {
            retried(
                    "delete " + location,
                    () -> {
                        store().delete(key(location));
                        return null;
                    });
        } catch (IOException e) {
            throw new UncheckedIOException("could not delete " + location, e);
        }
    }

    @Override
    public Map<String, String> properties() {
        return properties(spec);
    }

    @Override
    public synchronized void close() {
        if (store != null) {
            store.close();
            store = null;
        }
    }

    /** Read whole on first use: metadata files are small. */
    private final class StoreInputFile implements InputFile {
        private final String location;
        private InMemoryInputFile content;

        StoreInputFile(String location) {
            this.location = location;
        }

        private InMemoryInputFile content() {
            if (content == null) {
                try {
                    byte[] bytes =
                            retried("read " + location, () -> store().get(key(location)))
                                    .orElseThrow(
                                            () -> new NotFoundException("no file at %s", location))
                                    .content();
                    content = new InMemoryInputFile(location, bytes);
                } catch (IOException e) {
                    throw new UncheckedIOException("could not read " + location, e);
                }
            }
            return content;
        }

        @Override
        public long getLength() {
            return content().getLength();
        }

        @Override
        public SeekableInputStream newStream() {
            return content().newStream();
        }

        @Override
        public String location() {
            return location;
        }

        @Override
        public boolean exists() {
            try {
                return retried("look for " + location, () -> store().head(key(location)))
                        .isPresent();
            } catch (IOException e) {
                throw new UncheckedIOException("could not look for " + location, e);
            }
        }
    }

    private final class StoreOutputFile implements OutputFile {
        private final String location;

        StoreOutputFile(String location) {
            this.location = location;
        }

        @Override
        public PositionOutputStream create() {
            return new Buffer(true);
        }

        @Override
        public PositionOutputStream createOrOverwrite() {
            return new Buffer(false);
        }

        @Override
        public String location() {
            return location;
        }

        @Override
        public InputFile toInputFile() {
            return newInputFile(location);
        }

        /** Collects the file, and stores it on close. */
        private final class Buffer extends PositionOutputStream {
            private final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
            private final boolean onlyIfAbsent;
            private boolean closed;

            Buffer(boolean onlyIfAbsent) {
                this.onlyIfAbsent = onlyIfAbsent;
            }

            @Override
            public long getPos() {
                return bytes.size();
            }

            @Override
            public void write(int b) {
                bytes.write(b);
            }

            @Override
            public void write(byte[] b, int off, int len) {
                bytes.write(b, off, len);
            }

            @Override
            public void close() throws IOException {
                if (closed) {
                    return;
                }
                closed = true;
                String key = key(location);
                byte[] content = bytes.toByteArray();
                if (onlyIfAbsent) {
                    // A retry after a write that landed unseen finds it there: Iceberg then
                    // writes its metadata under another name.
                    if (!retried(
                            "create " + location,
                            () -> store().putIfAbsent(key, content, Map.of()))) {
                        throw new AlreadyExistsException("%s already exists", location);
                    }
                } else if (retried(
                                "overwrite " + location,
                                () ->
                                        store().compareAndSwap(
                                                        key,
                                                        content,
                                                        store().head(key)
                                                                .map(
                                                                        ObjectStore.ObjectInfo
                                                                                ::version)))
                        .isEmpty()) {
                    throw new IOException(location + " changed while it was overwritten");
                }
            }
        }
    }
}
