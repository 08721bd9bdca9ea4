package dev.snapshots.store;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.UserDefinedFileAttributeView;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BiConsumer;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.apache.flink.annotation.PublicEvolving;

/**
 * A directory as an object store: the embedded default, and what tests use beside S3.
 *
 * <p>Staging writes a hidden temp file beside the target and fsyncs it; promoting is a hard link,
 * which is atomic and fails if the target exists, so it is create-if-absent exactly like {@code
 * If-None-Match: *}. Metadata travels as user extended attributes on the inode, so the link
 * publishes content and metadata in one step. Hidden files (names starting with '.') are never
 * listed.
 */
@PublicEvolving
public final class LocalObjectStore implements ObjectStore {
    private static final String STAGED_SUFFIX = ".staged";

    private static final Map<Path, Object> SWAP_LOCKS = new ConcurrentHashMap<>();

    private final Path root;

    public LocalObjectStore(Path root) {
        this.root = root.toAbsolutePath().normalize();
    }

    @Override
    public StagedObject stage(String key, Chunks content, Map<String, String> metadata)
            throws IOException {
        Path target = resolve(key);
        Files.createDirectories(target.getParent());
        Path temp =
                target.resolveSibling(
                        "." + target.getFileName() + "." + UUID.randomUUID() + STAGED_SUFFIX);
        try (FileChannel ch =
                FileChannel.open(temp, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
            content.writeTo(ch);
            ch.force(true);
        }
        UserDefinedFileAttributeView attrs =
                Files.getFileAttributeView(temp, UserDefinedFileAttributeView.class);
        if (attrs == null) {
            Files.deleteIfExists(temp);
            throw new StoreException(
                    StoreException.Kind.PERMANENT,
                    "the filesystem under "
                            + root
                            + " does not support user extended attributes, which hold object metadata",
                    null);
        }
        for (Map.Entry<String, String> e : metadata.entrySet()) {
            attrs.write(e.getKey(), StandardCharsets.UTF_8.encode(e.getValue()));
        }
        return new StagedObject(key, temp.getFileName().toString(), List.of());
    }

    @Override
    public boolean promote(StagedObject staged) throws IOException {
        Path target = resolve(staged.key());
        Path temp = target.resolveSibling(staged.handle());
        try {
            Files.createLink(target, temp);
        } catch (FileAlreadyExistsException e) {
            return false;
        } catch (NoSuchFileException e) {
            throw new StoreException(
                    StoreException.Kind.STAGED_GONE, "staged file " + temp + " is gone", e);
        }
        Files.deleteIfExists(temp);
        syncDirectory(target.getParent());
        return true;
    }

    @Override
    public void abort(StagedObject staged) throws IOException {
        Files.deleteIfExists(resolve(staged.key()).resolveSibling(staged.handle()));
    }

    @Override
    public boolean putIfAbsent(String key, byte[] content, Map<String, String> metadata)
            throws IOException {
        StagedObject staged = stage(key, Chunks.of(content), metadata);
        try {
            return promote(staged);
        } finally {
            abort(staged);
        }
    }

    /**
     * Swaps under an exclusive OS file lock (between processes; between the threads of this one a
     * monitor, since the OS lock is held per process), released by the OS if the process dies:
     * mutual exclusion without a staleness guess. The version is a hash of the content, so a swap
     * that expects a version nobody can have written fails like a failed {@code If-Match}.
     */
    @Override
    public Optional<String> compareAndSwap(
            String key, byte[] content, Optional<String> expectedVersion) throws IOException {
        Path target = resolve(key);
        Files.createDirectories(target.getParent());
        Path lockFile = target.resolveSibling("." + target.getFileName() + ".lock");
        synchronized (SWAP_LOCKS.computeIfAbsent(lockFile, f -> new Object())) {
            return swapLocked(target, lockFile, content, expectedVersion)
                    ? Optional.of(version(content))
                    : Optional.empty();
        }
    }

    private static boolean swapLocked(
            Path target, Path lockFile, byte[] content, Optional<String> expectedVersion)
            throws IOException {
        try (FileChannel lock =
                        FileChannel.open(
                                lockFile, StandardOpenOption.CREATE, StandardOpenOption.WRITE);
                FileLock held = lock.lock()) {
            Optional<String> current =
                    Files.exists(target)
                            ? Optional.of(version(Files.readAllBytes(target)))
                            : Optional.empty();
            if (!current.equals(expectedVersion)) {
                return false;
            }
            Path temp =
                    target.resolveSibling(
                            "." + target.getFileName() + "." + UUID.randomUUID() + STAGED_SUFFIX);
            Files.write(
                    temp,
                    content,
                    StandardOpenOption.CREATE_NEW,
                    StandardOpenOption.WRITE,
                    StandardOpenOption.SYNC);
            Files.move(
                    temp,
                    target,
                    StandardCopyOption.ATOMIC_MOVE,
                    StandardCopyOption.REPLACE_EXISTING);
            syncDirectory(target.getParent());
            return true;
        }
    }

    @Override
    public Optional<ObjectInfo> head(String key) throws IOException {
        Path path = resolve(key);
        try {
            UserDefinedFileAttributeView attrs =
                    Files.getFileAttributeView(path, UserDefinedFileAttributeView.class);
            Map<String, String> metadata = new TreeMap<>();
            for (String name : attrs.list()) {
                ByteBuffer buf = ByteBuffer.allocate(attrs.size(name));
                attrs.read(name, buf);
                metadata.put(
                        name, new String(buf.array(), 0, buf.position(), StandardCharsets.UTF_8));
            }
            return Optional.of(new ObjectInfo(key, Files.size(path), "", metadata));
        } catch (NoSuchFileException e) {
            return Optional.empty();
        }
    }

    @Override
    public void delete(String key) throws IOException {
        Files.deleteIfExists(resolve(key));
    }

    @Override
    public Optional<VersionedContent> get(String key) throws IOException {
        try {
            byte[] content = Files.readAllBytes(resolve(key));
            return Optional.of(new VersionedContent(content, version(content)));
        } catch (NoSuchFileException e) {
            return Optional.empty();
        }
    }

    @Override
    public void list(String prefix, Consumer<ObjectInfo> consumer) throws IOException {
        Map<String, Long> published = new TreeMap<>();
        walk(
                prefix,
                (file, attrs) -> {
                    if (!file.getFileName().toString().startsWith(".")) {
                        published.put(key(file), attrs.size());
                    }
                });
        published.forEach(
                (key, size) -> {
                    if (key.startsWith(prefix)) {
                        consumer.accept(new ObjectInfo(key, size, "", Map.of()));
                    }
                });
    }

    @Override
    public void listStaged(String prefix, Consumer<StagedInfo> consumer) throws IOException {
        walk(
                prefix,
                (file, attrs) -> {
                    String name = file.getFileName().toString();
                    if (name.endsWith(STAGED_SUFFIX)) {
                        // ".{target name}.{uuid}.staged" beside its target
                        String key =
                                key(
                                        file.resolveSibling(
                                                name.substring(
                                                        1,
                                                        name.length()
                                                                - STAGED_SUFFIX.length()
                                                                - 37)));
                        if (key.startsWith(prefix)) {
                            consumer.accept(
                                    new StagedInfo(
                                            key, name, attrs.lastModifiedTime().toInstant()));
                        }
                    }
                });
    }

    @Override
    public void listDirectories(String prefix, Consumer<String> consumer) throws IOException {
        Path dir = prefix.isEmpty() ? root : resolve(prefix);
        if (!Files.isDirectory(dir)) {
            return;
        }
        try (Stream<Path> children = Files.list(dir)) {
            for (Path child : children.sorted().toList()) {
                if (Files.isDirectory(child) && !child.getFileName().toString().startsWith(".")) {
                    consumer.accept(key(child) + "/");
                }
            }
        }
    }

    private String key(Path file) {
        return root.relativize(file).toString().replace('\\', '/');
    }

    /**
     * Every regular file below the directory {@code prefix} names up to its last '/' (where every
     * key that starts with it lives: a date's listing need not walk the whole store); files that
     * vanish mid-walk (promoted temp files) are skipped.
     */
    private void walk(String prefix, BiConsumer<Path, BasicFileAttributes> visitor)
            throws IOException {
        int slash = prefix.lastIndexOf('/');
        Path from = slash < 0 ? root : root.resolve(prefix.substring(0, slash)).normalize();
        if (!from.startsWith(root) || !Files.isDirectory(from)) {
            return;
        }
        Files.walkFileTree(
                from,
                new SimpleFileVisitor<>() {
                    @Override
                    public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) {
                        if (attrs.isRegularFile()) {
                            visitor.accept(file, attrs);
                        }
                        return FileVisitResult.CONTINUE;
                    }

                    @Override
                    public FileVisitResult visitFileFailed(Path file, IOException e)
                            throws IOException {
                        if (e instanceof NoSuchFileException) {
                            return FileVisitResult.CONTINUE;
                        }
                        throw e;
                    }
                });
    }

    @Override
    public String describe() {
        return root.toUri().toString();
    }

    @Override
    public void close() {}

    private Path resolve(String key) throws StoreException {
        Path path = root.resolve(key).normalize();
        if (!path.startsWith(root) || path.equals(root)) {
            throw new StoreException(
                    StoreException.Kind.PERMANENT,
                    "key '" + key + "' escapes the store root " + root,
                    null);
        }
        return path;
    }

    private static void syncDirectory(Path dir) {
        // Makes the new directory entry durable; not every platform lets a directory be opened.
        try (FileChannel ch = FileChannel.open(dir, StandardOpenOption.READ)) {
            ch.force(true);
        } catch (IOException ignored) {
            // best effort
        }
    }

    static String version(byte[] content) {
        try {
            return HexFormat.of()
                    .formatHex(MessageDigest.getInstance("SHA-256").digest(content))
                    .substring(0, 32);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
