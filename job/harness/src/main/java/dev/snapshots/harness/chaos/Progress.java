package dev.snapshots.harness.chaos;

import java.io.PrintStream;

/** The run's progress lines, each stamped with the seconds since it began. */
final class Progress {
    private final PrintStream out;
    private final long startNanos = System.nanoTime();

    Progress(PrintStream out) {
        this.out = out;
    }

    double elapsedSeconds() {
        return Math.round((System.nanoTime() - startNanos) / 1e8) / 10.0;
    }

    void say(String format, Object... args) {
        out.printf("[%6.1fs] %s%n", elapsedSeconds(), String.format(format, args));
    }
}
