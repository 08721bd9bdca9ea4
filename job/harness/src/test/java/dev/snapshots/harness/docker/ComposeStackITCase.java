package dev.snapshots.harness.docker;

import static org.assertj.core.api.Assertions.assertThat;

import dev.snapshots.cli.deploy.FlinkRest;
import dev.snapshots.cli.deploy.JobLifecycle;
import dev.snapshots.harness.JobOutput;
import dev.snapshots.harness.chaos.Chaos;
import dev.snapshots.harness.cluster.Kinesalite;
import dev.snapshots.harness.testutils.ComposeStack;
import dev.snapshots.harness.testutils.DockerEngine;
import dev.snapshots.job.config.JobConfig;
import dev.snapshots.job.ingest.Event;
import dev.snapshots.key.PartKind;
import dev.snapshots.progress.CompletionPointer;
import dev.snapshots.store.ObjectStore;
import dev.snapshots.store.StoreSpec;
import java.io.IOException;
import java.math.BigDecimal;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.junit.jupiter.api.extension.ExtendWith;
import software.amazon.awssdk.services.kinesis.KinesisClient;
import software.amazon.awssdk.services.kinesis.model.GetRecordsResponse;
import software.amazon.awssdk.services.kinesis.model.Record;
import software.amazon.awssdk.services.kinesis.model.Shard;
import software.amazon.awssdk.services.kinesis.model.ShardIteratorType;

/**
 * docker-compose.yml for real, on a Docker engine of the test's own and the images a user without a
 * registry builds (deploy/local-images): the JobManager's entrypoint submits the job, which reads
 * the producer's stream from kinesalite and publishes to S3Proxy. A {@code docker stop} of the
 * JobManager's container releases the job before the JobManager stops, as ECS needs of a task it
 * stops, and the container exits with the JobManager's status.
 *
 * <p>The whole scenario (a second JobManager resuming from the checkpoint, a TaskManager container
 * killed and replaced, the output compared with the reference and audited) takes about 10 minutes
 * more and runs with {@code -Pdocker-compose-full}.
 */
@ExtendWith(DockerEngine.Extension.class)
class ComposeStackITCase {
    private static final Path ROOT =
            Path.of(System.getProperty("snapshots.root")).toAbsolutePath().normalize();
    private static final String JOB = JobLifecycle.jobId("telemetry", 1);
    private static final String STORE = "s3://snapshots/snapshots";

    /**
     * How a stopped JobManager container exits: 0, the stop having gone as designed (Flink's JVM
     * answers the entrypoint's SIGTERM, sent after release, with 128 + 15, which the entrypoint
     * reports as 0 when it was asked to stop).
     */
    private static final int JOBMANAGER_STOPPED = 0;

    @BeforeAll
    static void images(DockerEngine engine) throws Exception {
        engine.buildLocalImages();
    }

    @Test
    void dockerStopOfTheJobManagerReleasesTheJobBeforeItStops(DockerEngine engine)
            throws Exception {
        try (ComposeStack stack = ComposeStack.prepare(engine, ROOT, "snapshots-stop", List.of())) {
            up(engine, stack, new FlinkRest(ComposeStack.REST));
            stopJobManager(engine, stack);
            down(engine, stack);
        }
    }

    /**
     * With windows of a minute instead of five, so that several close within the test: the
     * JobManager stopped and another started, which resumes from the checkpoint; a TaskManager
     * killed and another started, the job recovering; then every window up to the completion
     * pointer equals the reference computed from what the stream holds, one object per part, and
     * the audit finds nothing.
     */
    @Test
    @EnabledIfSystemProperty(
            named = "snapshots.docker-compose.full",
            matches = "true",
            disabledReason = "about 10 minutes more: ./mvnw verify -Pdocker-compose-full")
    void theStackSurvivesADockerStopAndADockerKillWithTheReferenceOutput(DockerEngine engine)
            throws Exception {
        List<String> minuteWindows = List.of("--window", "1m");
        try (ComposeStack stack =
                        ComposeStack.prepare(engine, ROOT, "snapshots-full", minuteWindows);
                ObjectStore store = StoreSpec.parse(STORE).withEndpoint(ComposeStack.S3).open()) {
            FlinkRest rest = new FlinkRest(ComposeStack.REST);
            up(engine, stack, rest);
            awaitPointer(store, 0); // a window published before the JobManager stops

            long stopped = System.currentTimeMillis();
            stopJobManager(engine, stack);
            long started = System.nanoTime();
            stack.replace("jobmanager");
            awaitCheckpointedJob(rest);
            String resumed = stack.logs("jobmanager");
            assertThat(resumed)
                    .as("the new JobManager's submit")
                    .containsPattern(
                            "job "
                                    + JOB
                                    + " \\(telemetry v1\\) submitted, resuming from"
                                    + " s3://snapshots/flink/checkpoints/jm-[^/]+/"
                                    + JOB
                                    + "/chk-\\d+");
            figure(engine, "a new JobManager resumed the job", started);
            System.out.println("docker: " + line(resumed, "resuming from"));
            awaitPointer(store, stopped + 60_000);

            String victim = busyTaskManager(rest, stack);
            int restartsBefore = rest.restarts(JOB);
            long killed = System.currentTimeMillis();
            String container = stack.name(victim);
            System.out.printf(
                    "docker: docker kill %s (%s) printed: %s",
                    container, victim, engine.docker("kill", container));
            assertThat(stack.exitCode(container)).as("a SIGKILLed container").isEqualTo(137);
            started = System.nanoTime();
            stack.replace(victim);
            await(
                    "the job restarted and runs all its tasks",
                    Duration.ofMinutes(5),
                    () -> rest.restarts(JOB) > restartsBefore && rest.allTasksRunning(JOB));
            figure(engine, "the job recovered from the killed TaskManager", started);
            long pointer = awaitPointer(store, killed + 2 * 60_000);

            JobConfig config = JobConfig.parse(stack.jobArgs().toArray(new String[0]));
            List<Event> input = readStream(pointer);
            JobOutput expected =
                    JobOutput.expected(input, config.windowLength().toMillis(), config::bucketOf);
            JobOutput published = JobOutput.published(store, 1, pointer);
            List<String> violations = Chaos.violations(store, expected, published);
            System.out.printf(
                    "FIGURES docker-compose: %d events in %d windows before %s, %d parts"
                            + " expected, %d published in %d objects, dead letters %s,"
                            + " restarts %d, violations %d%n",
                    expected.goodEvents,
                    expected.parts.keySet().stream().map(p -> p.split("/")[0]).distinct().count(),
                    Instant.ofEpochMilli(pointer),
                    expected.parts.size(),
                    published.parts.size(),
                    published.objects.values().stream().mapToInt(Integer::intValue).sum(),
                    published.deadLetterReasons,
                    rest.restarts(JOB),
                    violations.size());
            assertThat(violations).isEmpty();
            assertThat(published.goodEvents).isEqualTo(expected.goodEvents);
            down(engine, stack);
        }
    }

    /** {@code docker-compose up}, then until the job runs, checkpointed, on loopback only. */
    private static void up(DockerEngine engine, ComposeStack stack, FlinkRest rest)
            throws Exception {
        long started = System.nanoTime();
        stack.up();
        figure(engine, "docker-compose up --build", started);
        awaitCheckpointedJob(rest);
        figure(engine, "the job running and checkpointed after up", started);
        assertThat(stack.logs("taskmanager-1"))
                .as("the image's warm-up plugin made the checkpoints' file system as it started")
                .contains("Made the file system of s3://snapshots/flink/checkpoints (");
        Map<String, List<String>> listeners = stack.listeners();
        System.out.println("docker: listening " + listeners);
        assertThat(listeners.keySet())
                .as("running services")
                .contains("s3proxy", "kinesis", "producer", "jobmanager", "taskmanager-1");
        assertThat(listeners.get("jobmanager")).as("the JobManager's listeners").isNotEmpty();
        listeners.forEach(
                (service, addresses) ->
                        assertThat(addresses)
                                .as("%s listens on loopback only", service)
                                .allMatch(ComposeStackITCase::loopback));
    }

    private static boolean loopback(String addressAndPort) {
        try {
            return InetAddress.getByName(
                            addressAndPort.substring(0, addressAndPort.lastIndexOf(':')))
                    .isLoopbackAddress();
        } catch (IOException e) {
            throw new IllegalArgumentException(addressAndPort, e);
        }
    }

    /** Until the entrypoint's submit has the job running and a checkpoint has completed. */
    private static void awaitCheckpointedJob(FlinkRest rest) throws Exception {
        await(
                "job " + JOB + " running, with a completed checkpoint",
                Duration.ofMinutes(6),
                () ->
                        "RUNNING".equals(rest.jobStates().get(JOB))
                                && rest.allTasksRunning(JOB)
                                && rest.latestCheckpointMillis(JOB) > 0);
    }

    /**
     * {@code docker stop} of the JobManager's container, as a user (or ECS) stops it: the
     * entrypoint releases the job, then stops the JobManager, and the container exits with its
     * status.
     */
    private static void stopJobManager(DockerEngine engine, ComposeStack stack) throws Exception {
        String container = stack.name("jobmanager");
        assertThat(engine.docker("inspect", "-f", "{{.Config.StopTimeout}}", container).strip())
                .as("seconds a plain docker stop waits before SIGKILL (stop_grace_period)")
                .isEqualTo("120");
        long started = System.nanoTime();
        String said = engine.docker("stop", container);
        figure(engine, "docker stop of the JobManager", started);
        int exit = stack.exitCode(container);
        String logs = stack.logs("jobmanager");
        System.out.printf(
                "docker: docker stop %s printed: %s; exit status %d; the entrypoint said: %s%n",
                container,
                said.strip(),
                exit,
                line(logs, "cancelled before this JobManager stops"));
        assertThat(logs)
                .as("release ran on SIGTERM")
                .contains(
                        "job "
                                + JOB
                                + " cancelled before this JobManager stops: CANCELED; its"
                                + " checkpoints stay");
        assertThat(exit)
                .as("the JobManager container's exit status; its log:%n%s", tail(logs))
                .isEqualTo(JOBMANAGER_STOPPED);
    }

    private static void down(DockerEngine engine, ComposeStack stack) throws Exception {
        long started = System.nanoTime();
        stack.down();
        figure(engine, "docker-compose down", started);
        assertThat(engine.containers()).as("containers left after docker-compose down").isEmpty();
    }

    /** The TaskManager service whose container runs tasks of the job: its RPC port says which. */
    private static String busyTaskManager(FlinkRest rest, ComposeStack stack) throws Exception {
        Map<String, List<String>> listeners = stack.listeners();
        for (JsonNode tm : rest.get("/taskmanagers").path("taskmanagers")) {
            if (tm.path("freeSlots").asInt() < tm.path("slotsNumber").asInt()) {
                Matcher port = Pattern.compile("@[^:/]+:(\\d+)/").matcher(tm.path("path").asText());
                assertThat(port.find()).as(tm.path("path").asText()).isTrue();
                for (Map.Entry<String, List<String>> e : listeners.entrySet()) {
                    if (e.getKey().startsWith("taskmanager")
                            && e.getValue().contains("127.0.0.1:" + port.group(1))) {
                        return e.getKey();
                    }
                }
            }
        }
        throw new AssertionError("no TaskManager container runs tasks: " + listeners);
    }

    /**
     * Waits until the completion pointer passes {@code millis}: every window ending before it is
     * published whole. Returns the pointer.
     */
    private static long awaitPointer(ObjectStore store, long millis) throws Exception {
        long[] pointer = {0};
        await(
                "the completion pointer passes " + Instant.ofEpochMilli(millis),
                Duration.ofMinutes(6),
                () -> {
                    pointer[0] =
                            CompletionPointer.read(store, PartKind.SNAPSHOT, "telemetry", 1)
                                    .orElse(0L);
                    return pointer[0] > millis;
                });
        return pointer[0];
    }

    /**
     * Every event the producer put into the stream with a time before {@code beforeMillis}, read
     * back from kinesalite and parsed here, apart from the job's parser.
     */
    private static List<Event> readStream(long beforeMillis) throws IOException {
        ObjectMapper json = new ObjectMapper();
        List<Event> events = new ArrayList<>();
        try (KinesisClient kinesis = Kinesalite.client(ComposeStack.KINESIS)) {
            for (Shard shard : kinesis.listShards(b -> b.streamName("telemetry")).shards()) {
                String iterator =
                        kinesis.getShardIterator(
                                        b ->
                                                b.streamName("telemetry")
                                                        .shardId(shard.shardId())
                                                        .shardIteratorType(
                                                                ShardIteratorType.TRIM_HORIZON))
                                .shardIterator();
                while (iterator != null) {
                    String from = iterator;
                    GetRecordsResponse batch = kinesis.getRecords(b -> b.shardIterator(from));
                    for (Record r : batch.records()) {
                        JsonNode e =
                                json.readTree(
                                        new String(r.data().asByteArray(), StandardCharsets.UTF_8));
                        long ts = e.path("ts").asLong();
                        if (ts < beforeMillis) {
                            events.add(
                                    new Event(
                                            e.path("device").asText(),
                                            ts,
                                            micros(e.path("value")),
                                            e.path("bytes").asLong(),
                                            micros(e.path("latency_ms")),
                                            "stream"));
                        }
                    }
                    Long behind = batch.millisBehindLatest();
                    boolean caughtUp = batch.records().isEmpty() && (behind == null || behind == 0);
                    iterator = caughtUp ? null : batch.nextShardIterator();
                }
            }
        }
        return events;
    }

    private static long micros(JsonNode number) {
        return new BigDecimal(number.asText()).movePointRight(6).longValueExact();
    }

    private static void figure(DockerEngine engine, String stage, long startedNanos) {
        Duration took = Duration.ofNanos(System.nanoTime() - startedNanos);
        engine.timings().put(stage, took);
        System.out.printf("docker: %s in %d s%n", stage, took.toSeconds());
    }

    private static void await(String what, Duration timeout, Callable<Boolean> condition)
            throws Exception {
        long deadline = System.nanoTime() + timeout.toNanos();
        Exception last = null;
        while (System.nanoTime() < deadline) {
            try {
                if (condition.call()) {
                    return;
                }
            } catch (IOException notYet) {
                last = notYet; // e.g. the JobManager's REST API still starting
            }
            Thread.sleep(1000);
        }
        throw new AssertionError(what + ": not within " + timeout, last);
    }

    private static String line(String text, String containing) {
        return text.lines()
                .filter(l -> l.contains(containing))
                .findFirst()
                .orElse("(none)")
                .strip();
    }

    private static String tail(String text) {
        List<String> lines = text.lines().toList();
        return String.join("\n", lines.subList(Math.max(0, lines.size() - 40), lines.size()));
    }
}
