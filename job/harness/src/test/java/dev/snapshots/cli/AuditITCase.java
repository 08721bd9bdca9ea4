package dev.snapshots.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.snapshots.harness.JobOutput;
import dev.snapshots.harness.Snapshots;
import dev.snapshots.harness.chaos.Chaos;
import dev.snapshots.harness.testutils.StoreDamage;
import dev.snapshots.job.config.JobConfig;
import dev.snapshots.key.ObjectKeys;
import dev.snapshots.store.ObjectStore;
import dev.snapshots.store.StoreSpec;
import dev.snapshots.testkit.FaultProxy;
import dev.snapshots.testkit.S3ProxyServer;
import dev.snapshots.testkit.StoreKind;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.lang.reflect.Proxy;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.UUID;
import java.util.stream.Stream;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The audit can fail: a store the job wrote is clean, and the same store deliberately corrupted (a
 * part rewritten, a fingerprint that lies, a stray copy, a part deleted, a window deleted whole, a
 * manifest deleted, evidence of a divergence, an object outside the key scheme, a part left staged)
 * gets every problem named, by the audit and by the chaos harness's verifier; an acknowledged
 * finding stops failing it; {@code --since} looks at recent windows only.
 */
class AuditITCase {
    @RegisterExtension
    static final MiniClusterExtension CLUSTER =
            new MiniClusterExtension(
                    new MiniClusterResourceConfiguration.Builder()
                            .setNumberTaskManagers(1)
                            .setNumberSlotsPerTaskManager(4)
                            .build());

    @Test
    void aCleanStorePassesAndEveryKindOfCorruptionIsNamed() throws Exception {
        StoreSpec spec = StoreKind.FILESYSTEM.fresh();
        StoreDamage damage = new StoreDamage(spec);
        Path root = damage.root();
        JobConfig config = StoreDamage.jobWrote(spec);

        // A store written by an earlier release may hold a pointer lock it left behind: not a
        // finding.
        Files.writeString(
                root.resolve("telemetry/v=1/" + ObjectKeys.lockKey(ObjectKeys.PROGRESS_FILE)),
                "{}");
        Result clean = audit(spec);
        assertThat(clean.code).as(clean.out).isZero();
        assertThat(clean.out).contains("clean:");

        // S3Proxy's file backend lists an in-flight PUT's temporary file (KEY-UUID) until the write
        // lands: gone by the time the gate confirms it, it is not a finding.
        Path inFlight =
                root.resolve("telemetry/v=1/" + ObjectKeys.PROGRESS_FILE + "-" + UUID.randomUUID());
        Files.writeString(inFlight, "{}");
        try (ObjectStore s = spec.open()) {
            ObjectStore landsAfterListing =
                    (ObjectStore)
                            Proxy.newProxyInstance(
                                    getClass().getClassLoader(),
                                    new Class<?>[] {ObjectStore.class},
                                    (proxy, method, args) -> {
                                        Object result = method.invoke(s, args);
                                        if (method.getName().equals("list")) {
                                            Files.deleteIfExists(inFlight);
                                        }
                                        return result;
                                    });
            assertThat(Audit.findings(landsAfterListing, Optional.empty())).isEmpty();
        }

        List<Path> parts = damage.parts();
        Path rewritten = damage.rewrite(parts.get(0), parts.get(3));
        Path liar = damage.lieAboutFingerprint(parts.get(1));
        Path duplicated = parts.get(2);
        Path stray = damage.strayCopy(duplicated);
        Path deleted = damage.delete(parts.get(6));
        Path deletedWindow = damage.deleteWindow(damage.window(parts.get(0), "window=1030"));
        Path lostManifest = damage.deleteManifest(damage.window(parts.get(0), "window=1040"));
        Path evidence = damage.divergenceEvidence(parts.get(4));
        damage.outside("telemetry/v=1/notes.txt");
        // Staged days ago and never published: at risk. Staged again beside a part published since:
        // garbage.
        Path unpublished = damage.withKey(parts.get(5), "-of-$1-fedcba9876543210");
        for (Path part : List.of(unpublished, parts.get(5))) {
            damage.staged(part, Duration.ofDays(3));
        }

        Result corrupt = audit(spec);

        assertThat(corrupt.code).as(corrupt.out).isEqualTo(1);
        assertThat(corrupt.out)
                .contains("fingerprint-mismatch", key(root, rewritten))
                .contains("replaced-part", key(root, rewritten))
                .contains(key(root, liar))
                .contains("duplicate-part", key(root, stray))
                .contains(
                        "extra-part",
                        "bucket " + bucket(root, stray) + " of 8 in a window of 4 buckets")
                .contains("missing-part", key(root, deleted))
                .contains(
                        "missing-manifest",
                        key(root, deletedWindow.resolve(ObjectKeys.MANIFEST_FILE)),
                        "the whole window was removed")
                .contains("missing-manifest", key(root, lostManifest))
                .contains("divergence", key(root, evidence))
                .contains("outside-key-scheme", "telemetry/v=1/notes.txt")
                .contains("stale-staging", key(root, unpublished));
        assertThat(corrupt.out.lines().filter(l -> l.contains("stale-staging"))).hasSize(1);
        assertThat(corrupt.out.lines().filter(l -> l.contains("fingerprint-mismatch"))).hasSize(2);

        // The chaos harness's verifier, over the same store, names each problem too.
        JobOutput expected = JobOutput.expected(config);
        List<String> violations;
        try (ObjectStore s = spec.open()) {
            violations = Chaos.violations(s, expected, JobOutput.published(s, 1, Long.MAX_VALUE));
        }
        assertThat(violations)
                .as("verifier")
                .anySatisfy(v -> assertThat(v).contains(part(root, rewritten) + " rows differ"))
                .anySatisfy(
                        v ->
                                assertThat(v)
                                        .startsWith(
                                                "audit fingerprint-mismatch: " + key(root, liar)))
                .anySatisfy(
                        v ->
                                assertThat(v)
                                        .contains(part(root, duplicated) + " is held by 2 objects"))
                .anySatisfy(v -> assertThat(v).contains("2026-11-30T10:30:00Z bucket 0 is missing"))
                .anySatisfy(v -> assertThat(v).startsWith("audit divergence: "))
                .noneSatisfy(
                        v ->
                                assertThat(v)
                                        .contains(
                                                part(root, liar)
                                                        + " rows differ")); // its content is intact

        Result json = audit(spec, "--json");
        assertThat(json.code).isEqualTo(1);
        @SuppressWarnings("unchecked")
        List<Map<String, Object>> findings =
                (List<Map<String, Object>>)
                        new ObjectMapper().readValue(json.out, TreeMap.class).get("findings");
        int counted = Integer.parseInt(corrupt.out.replaceAll("(?s).*\n(\\d+) findings.*", "$1"));
        assertThat(findings).as("the JSON report has the table's findings").hasSize(counted);

        // An examined divergence is acknowledged: recorded in the store, and no longer counted.
        String divergence =
                findings.stream()
                        .filter(f -> f.get("kind").equals("divergence"))
                        .findFirst()
                        .orElseThrow()
                        .get("id")
                        .toString();
        assertThat(
                        audit(
                                        spec,
                                        "--acknowledge",
                                        divergence,
                                        "--by",
                                        "ops@example.com",
                                        "--reason",
                                        "replayed input, checked")
                                .code)
                .isZero();
        Result afterAcknowledging = audit(spec);
        assertThat(afterAcknowledging.out)
                .contains("1 acknowledged finding")
                .doesNotContain(key(root, evidence));
        assertThat(Files.readString(root.resolve("_audit/acknowledged/" + divergence + ".json")))
                .contains("ops@example.com", "replayed input");

        // Only windows from a day after the data on: none of the window findings; the store-wide
        // ones stay.
        Result recent = audit(spec, "--since", "2026-12-01");
        assertThat(recent.out)
                .doesNotContain(
                        "missing-part", "replaced-part", "missing-manifest", "outside-key-scheme")
                .contains("stale-staging");

        Result unreachable =
                audit(StoreSpec.parse("s3://nowhere/x").withEndpoint("http://127.0.0.1:1"));
        assertThat(unreachable.code).as(unreachable.out).isEqualTo(2);
    }

    /**
     * Deleting the completion pointer must not make a store look clean: the audit says the pointer
     * is missing, names the window it can no longer judge, and still compares every manifest with
     * the store.
     */
    @Test
    void aStoreWhosePointerWasDeletedReportsItAndStillComparesTheManifests() throws Exception {
        StoreSpec spec = StoreKind.FILESYSTEM.fresh();
        StoreDamage damage = new StoreDamage(spec);
        Path root = damage.root();
        StoreDamage.jobWrote(spec);
        Path version = root.resolve("telemetry/v=1");
        try (Stream<Path> log = Files.list(version.resolve("_progress"))) {
            for (Path entry : log.toList()) {
                Files.delete(entry);
            }
        }
        Files.delete(version.resolve("_progress"));
        Files.delete(version.resolve(ObjectKeys.PROGRESS_FILE));
        Path deleted = damage.delete(damage.parts().get(0));
        damage.deleteManifest(damage.window(deleted, "window=1020"));

        Result audit = audit(spec);

        assertThat(audit.code).as(audit.out).isEqualTo(1);
        assertThat(audit.out)
                .contains(
                        "missing-pointer",
                        "telemetry/v=1/" + ObjectKeys.PROGRESS_FILE,
                        "with no manifest: 1 (2026-11-30T10:20:00Z to 2026-11-30T10:20:00Z)")
                .contains("missing-part", key(root, deleted))
                .doesNotContain("missing-manifest");
        assertThat(audit.out.lines().filter(l -> l.contains("missing-pointer"))).hasSize(1);
    }

    /**
     * A store that ignores If-None-Match (here: S3Proxy behind a proxy that strips the header)
     * looks clean to a listing; the audit probes it and says so, and inspect shows the verdict.
     */
    @Test
    void aStoreThatIgnoresTheConditionIsAFindingAndInspectShowsIt() throws Exception {
        S3ProxyServer s3 = S3ProxyServer.get();
        String bucket = s3.createBucket("audit-strip");
        try (FaultProxy proxy = new FaultProxy(s3.endpoint(), 1).stripConditionalHeaders()) {
            StoreSpec stripped =
                    StoreSpec.parse("s3://" + bucket + "/out").withEndpoint(proxy.endpoint());
            Result audit = audit(stripped);
            assertThat(audit.code).as(audit.out).isEqualTo(1);
            assertThat(audit.out).contains("non-conforming-store", "NOT CONFORMING");

            StoreSpec direct =
                    StoreSpec.parse("s3://" + bucket + "/out").withEndpoint(s3.endpoint());
            Result clean = audit(direct);
            assertThat(clean.code).as(clean.out).isZero();
            assertThat(clean.out).contains("conforming: refuses a second create-if-absent");
            Result inspect = run("inspect", stripped);
            assertThat(inspect.out).contains("NOT CONFORMING");
        }
    }

    private record Result(int code, String out) {}

    private static Result audit(StoreSpec spec, String... more) {
        return run("audit", spec, more);
    }

    private static Result run(String command, StoreSpec spec, String... more) {
        List<String> args = new ArrayList<>(List.of(command, spec.uri().toString()));
        spec.endpoint().ifPresent(e -> args.addAll(List.of("--endpoint", e)));
        args.addAll(List.of(more));
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        int code =
                Snapshots.run(
                        args.toArray(new String[0]),
                        new PrintStream(out, true, StandardCharsets.UTF_8),
                        System.err);
        return new Result(code, out.toString(StandardCharsets.UTF_8));
    }

    private static int bucket(Path root, Path file) {
        return ObjectKeys.parse(key(root, file)).orElseThrow().bucket();
    }

    /** How the verifier names the logical part a file holds: window start and bucket. */
    private static String part(Path root, Path file) {
        ObjectKeys.PartKey p = ObjectKeys.parse(key(root, file)).orElseThrow();
        return Instant.ofEpochMilli(p.windowStartMillis()) + " bucket " + p.bucket();
    }

    private static String key(Path root, Path file) {
        return root.relativize(file).toString();
    }
}
