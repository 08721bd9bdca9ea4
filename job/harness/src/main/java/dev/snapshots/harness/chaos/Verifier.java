package dev.snapshots.harness.chaos;

import static dev.snapshots.harness.chaos.ChaosReport.ordered;

import dev.snapshots.harness.JobOutput;
import dev.snapshots.job.Sources;
import dev.snapshots.job.config.JobConfig;
import dev.snapshots.key.PartKind;
import dev.snapshots.progress.CompletionPointer;
import dev.snapshots.store.ObjectStore;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.List;

/**
 * Ends the run and judges it: waits for the completion pointer to pass the last window, drains the
 * job, then checks the store against a reference computed from the generator's truth ({@link
 * Chaos#violations}).
 */
final class Verifier {
    private final ChaosPlan plan;

    /** Read by S3Proxy directly, bypassing the faults. */
    private final ObjectStore store;

    private final Deployer deployer;
    private final List<String> jobs;
    private final ChaosReport report;
    private final Progress progress;

    Verifier(
            ChaosPlan plan,
            ObjectStore store,
            Deployer deployer,
            List<String> jobs,
            ChaosReport report,
            Progress progress) {
        this.plan = plan;
        this.store = store;
        this.deployer = deployer;
        this.jobs = jobs;
        this.report = report;
        this.progress = progress;
    }

    /**
     * Waits for the pointer to pass the last window, then drains the job so the dead letters are
     * published too.
     */
    void drain(long closingWindow) throws Exception {
        progress.say(
                "all %d windows produced; waiting for the completion pointer to reach %s",
                plan.windows, Instant.ofEpochMilli(closingWindow));
        long deadline = System.nanoTime() + Duration.ofMinutes(5).toNanos();
        while (CompletionPointer.read(store, PartKind.SNAPSHOT, "telemetry", 1).orElse(0L)
                < closingWindow) {
            if (System.nanoTime() > deadline) {
                throw new IOException(
                        "the completion pointer did not reach "
                                + Instant.ofEpochMilli(closingWindow)
                                + " in 5 minutes");
            }
            Thread.sleep(250);
        }
        String last = jobs.get(0);
        String state = deployer.drain(last);
        progress.say("pointer passed the last window; job %s drained: %s", last, state);
        if (!state.equals("FINISHED")) {
            report.violation("the last job ended " + state + ", not FINISHED");
        }
    }

    /** Checks the store; returns the reference, for the checks of other copies. */
    JobOutput verify(JobConfig config, long closingWindow) throws Exception {
        JobOutput expected =
                JobOutput.expected(
                        Sources.generatorFunction(config),
                        Sources.generatorCount(config),
                        ChaosPlan.WINDOW_MILLIS,
                        config::bucketOf);
        JobOutput published = JobOutput.published(store, 1, closingWindow);
        List<String> found = Chaos.violations(store, expected, published);
        found.forEach(report::violation);
        report.put("windows", plan.windows);
        report.put(
                "parts",
                ordered(
                        "expected",
                        expected.parts.size(),
                        "published",
                        published.parts.size(),
                        "objects",
                        published.objects.values().stream().mapToInt(Integer::intValue).sum()));
        report.put(
                "events",
                ordered("expected", expected.goodEvents, "published", published.goodEvents));
        report.put(
                "deadLetters",
                ordered(
                        "injected",
                        expected.deadLetterReasons,
                        "published",
                        published.deadLetterReasons));
        report.put("storeViolations", found.size());
        progress.say(
                "verified: %d parts expected, %d violations",
                expected.parts.size(), report.violations().size());
        return expected;
    }
}
