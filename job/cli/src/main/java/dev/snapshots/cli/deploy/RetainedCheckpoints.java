package dev.snapshots.cli.deploy;

import dev.snapshots.store.ObjectStore;
import dev.snapshots.store.StoreSpec;
import java.io.ByteArrayInputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.flink.annotation.Internal;
import org.apache.flink.runtime.checkpoint.Checkpoints;
import org.apache.flink.runtime.checkpoint.OperatorState;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.runtime.checkpoint.metadata.CheckpointMetadata;
import org.apache.flink.runtime.state.KeyGroupsStateHandle;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.OperatorStateHandle;
import org.apache.flink.runtime.state.StreamStateHandle;
import org.apache.flink.runtime.state.filesystem.FileStateHandle;
import org.apache.flink.runtime.state.filesystem.RelativeFileStateHandle;
import org.apache.flink.util.FileUtils;

/**
 * What a job can resume from: the checkpoints and savepoints retained under every JobManager
 * incarnation's checkpoint directory, the check that one is whole, and the removal of those no one
 * will resume from again.
 *
 * <p>Each JobManager task writes under a directory of its own, {@code <base>/jm-<incarnation>/<job
 * id>/} (the image's entrypoint sets it): two JobManagers at once (a task replaced while the old
 * one still stops) never write the same {@code chk-N}, and neither's subsumption deletes the
 * other's. A JobManager still stopping may be deleting the checkpoint just found, so one counts
 * only if its metadata loads and every state file it names is there; otherwise the next older one
 * is taken. One that vanishes while it is read is passed over, never a crash.
 *
 * <p>Every incarnation keeps its last checkpoints (they are retained on cancellation, and Flink
 * never deletes what a job resumed from in its default NO_CLAIM mode), so {@link #prune} removes
 * those of the incarnations before the one a job resumed from, once the job has a checkpoint of its
 * own. Listings read only the job's own directories, {@code <base>/<incarnation>/<job id>/}.
 */
@Internal
final class RetainedCheckpoints {
    /** A checkpoint or savepoint: its directory and its checkpoint id. */
    record Retained(String path, long checkpointId) {}

    /**
     * What {@link #prune} removed: the incarnations whose checkpoints went, and how many objects.
     */
    record Pruned(List<String> incarnations, int objects) {}

    private static final Pattern INCARNATION = Pattern.compile("jm-[A-Za-z0-9_-]+");

    /** A checkpoint's directory, named by Flink after its id: {@code chk-<id>/}. */
    private static final Pattern CHECKPOINT = Pattern.compile("chk-(\\d+)/.*");

    private static final String SAVEPOINTS = "savepoints/";

    private RetainedCheckpoints() {}

    /**
     * Where every incarnation's checkpoints live: the parent of this JobManager's checkpoint
     * directory when that is an incarnation's ({@code .../jm-...}), else the directory itself.
     */
    static String searchRoot(String checkpointDirectory) {
        String dir = checkpointDirectory.replaceAll("/+$", "");
        String last = dir.substring(dir.lastIndexOf('/') + 1);
        return INCARNATION.matcher(last).matches() ? dir.substring(0, dir.lastIndexOf('/')) : dir;
    }

    /**
     * The incarnation a checkpoint directory belongs to ({@code jm-...}), if it lies in one under
     * {@code rootUri}.
     */
    static Optional<String> incarnation(String rootUri, String directory) {
        String root = rootUri.replaceAll("/+$", "") + "/";
        if (!directory.startsWith(root)) {
            return Optional.empty();
        }
        String first = directory.substring(root.length()).split("/", 2)[0];
        return INCARNATION.matcher(first).matches() ? Optional.of(first) : Optional.empty();
    }

    /**
     * The newest whole checkpoint or savepoint of {@code jobId} under {@code root}; empty if the
     * job has none.
     *
     * @throws IOException if it has some but none is whole: resuming from the start instead would
     *     silently recompute the whole stream, so an operator decides (naming a savepoint with
     *     --from-savepoint, or moving the broken ones away)
     */
    static Optional<Retained> newestWhole(StoreSpec root, String jobId, ClassLoader classLoader)
            throws IOException {
        try (ObjectStore store = root.open()) {
            return newestWhole(store, root.uri().toString(), jobId, classLoader);
        }
    }

    /** As above, in a store already open at {@code rootUri}. */
    static Optional<Retained> newestWhole(
            ObjectStore store, String rootUri, String jobId, ClassLoader classLoader)
            throws IOException {
        rootUri = rootUri.replaceAll("/+$", "");
        List<Candidate> candidates = new ArrayList<>();
        for (String prefix : jobDirectories(store, jobId)) {
            List<String> metadata = new ArrayList<>();
            store.list(
                    prefix,
                    o -> {
                        if (o.key().endsWith("/_metadata")) {
                            metadata.add(o.key());
                        }
                    });
            for (String key : metadata) {
                Optional<ObjectStore.VersionedContent> content = store.get(key);
                if (content.isPresent()) { // else subsumed since the listing
                    candidates.add(new Candidate(key, content.get().content()));
                }
            }
        }
        candidates.sort(Comparator.comparingLong(Candidate::checkpointId).reversed());
        String newestDefect = null;
        for (Candidate c : candidates) {
            String dir = c.key().substring(0, c.key().length() - "/_metadata".length());
            Optional<String> defect = defect(store, rootUri, dir, c.bytes(), classLoader);
            if (defect.isEmpty()) {
                return Optional.of(new Retained(rootUri + "/" + dir, c.checkpointId()));
            }
            newestDefect = newestDefect != null ? newestDefect : dir + ": " + defect.get();
        }
        if (newestDefect != null) {
            throw new IOException(
                    "job "
                            + jobId
                            + " has "
                            + candidates.size()
                            + " retained checkpoints or savepoints under "
                            + rootUri
                            + " and none is whole; the newest, "
                            + newestDefect);
        }
        return Optional.empty();
    }

    /**
     * Removes the checkpoints of {@code jobId} that no JobManager will resume from again: those of
     * every incarnation whose checkpoints are all older than {@code resumedFrom}, the checkpoint
     * the job runs on from. Call it once the job has completed a checkpoint of its own: it then no
     * longer needs the one it resumed from either (its first checkpoint after a NO_CLAIM restore is
     * a full one), but that one's incarnation is kept all the same, with {@code own}: its
     * JobManager may still be running, and may still resume from it. So is every incarnation with a
     * checkpoint at or after {@code resumedFrom} (a JobManager that still runs the job), and one
     * with no checkpoint (a JobManager still starting). Savepoints are never removed: an operator
     * took them.
     *
     * <p>Each checkpoint's {@code _metadata} goes first: one that a stop midway leaves behind has
     * no metadata, so it is never taken for a whole checkpoint, and the next prune removes it.
     */
    static Pruned prune(ObjectStore store, String jobId, long resumedFrom, Collection<String> keep)
            throws IOException {
        List<String> incarnations = new ArrayList<>();
        int objects = 0;
        for (String incarnation : incarnations(store)) {
            if (keep.contains(incarnation)) {
                continue;
            }
            String prefix = incarnation + "/" + jobId + "/";
            List<String> keys = new ArrayList<>();
            long newest = -1;
            for (String key : keys(store, prefix)) {
                String rest = key.substring(prefix.length());
                Matcher m = CHECKPOINT.matcher(rest);
                if (m.matches()) {
                    newest = Math.max(newest, Long.parseLong(m.group(1)));
                }
                if (!rest.startsWith(SAVEPOINTS)) {
                    keys.add(key);
                }
            }
            if (newest < 0 || newest >= resumedFrom) {
                continue;
            }
            keys.sort(Comparator.comparing((String k) -> !k.endsWith("/_metadata")));
            for (String key : keys) {
                store.delete(key);
            }
            incarnations.add(incarnation);
            objects += keys.size();
        }
        return new Pruned(incarnations, objects);
    }

    /**
     * Where the job's checkpoints can lie: {@code <job id>/} (a checkpoint directory without
     * incarnations) and {@code <incarnation>/<job id>/} for each incarnation.
     */
    private static List<String> jobDirectories(ObjectStore store, String jobId) throws IOException {
        List<String> prefixes = new ArrayList<>(List.of(jobId + "/"));
        for (String incarnation : incarnations(store)) {
            prefixes.add(incarnation + "/" + jobId + "/");
        }
        return prefixes;
    }

    /** The incarnations' directories at the root, without their slash. */
    private static List<String> incarnations(ObjectStore store) throws IOException {
        List<String> incarnations = new ArrayList<>();
        store.listDirectories(
                "",
                d -> {
                    String name = d.replaceAll("/+$", "");
                    if (INCARNATION.matcher(name).matches()) {
                        incarnations.add(name);
                    }
                });
        return incarnations;
    }

    private static List<String> keys(ObjectStore store, String prefix) throws IOException {
        List<String> keys = new ArrayList<>();
        store.list(prefix, o -> keys.add(o.key()));
        return keys;
    }

    private record Candidate(String key, byte[] bytes) {
        /**
         * Flink's metadata file starts with a magic number, a format version, then the checkpoint
         * id; -1 if it is not one.
         */
        long checkpointId() {
            try {
                DataInputStream in = new DataInputStream(new ByteArrayInputStream(bytes));
                return bytes.length >= 16 && in.readInt() == 0x4960672d && in.readInt() >= 0
                        ? in.readLong()
                        : -1;
            } catch (IOException e) {
                return -1;
            }
        }
    }

    /**
     * Why the checkpoint in {@code dir} cannot be resumed from (its metadata does not load, or a
     * state file it names is gone); empty if it is whole. Files outside the root cannot be checked
     * here and count as present.
     *
     * <p>Flink resolves a state file named relative to its checkpoint through its own FileSystem,
     * which has no S3 in this JVM: the metadata is loaded from a local copy, and relative files are
     * looked up in {@code dir}.
     */
    private static Optional<String> defect(
            ObjectStore store, String rootUri, String dir, byte[] bytes, ClassLoader classLoader) {
        URI root = URI.create(rootUri + "/");
        Path local = null;
        try {
            local = Files.createTempDirectory("checkpoint-metadata");
            Files.write(local.resolve("_metadata"), bytes);
            CheckpointMetadata metadata =
                    Checkpoints.loadCheckpointMetadata(
                            new DataInputStream(new ByteArrayInputStream(bytes)),
                            classLoader,
                            local.toUri().toString());
            for (FileStateHandle file : stateFiles(metadata)) {
                Optional<String> key =
                        file instanceof RelativeFileStateHandle relative
                                ? Optional.of(dir + "/" + relative.getRelativePath())
                                : keyUnder(root, file.getFilePath().toUri());
                if (key.isPresent() && store.head(key.get()).isEmpty()) {
                    return Optional.of("state file " + key.get() + " is gone");
                }
            }
            return Optional.empty();
        } catch (IOException | RuntimeException e) {
            return Optional.of("its metadata does not load: " + e);
        } finally {
            if (local != null) {
                FileUtils.deleteDirectoryQuietly(local.toFile());
            }
        }
    }

    /** The key of {@code file} in the store at {@code root}, if it lies there. */
    private static Optional<String> keyUnder(URI root, URI file) {
        boolean under =
                root.getScheme().equals(file.getScheme())
                        && Objects.equals(root.getHost(), file.getHost())
                        && file.getPath().startsWith(root.getPath());
        return under
                ? Optional.of(file.getPath().substring(root.getPath().length()))
                : Optional.empty();
    }

    /**
     * The files a checkpoint's state lives in; state small enough to sit inside the metadata names
     * none.
     */
    private static List<FileStateHandle> stateFiles(CheckpointMetadata metadata) {
        List<StreamStateHandle> handles = new ArrayList<>();
        for (OperatorState operator : metadata.getOperatorStates()) {
            if (operator.getCoordinatorState() != null) {
                handles.add(operator.getCoordinatorState());
            }
            for (OperatorSubtaskState subtask : operator.getStates()) {
                for (KeyedStateHandle keyed : subtask.getManagedKeyedState()) {
                    keyedDelegate(keyed).ifPresent(handles::add);
                }
                for (KeyedStateHandle keyed : subtask.getRawKeyedState()) {
                    keyedDelegate(keyed).ifPresent(handles::add);
                }
                for (OperatorStateHandle op : subtask.getManagedOperatorState()) {
                    handles.add(op.getDelegateStateHandle());
                }
                for (OperatorStateHandle op : subtask.getRawOperatorState()) {
                    handles.add(op.getDelegateStateHandle());
                }
            }
        }
        List<FileStateHandle> files = new ArrayList<>();
        for (StreamStateHandle h : handles) {
            if (h instanceof FileStateHandle file) {
                files.add(file);
            }
        }
        return files;
    }

    /**
     * A full snapshot's key groups sit in one stream; other kinds (incremental RocksDB) are not
     * used by this job.
     */
    private static Optional<StreamStateHandle> keyedDelegate(KeyedStateHandle keyed) {
        return keyed instanceof KeyGroupsStateHandle groups
                ? Optional.of(groups.getDelegateStateHandle())
                : Optional.empty();
    }
}
