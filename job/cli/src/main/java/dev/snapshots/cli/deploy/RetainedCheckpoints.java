package dev.snapshots.cli.deploy;

import dev.snapshots.store.ObjectStore;
import dev.snapshots.store.StoreSpec;
import java.io.ByteArrayInputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.math.BigInteger;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.flink.annotation.Internal;
import org.apache.flink.runtime.checkpoint.Checkpoints;
import org.apache.flink.runtime.checkpoint.OperatorState;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.runtime.checkpoint.metadata.CheckpointMetadata;
import org.apache.flink.runtime.state.IncrementalRemoteKeyedStateHandle;
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
 * never deletes what a job resumed from in NO_CLAIM mode), so {@link #prune} removes those of the
 * other incarnations once the job has a checkpoint of its own. Listings read only the job's own
 * directories, {@code <base>/<incarnation>/<job id>/}.
 */
@Internal
final class RetainedCheckpoints {
    /** A checkpoint or savepoint: its directory and its checkpoint id. */
    record Retained(String path, long checkpointId) {}

    /**
     * What {@link #prune} removed: the incarnations whose checkpoints went, and how many objects.
     */
    record Pruned(List<String> incarnations, int objects) {}

    private static final Pattern PIECE = Pattern.compile("\\d+|\\D+");

    private static final Pattern INCARNATION = Pattern.compile("jm-[A-Za-z0-9_-]+");

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
        directory = asUri(directory);
        String root = asUri(rootUri) + "/";
        if (!directory.startsWith(root)) {
            return Optional.empty();
        }
        String first = directory.substring(root.length()).split("/", 2)[0];
        return INCARNATION.matcher(first).matches() ? Optional.of(first) : Optional.empty();
    }

    /**
     * A location as one form of URI, without a trailing slash: Flink writes a local path as {@code
     * file:/...}, a URI as {@code file:///...}.
     */
    private static String asUri(String location) {
        return location.replaceFirst("^file:/(?!/)", "file:///").replaceAll("/+$", "");
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
     * Removes the checkpoints of {@code jobId} that the job no longer needs, once the JobManager
     * that serves it has completed a checkpoint of its own: {@code own}, a {@code chk-N} directory
     * in that JobManager's incarnation, as its REST API reports the job's latest completed
     * checkpoint (never the one it restored).
     *
     * <p>What marks another incarnation as stopped is that fact, not quiet and not checkpoint ids:
     * the job runs here and checkpoints into this incarnation, so every incarnation started before
     * this one no longer serves it; a JobManager still stopping there is cancelling its copy
     * ({@code release}), and whatever it would restore from serves no one. One started after this
     * one (its name says when: the entrypoint names each by its start time, the local cluster
     * counts) is a successor taking the job over, and is kept. Ids are never compared across
     * incarnations: each is a lineage of its own, and two JobManagers that resumed from one
     * checkpoint number theirs alike.
     *
     * <p>What the job here still needs is read, not assumed: an incarnation whose files {@code own}
     * names is kept. Resumed with NO_CLAIM (as {@link FlinkRest} asks), its first checkpoint is a
     * full one and names only files of its own incarnation; under CLAIM or LEGACY an incremental
     * RocksDB checkpoint names the {@code shared/} files of the one it resumed from, which then
     * stays. A later checkpoint names no file of another incarnation that an earlier one did not,
     * so a later prune removes it once the job has let go of it. Savepoints are never removed: an
     * operator took them.
     *
     * <p>Each checkpoint's {@code _metadata} goes first: one that a stop midway leaves behind has
     * no metadata, so it is never taken for a whole checkpoint, and the next prune removes it.
     *
     * @throws IOException if {@code own} does not load: nothing is removed
     */
    static Pruned prune(
            ObjectStore store, String root, String jobId, String own, ClassLoader classLoader)
            throws IOException {
        String rootUri = root.replaceAll("/+$", "");
        String here =
                incarnation(rootUri, own)
                        .orElseThrow(
                                () ->
                                        new IOException(
                                                own
                                                        + " is not in an incarnation under "
                                                        + rootUri));
        Set<String> needed = new TreeSet<>(Set.of(here));
        String ownPath = asUri(own);
        String ownKey = ownPath.substring(ownPath.indexOf("/" + here + "/") + 1);
        byte[] metadata =
                store.get(ownKey + "/_metadata")
                        .orElseThrow(() -> new IOException(own + " has no _metadata"))
                        .content();
        for (String key : stateFileKeys(rootUri, ownKey, metadata, classLoader)) {
            String first = key.split("/", 2)[0];
            if (INCARNATION.matcher(first).matches()) {
                needed.add(first);
            }
        }
        List<String> incarnations = new ArrayList<>();
        int objects = 0;
        for (String incarnation : incarnations(store)) {
            if (needed.contains(incarnation) || STARTED.compare(incarnation, here) > 0) {
                continue;
            }
            String prefix = incarnation + "/" + jobId + "/";
            List<String> keys = new ArrayList<>();
            for (String key : keys(store, prefix)) {
                if (!key.substring(prefix.length()).startsWith(SAVEPOINTS)) {
                    keys.add(key);
                }
            }
            if (keys.isEmpty()) {
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
     * Incarnations in the order they started: by name, runs of digits compared as numbers ({@code
     * jm-9} before {@code jm-10}; {@code jm-20261204T211019Z-...} by its time).
     */
    static final Comparator<String> STARTED =
            (a, b) -> {
                Matcher x = PIECE.matcher(a);
                Matcher y = PIECE.matcher(b);
                while (x.find() && y.find()) {
                    String p = x.group();
                    String q = y.group();
                    int c =
                            Character.isDigit(p.charAt(0)) && Character.isDigit(q.charAt(0))
                                    ? new BigInteger(p).compareTo(new BigInteger(q))
                                    : p.compareTo(q);
                    if (c != 0) {
                        return c;
                    }
                }
                return a.compareTo(b);
            };

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
        List<String> keys;
        try {
            keys = stateFileKeys(rootUri, dir, bytes, classLoader);
        } catch (IOException | RuntimeException e) {
            return Optional.of("its metadata does not load: " + e);
        }
        try {
            for (String key : keys) {
                if (store.head(key).isEmpty()) {
                    return Optional.of("state file " + key + " is gone");
                }
            }
            return Optional.empty();
        } catch (IOException e) {
            return Optional.of("its state files could not be read: " + e);
        }
    }

    /**
     * The keys under {@code rootUri} of the state files that the checkpoint in {@code dir} (a key)
     * names, its metadata being {@code bytes}; files elsewhere are left out.
     */
    private static List<String> stateFileKeys(
            String rootUri, String dir, byte[] bytes, ClassLoader classLoader) throws IOException {
        URI root = URI.create(rootUri + "/");
        Path local = Files.createTempDirectory("checkpoint-metadata");
        try {
            Files.write(local.resolve("_metadata"), bytes);
            CheckpointMetadata metadata =
                    Checkpoints.loadCheckpointMetadata(
                            new DataInputStream(new ByteArrayInputStream(bytes)),
                            classLoader,
                            local.toUri().toString());
            List<String> keys = new ArrayList<>();
            for (FileStateHandle file : stateFiles(metadata)) {
                if (file instanceof RelativeFileStateHandle relative) {
                    keys.add(dir + "/" + relative.getRelativePath());
                } else {
                    keyUnder(root, file.getFilePath().toUri()).ifPresent(keys::add);
                }
            }
            return keys;
        } finally {
            FileUtils.deleteDirectoryQuietly(local.toFile());
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
                    handles.addAll(keyedFiles(keyed));
                }
                for (KeyedStateHandle keyed : subtask.getRawKeyedState()) {
                    handles.addAll(keyedFiles(keyed));
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
     * A full snapshot's key groups sit in one stream; an incremental RocksDB one names its SST
     * files, shared with earlier checkpoints (in {@code shared/}, possibly of the incarnation it
     * resumed from), its private files and its meta data.
     */
    private static List<StreamStateHandle> keyedFiles(KeyedStateHandle keyed) {
        if (keyed instanceof KeyGroupsStateHandle groups) {
            return List.of(groups.getDelegateStateHandle());
        }
        List<StreamStateHandle> files = new ArrayList<>();
        if (keyed instanceof IncrementalRemoteKeyedStateHandle incremental) {
            files.add(incremental.getMetaDataStateHandle());
            incremental.getSharedState().forEach(h -> files.add(h.getHandle()));
            incremental.getPrivateState().forEach(h -> files.add(h.getHandle()));
        }
        return files;
    }
}
