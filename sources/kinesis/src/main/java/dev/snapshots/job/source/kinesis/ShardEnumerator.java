package dev.snapshots.job.source.kinesis;

import dev.snapshots.job.source.SplitProgress;
import dev.snapshots.job.source.kinesis.ShardEnumeratorState.Shard;
import dev.snapshots.job.source.kinesis.ShardEnumeratorState.Status;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.apache.flink.api.connector.source.SourceEvent;
import org.apache.flink.api.connector.source.SplitEnumerator;
import org.apache.flink.api.connector.source.SplitEnumeratorContext;
import org.apache.flink.api.connector.source.SplitsAssignment;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import software.amazon.awssdk.services.kinesis.model.ListShardsResponse;

/**
 * Lists the stream's shards, gives each to a reader once all its parents have been read to their
 * end, with their progress, and tells the readers when a finished shard may stop holding its
 * watermark. Runs on the JobManager's coordinator thread; listing runs on its worker thread.
 */
final class ShardEnumerator implements SplitEnumerator<ShardSplit, ShardEnumeratorState> {
    private static final Logger LOG = LoggerFactory.getLogger(ShardEnumerator.class);

    private final SplitEnumeratorContext<ShardSplit> context;
    private final KinesisShardSource.Settings settings;
    private final LazyKinesisClient kinesis;
    private final Map<String, Shard> shards;
    private long streamCreatedMillis;
    private boolean listed;
    private String legacyLastSeen;

    /** Not checkpointed: the readers announce their shards again after a restore. */
    private final Map<String, Integer> holders = new HashMap<>();

    private final Set<String> idled = new HashSet<>();
    private final Map<Integer, Integer> assignedPerReader = new HashMap<>();
    private final Set<Integer> toldNoShards = new HashSet<>();

    /** A listing, with the stream's creation time once it is known. */
    private record Listing(long streamCreatedMillis, List<ListedShard> shards) {}

    private record ListedShard(String id, List<String> parents, boolean closed) {}

    ShardEnumerator(
            SplitEnumeratorContext<ShardSplit> context,
            KinesisShardSource.Settings settings,
            ShardEnumeratorState state) {
        this.context = context;
        this.settings = settings;
        this.kinesis = new LazyKinesisClient(settings, "enumerator");
        this.shards = new TreeMap<>(state.shards());
        this.streamCreatedMillis = state.streamCreatedMillis();
        this.listed = state.listed();
        this.legacyLastSeen = state.legacyLastSeen();
    }

    @Override
    public void start() {
        context.callAsync(this::list, this::discovered, 0, settings.discoveryInterval().toMillis());
    }

    private Listing list() {
        long created =
                streamCreatedMillis != Long.MIN_VALUE
                        ? streamCreatedMillis
                        : kinesis.get()
                                .describeStreamSummary(b -> b.streamARN(settings.streamArn()))
                                .streamDescriptionSummary()
                                .streamCreationTimestamp()
                                .toEpochMilli();
        List<ListedShard> out = new ArrayList<>();
        String next = null;
        do {
            String token = next;
            ListShardsResponse page =
                    kinesis.get()
                            .listShards(
                                    b -> {
                                        if (token == null) {
                                            b.streamARN(settings.streamArn());
                                        } else {
                                            b.nextToken(token);
                                        }
                                    });
            page.shards()
                    .forEach(
                            s ->
                                    out.add(
                                            new ListedShard(
                                                    s.shardId(),
                                                    Stream.of(
                                                                    s.parentShardId(),
                                                                    s.adjacentParentShardId())
                                                            .filter(p -> p != null)
                                                            .toList(),
                                                    s.sequenceNumberRange().endingSequenceNumber()
                                                            != null)));
            next = page.nextToken();
        } while (next != null);
        return new Listing(created, out);
    }

    private void discovered(Listing listing, Throwable error) {
        if (error != null) {
            LOG.warn(
                    "Could not list the shards of {}; trying again in {}",
                    settings.streamArn(),
                    settings.discoveryInterval(),
                    error);
            return;
        }
        streamCreatedMillis = listing.streamCreatedMillis();
        Set<String> present = new HashSet<>();
        for (ListedShard s : listing.shards()) {
            present.add(s.id());
            if (!shards.containsKey(s.id())) {
                shards.put(s.id(), firstSight(s));
            }
        }
        legacyLastSeen = null;
        listed = true;
        // A released shard that left the listing (past the stream's retention) is forgotten once
        // its children run.
        shards.values()
                .removeIf(
                        s ->
                                s.status() == Status.RELEASED
                                        && !present.contains(s.id())
                                        && childrenOf(s.id()).allMatch(Shard::started));
        settle();
    }

    /**
     * A shard seen for the first time: waiting for its parents, or, in the first listing of a
     * LATEST job, started now.
     */
    private Shard firstSight(ListedShard s) {
        if (legacyLastSeen != null && s.id().compareTo(legacyLastSeen) <= 0) {
            // The connector this source replaced assigned it before the restore, and kept no
            // progress of it. If a reader still reads it, its announcement says so; else it was
            // read and dropped.
            return new Shard(
                    s.id(), s.parents(), Status.RELEASED, null, SplitProgress.none(), true);
        }
        if (!listed && settings.initialPosition().equals("LATEST")) {
            return s.closed()
                    ? new Shard(s.id(), s.parents(), Status.RELEASED, null, root(), true)
                    : new Shard(
                            s.id(),
                            s.parents(),
                            Status.READY,
                            new ShardSplit(
                                    s.id(),
                                    ShardPosition.fromTimestamp(Instant.now()),
                                    root(),
                                    false),
                            null,
                            false);
        }
        return new Shard(s.id(), s.parents(), Status.WAITING, null, null, false);
    }

    private SplitProgress root() {
        return new SplitProgress(Long.MIN_VALUE, streamCreatedMillis);
    }

    /**
     * Moves every shard on as far as what is known allows, and tells readers what follows from it.
     */
    private void settle() {
        for (Shard s : List.copyOf(shards.values())) {
            if (s.status() == Status.WAITING) {
                List<Shard> parents =
                        s.parents().stream().map(shards::get).filter(p -> p != null).toList();
                if (parents.stream()
                        .allMatch(
                                p ->
                                        p.status() == Status.FINISHED
                                                || p.status() == Status.RELEASED)) {
                    SplitProgress progress =
                            parents.isEmpty()
                                    ? root()
                                    : SplitProgress.inherit(
                                            parents.stream().map(Shard::progress).toList());
                    shards.put(
                            s.id(),
                            new Shard(
                                    s.id(),
                                    s.parents(),
                                    Status.READY,
                                    new ShardSplit(
                                            s.id(), settings.startOfShard(), progress, false),
                                    null,
                                    false));
                }
            }
        }
        assign();
        for (Shard s : List.copyOf(shards.values())) {
            Integer holder = holders.get(s.id());
            if (s.status() == Status.FINISHED && holder != null) {
                List<Shard> children = childrenOf(s.id()).toList();
                if (!children.isEmpty() && children.stream().allMatch(Shard::started)) {
                    shards.put(s.id(), s.with(Status.RELEASED));
                    send(holder, new ShardEvents.Release(Set.of(s.id())));
                } else if (!idled.contains(s.id())
                        && children.stream()
                                .anyMatch(c -> !c.started() && coParentStillRead(c, s.id()))) {
                    idled.add(s.id());
                    send(holder, new ShardEvents.Idle(Set.of(s.id())));
                }
            }
        }
    }

    /**
     * Whether another parent of this child is still being read: it then holds the watermark the
     * child needs.
     */
    private boolean coParentStillRead(Shard child, String parent) {
        return child.parents().stream()
                .filter(p -> !p.equals(parent))
                .map(shards::get)
                .anyMatch(
                        p ->
                                p != null
                                        && p.status() != Status.FINISHED
                                        && p.status() != Status.RELEASED);
    }

    private Stream<Shard> childrenOf(String id) {
        return shards.values().stream().filter(c -> c.parents().contains(id));
    }

    /**
     * Hands out the ready shards, each reader's in one event so that all its new shards hold its
     * watermark before any of them moves it. A reader's watermark never moves back, so a shard must
     * not join a reader that is already past where the shard starts: a child goes to the reader
     * that holds its (last) parent, which that parent keeps at or behind the child's start. Shards
     * without a holding parent (the first ones) go to the reader with the fewest shards.
     */
    private void assign() {
        Set<Integer> readers = context.registeredReaders().keySet();
        if (readers.size() < context.currentParallelism()) {
            return; // spread the shards over every reader, not over the first to register
        }
        List<Shard> ready =
                new ArrayList<>(
                        shards.values().stream().filter(s -> s.status() == Status.READY).toList());
        if (settings.assignmentSeed() != 0) {
            Collections.shuffle(ready, new Random(settings.assignmentSeed()));
        }
        Map<Integer, List<ShardSplit>> assignment = new TreeMap<>();
        for (Shard s : ready) {
            List<Shard> finishedParents =
                    s.parents().stream()
                            .map(shards::get)
                            .filter(p -> p != null && p.status() == Status.FINISHED)
                            .toList();
            Integer reader =
                    finishedParents.stream()
                            .filter(p -> !idled.contains(p.id()))
                            .map(p -> holders.get(p.id()))
                            .filter(h -> h != null)
                            .findFirst()
                            .orElse(null);
            if (reader == null && !finishedParents.isEmpty()) {
                continue; // restored, and the parent's reader has not announced it again yet
            }
            if (reader == null) {
                reader =
                        readers.stream()
                                .min(
                                        Comparator.<Integer>comparingInt(
                                                        r -> assignedPerReader.getOrDefault(r, 0))
                                                .thenComparingInt(r -> r))
                                .orElseThrow();
            }
            assignment.computeIfAbsent(reader, r -> new ArrayList<>()).add(s.split());
            assignedPerReader.merge(reader, 1, Integer::sum);
            shards.put(s.id(), new Shard(s.id(), s.parents(), Status.ASSIGNED, null, null, false));
            LOG.info(
                    "Assigned {} to reader {} from {} ({})",
                    s.id(),
                    reader,
                    s.split().position(),
                    s.split().progress());
        }
        if (!assignment.isEmpty()) {
            context.assignSplits(new SplitsAssignment<>(assignment));
        }
        if (listed && shards.values().stream().noneMatch(s -> s.status() == Status.READY)) {
            readers.stream()
                    .filter(r -> !assignedPerReader.containsKey(r) && toldNoShards.add(r))
                    .forEach(r -> send(r, new ShardEvents.NoShards()));
        }
    }

    @Override
    public void handleSourceEvent(int subtask, SourceEvent event) {
        if (event instanceof ShardEvents.Started started) {
            Shard s = shards.get(started.shardId());
            boolean legacy =
                    s != null
                            && s.status() == Status.RELEASED
                            && s.progress().equals(SplitProgress.none());
            if (s != null && (s.status() == Status.ASSIGNED || legacy)) {
                shards.put(
                        s.id(), new Shard(s.id(), s.parents(), Status.ASSIGNED, null, null, true));
            }
        } else if (event instanceof ShardEvents.Finished finished) {
            Shard s = shards.get(finished.shardId());
            if (s != null) {
                holders.put(s.id(), subtask);
                idled.remove(s.id());
                if (s.status() == Status.RELEASED) {
                    send(subtask, new ShardEvents.Release(Set.of(s.id())));
                } else {
                    LOG.info(
                            "{} was read to its end; its children continue from {}",
                            s.id(),
                            finished.progress());
                    shards.put(
                            s.id(),
                            new Shard(
                                    s.id(),
                                    s.parents(),
                                    Status.FINISHED,
                                    null,
                                    finished.progress(),
                                    true));
                }
            }
        }
        settle();
    }

    private void send(int subtask, SourceEvent event) {
        if (context.registeredReaders().containsKey(subtask)) {
            context.sendEventToSourceReader(subtask, event);
        }
    }

    @Override
    public void addSplitsBack(List<ShardSplit> splits, int subtask) {
        // Assigned since the last checkpoint to a reader that failed: assign them again as they
        // were.
        for (ShardSplit split : splits) {
            Shard s = shards.get(split.splitId());
            List<String> parents = s == null ? List.of() : s.parents();
            shards.put(
                    split.splitId(),
                    new Shard(split.splitId(), parents, Status.READY, split, null, false));
        }
        assignedPerReader.remove(subtask);
    }

    @Override
    public void addReader(int subtask) {
        toldNoShards.remove(subtask); // a restarted reader is told again
        settle();
    }

    @Override
    public void handleSplitRequest(int subtask, String host) {}

    @Override
    public ShardEnumeratorState snapshotState(long checkpointId) {
        return new ShardEnumeratorState(
                streamCreatedMillis, listed, legacyLastSeen, new TreeMap<>(shards));
    }

    @Override
    public void close() {
        kinesis.close();
    }
}
