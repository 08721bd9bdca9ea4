package dev.snapshots.sink;

import static org.assertj.core.api.Assertions.assertThat;

import dev.snapshots.format.PartEncoding;
import dev.snapshots.key.ObjectKeys;
import dev.snapshots.key.PartKind;
import dev.snapshots.key.PartMetadata;
import dev.snapshots.key.WorkIdentity;
import dev.snapshots.progress.CompletionPointer;
import dev.snapshots.store.ObjectStore;
import dev.snapshots.store.StoreSpec;
import dev.snapshots.testkit.StoreKind;
import dev.snapshots.testutils.KeyTotal;
import dev.snapshots.testutils.Readings;
import dev.snapshots.testutils.SnapshotTestJob;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Keys, fingerprints, manifests, pointers and evidence are the same whatever the JVM's locale, time
 * zone, file encoding and host: two deployments that differ only in those settings must write one
 * window once. Each case runs {@link Probe} in its own JVM: key generation over a grid of
 * identities, then a small job run twice (the second with altered input, so it leaves divergence
 * evidence), and compares what it prints with a JVM on the default settings.
 */
class LocaleIndependenceITCase {
    private static String expected;

    @BeforeAll
    static void defaultLocale() throws Exception {
        expected = probe(List.of());
        assertThat(expected)
                .as("the probe ran its jobs")
                .contains(
                        "part-00003-of-00004",
                        "_manifest.json",
                        "complete through",
                        ObjectKeys.DIVERGENCE_PREFIX);
    }

    /**
     * Locales whose default digits are not Latin (Arabic-Indic, Persian, Devanagari, Thai,
     * Myanmar), and Turkish's dotless i.
     */
    @ParameterizedTest(name = "{0}_{1}_{2}")
    @CsvSource({
        "ar, EG, , Pacific/Kiritimati, UTF-8",
        "fa, IR, , Asia/Tehran, UTF-8",
        "mr, IN, , Asia/Kolkata, UTF-8",
        "th, TH, TH, Asia/Bangkok, UTF-8",
        "my, MM, , Asia/Yangon, UTF-8",
        "tr, TR, , Europe/Istanbul, ISO-8859-1"
    })
    void everyOutputIsTheSameAsUnderTheDefaultLocale(
            String language, String country, String variant, String zone, String encoding)
            throws Exception {
        List<String> settings =
                new ArrayList<>(
                        List.of(
                                "-Duser.language=" + language,
                                "-Duser.country=" + country,
                                "-Duser.timezone=" + zone,
                                "-Dfile.encoding=" + encoding));
        if (variant != null) {
            settings.add("-Duser.variant=" + variant);
        }
        assertThat(probe(settings)).isEqualTo(expected);
    }

    private static String probe(List<String> settings) throws Exception {
        List<String> command =
                new ArrayList<>(
                        List.of(
                                Path.of(System.getProperty("java.home"), "bin", "java")
                                        .toString()));
        command.addAll(settings);
        command.addAll(
                List.of(
                        "-Djava.io.tmpdir=" + System.getProperty("java.io.tmpdir"),
                        "-cp",
                        System.getProperty("java.class.path"),
                        Probe.class.getName()));
        ProcessBuilder pb = new ProcessBuilder(command);
        pb.environment().put("HOSTNAME", "host-" + settings.hashCode());
        Path log = Files.createTempFile("locale-probe", ".log");
        Process p = pb.redirectError(log.toFile()).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(3, TimeUnit.MINUTES)).as("probe under %s finished", settings).isTrue();
        assertThat(p.exitValue())
                .as("probe under %s failed; its log is %s", settings, log)
                .isZero();
        Files.delete(log);
        return out;
    }

    /** Prints everything a deployment derives from identity; run in another JVM. */
    public static final class Probe {
        public static void main(String[] args) throws Exception {
            long start = Instant.parse("2026-11-30T23:55:00Z").toEpochMilli();
            for (int[] b : new int[][] {{0, 4}, {3, 4}, {12345, 99999}}) {
                WorkIdentity id = new WorkIdentity("orders", start, 300_000, 7, 2, b[0], b[1], "");
                String key = ObjectKeys.partKey(id);
                System.out.println(key + " " + id + " " + ObjectKeys.parse(key).orElseThrow());
                System.out.println(ObjectKeys.divergenceKey(key, "ab".repeat(32)));
            }
            System.out.println(ObjectKeys.progressEntryKey(PartKind.SNAPSHOT, "orders", 7, 1234));
            System.out.println(ObjectKeys.manifestKey(PartKind.DEAD_LETTER, "orders", 7, 2, start));
            List<KeyTotal> rows =
                    List.of(
                            new KeyTotal("dev-1", start, 3, 15),
                            new KeyTotal("dev-\u0130", start, -2, -1_000_000));
            for (int scheme :
                    new int[] {PartEncoding.FINGERPRINT_AVRO, PartEncoding.FINGERPRINT_TYPED}) {
                System.out.println(
                        "fingerprint "
                                + PartEncoding.fingerprint(
                                        rows.stream().map(new KeyTotal.Format()::toRecord).toList(),
                                        KeyTotal.SCHEMA,
                                        1,
                                        scheme));
            }

            Readings readings = Readings.of(4, 60_000, 60, 12);
            StoreSpec spec = StoreKind.FILESYSTEM.fresh();
            SnapshotTestJob.over(readings).store(spec).eventsPerSecond(100_000).run();
            SnapshotTestJob.over(readings.alteringWindows(2))
                    .store(spec)
                    .eventsPerSecond(100_000)
                    .run();
            try (ObjectStore store = spec.open()) {
                List<String> keys = new ArrayList<>();
                store.list("", o -> keys.add(o.key()));
                for (String key : keys) {
                    if (ObjectKeys.parse(key).isPresent()) {
                        System.out.println(
                                key
                                        + " "
                                        + store.head(key)
                                                .orElseThrow()
                                                .metadata()
                                                .get(PartMetadata.FINGERPRINT));
                    } else if (ObjectKeys.parseManifest(key).isPresent()) {
                        System.out.println(
                                key
                                        + " "
                                        + new String(
                                                store.get(key).orElseThrow().content(),
                                                StandardCharsets.UTF_8));
                    } else if (key.startsWith(ObjectKeys.DIVERGENCE_PREFIX)) {
                        System.out.println(key);
                    }
                }
                System.out.println(
                        "complete through "
                                + CompletionPointer.read(
                                        store, PartKind.SNAPSHOT, SnapshotTestJob.PIPELINE, 1));
            }
            System.exit(0);
        }
    }
}
