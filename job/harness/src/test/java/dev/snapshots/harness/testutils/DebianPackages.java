package dev.snapshots.harness.testutils;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.junit.jupiter.api.Assumptions;

/**
 * What the tests need from Debian, installed by the tests themselves: a fresh machine with a JDK
 * and Node runs the README's test command with nothing installed by hand. Where a file is missing
 * and the tests run as root, its package is installed ({@code apt-get install}, after {@code
 * apt-get update} if the first attempt fails); otherwise, or if that fails, the calling test is
 * skipped with the reason, never passed.
 */
public final class DebianPackages {
    private DebianPackages() {}

    /**
     * Each file (an absolute path to an executable) with the package that provides it: installs the
     * packages of the missing ones, or aborts the calling test saying why.
     */
    public static synchronized void require(Map<String, String> files) {
        Set<String> missing = new LinkedHashSet<>();
        new TreeMap<>(files)
                .forEach(
                        (file, pkg) -> {
                            if (!Files.isExecutable(Path.of(file))) {
                                missing.add(pkg);
                            }
                        });
        if (missing.isEmpty()) {
            return;
        }
        String uid = run(List.of("id", "-u")).strip();
        Assumptions.assumeTrue(
                uid.equals("0"),
                "skipped: Debian's "
                        + missing
                        + " missing, and uid "
                        + uid
                        + " cannot install them: run `apt-get install -y "
                        + String.join(" ", missing)
                        + "` as root, then the tests again");
        System.err.println("installing Debian's " + missing + " for the tests (apt-get)");
        List<String> install = new ArrayList<>(List.of("apt-get", "install", "-y", "-q"));
        install.addAll(missing);
        String said = run(install);
        if (!allThere(files)) {
            said += run(List.of("apt-get", "update", "-q")) + run(install);
        }
        Assumptions.assumeTrue(
                allThere(files),
                "skipped: `apt-get install -y "
                        + String.join(" ", missing)
                        + "` did not install them: "
                        + tail(said));
    }

    private static boolean allThere(Map<String, String> files) {
        return files.keySet().stream().allMatch(f -> Files.isExecutable(Path.of(f)));
    }

    private static String run(List<String> command) {
        try {
            ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true);
            pb.environment().put("DEBIAN_FRONTEND", "noninteractive");
            Process p = pb.start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            p.waitFor();
            return out;
        } catch (IOException e) {
            return command.get(0) + ": " + e.getMessage();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return command.get(0) + ": interrupted";
        }
    }

    private static String tail(String s) {
        return s.length() <= 800 ? s : s.substring(s.length() - 800);
    }
}
