package dev.snapshots.harness.testutils;

import dev.snapshots.job.SnapshotJob;
import dev.snapshots.job.config.JobConfig;
import dev.snapshots.key.ObjectKeys;
import dev.snapshots.store.StoreSpec;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.UserDefinedFileAttributeView;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;

/**
 * A directory store the job wrote, and the ways a store gets damaged that the audit must name: a
 * part rewritten, a fingerprint that lies, a stray copy, a part or a whole window or a manifest
 * deleted, divergence evidence, an object outside the key scheme, a part left staged. What the
 * audit's tests and the store page's browser tests do to a store, in one place.
 */
public final class StoreDamage {
    private final Path root;

    public StoreDamage(StoreSpec spec) {
        this.root = Path.of(spec.uri());
    }

    /**
     * Runs the job into {@code spec} in the test's Flink environment: 10 windows from
     * 2026-11-30T10:00Z, 200 events each over 40 keys, B = 4; {@code more} flags override.
     */
    public static JobConfig jobWrote(StoreSpec spec, String... more) throws Exception {
        List<String> args =
                new ArrayList<>(
                        List.of(
                                "--store",
                                spec.uri().toString(),
                                "--windows",
                                "10",
                                "--events-per-window",
                                "200",
                                "--keys",
                                "40",
                                "--checkpoint-interval",
                                "300ms"));
        args.addAll(List.of(more));
        JobConfig config = JobConfig.parse(args.toArray(new String[0]));
        SnapshotJob.start(StreamExecutionEnvironment.getExecutionEnvironment(), config)
                .getJobExecutionResult()
                .get();
        return config;
    }

    public Path root() {
        return root;
    }

    /** The Parquet parts of telemetry v=1, in key order. */
    public List<Path> parts() throws IOException {
        try (Stream<Path> files = Files.walk(root.resolve("telemetry/v=1"))) {
            return files.filter(p -> p.toString().endsWith(".parquet")).sorted().toList();
        }
    }

    /** The key a file of the store holds. */
    public String key(Path file) {
        return root.relativize(file).toString();
    }

    /** Another part's content in place of the part's, its metadata kept (the same inode). */
    public Path rewrite(Path part, Path withContentOf) throws IOException {
        Files.write(part, Files.readAllBytes(withContentOf));
        return part;
    }

    /** Metadata whose fingerprint no content has. */
    public Path lieAboutFingerprint(Path part) throws IOException {
        Files.getFileAttributeView(part, UserDefinedFileAttributeView.class)
                .write(
                        "fingerprint",
                        ByteBuffer.wrap("0".repeat(64).getBytes(StandardCharsets.UTF_8)));
        return part;
    }

    /**
     * A second object for the part's (window, bucket), as a writer with B = 8 would name it:
     * content and metadata copied, a pure stray copy. Returns the copy.
     */
    public Path strayCopy(Path part) throws IOException {
        Path stray = withKey(part, "-of-00008-0123456789abcdef");
        Files.copy(part, stray, StandardCopyOption.COPY_ATTRIBUTES);
        return stray;
    }

    public Path delete(Path part) throws IOException {
        Files.delete(part);
        return part;
    }

    /** The directory of a window beside a part's, e.g. "window=1030". */
    public Path window(Path part, String window) {
        return part.getParent().getParent().resolve(window);
    }

    /** Every object of a window, manifest included. Returns the window's directory. */
    public Path deleteWindow(Path window) throws IOException {
        try (Stream<Path> files = Files.list(window)) {
            for (Path p : files.toList()) {
                Files.delete(p);
            }
        }
        return window;
    }

    /** A window's manifest, deleted. Returns it. */
    public Path deleteManifest(Path window) throws IOException {
        Path manifest = window.resolve(ObjectKeys.MANIFEST_FILE);
        Files.delete(manifest);
        return manifest;
    }

    /** Evidence that another execution computed other content for the part. Returns it. */
    public Path divergenceEvidence(Path part) throws IOException {
        Path evidence =
                root.resolve(
                        ObjectKeys.DIVERGENCE_PREFIX + key(part) + "/" + "ab".repeat(32) + ".json");
        Files.createDirectories(evidence.getParent());
        Files.writeString(evidence, "{}");
        return evidence;
    }

    /** An object that is no part, manifest, pointer or evidence. */
    public Path outside(String key) throws IOException {
        Path file = root.resolve(key);
        Files.createDirectories(file.getParent());
        Files.writeString(file, "not a part");
        return file;
    }

    /**
     * A part staged {@code ago} and neither published nor aborted (a writer died between staging
     * and its checkpoint), as the local store stages: a hidden file beside the part's key.
     */
    public Path staged(Path part, Duration ago) throws IOException {
        Files.createDirectories(part.getParent());
        Path staged =
                part.resolveSibling(
                        "." + part.getFileName() + ".00000000-0000-0000-0000-000000000000.staged");
        Files.write(staged, new byte[] {1});
        Files.setLastModifiedTime(staged, FileTime.from(Instant.now().minus(ago)));
        return staged;
    }

    /** The part's key with another bucket count and digest: "-of-00008-0123456789abcdef". */
    public Path withKey(Path part, String bucketsAndDigest) {
        return part.resolveSibling(
                part.getFileName()
                        .toString()
                        .replaceAll("-of-(\\d{5})-[0-9a-f]{16}", bucketsAndDigest));
    }
}
