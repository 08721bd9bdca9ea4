package dev.snapshots.harness;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Terraform checks the Terraform: {@code terraform validate}, and {@code terraform test} with a
 * mocked AWS provider, whose runs assert from plans (deploy/terraform/modules/flink-ecs/tests,
 * deploy/terraform/examples/complete/tests). Runs where a {@code terraform} binary is on the PATH
 * and the AWS provider is in a filesystem mirror on this machine (no registry is reached); skipped
 * elsewhere, saying which is missing.
 */
class TerraformITCase {
    private static final Path ROOT =
            Path.of(System.getProperty("snapshots.root")).toAbsolutePath().normalize();

    /**
     * Where a filesystem mirror of the AWS provider may be: SNAPSHOTS_TERRAFORM_MIRROR, then
     * Terraform's implied local mirror directories on Linux, then where these machines keep it.
     */
    private static final List<String> MIRRORS =
            List.of(
                    Optional.ofNullable(System.getenv("SNAPSHOTS_TERRAFORM_MIRROR")).orElse(""),
                    System.getProperty("user.home") + "/.terraform.d/plugins",
                    System.getProperty("user.home") + "/.local/share/terraform/plugins",
                    "/usr/local/share/terraform/plugins",
                    "/usr/share/terraform/plugins",
                    "/opt/tf-plugins");

    private static Path work;
    private static Path cliConfig;

    @BeforeAll
    static void copyTheTerraformAndPointAtTheMirror() throws Exception {
        assumeTrue(
                onPath("terraform"),
                "terraform validate and terraform test skipped: no terraform binary on the PATH");
        Optional<Path> mirror =
                MIRRORS.stream()
                        .filter(m -> !m.isEmpty())
                        .map(Path::of)
                        .filter(
                                m ->
                                        Files.isDirectory(
                                                m.resolve("registry.terraform.io/hashicorp/aws")))
                        .findFirst();
        assumeTrue(
                mirror.isPresent(),
                "terraform validate and terraform test skipped: no filesystem mirror of"
                        + " registry.terraform.io/hashicorp/aws in "
                        + MIRRORS.stream().filter(m -> !m.isEmpty()).toList());
        // A copy: init writes .terraform/ and a lock file beside the configuration.
        work = Files.createTempDirectory("snapshots-terraform");
        copy(ROOT.resolve("deploy/terraform/modules"), work.resolve("modules"));
        copy(ROOT.resolve("deploy/terraform/examples"), work.resolve("examples"));
        copy(ROOT.resolve("deploy/terraform/own-bucket"), work.resolve("own-bucket"));
        cliConfig = work.resolve("terraform.rc");
        Files.writeString(
                cliConfig,
                "provider_installation {\n  filesystem_mirror {\n    path    = \""
                        + mirror.get()
                        + "\"\n    include = [\"registry.terraform.io/hashicorp/aws\"]\n  }\n"
                        + "  direct {\n    exclude = [\"registry.terraform.io/hashicorp/aws\"]\n  }\n}\n");
    }

    @AfterAll
    static void removeTheCopy() throws IOException {
        if (work != null) {
            try (Stream<Path> files = Files.walk(work)) {
                // Deepest first; the providers are symbolic links into the mirror, removed as
                // links.
                for (Path f : files.sorted(Comparator.reverseOrder()).toList()) {
                    Files.delete(f);
                }
            }
        }
    }

    @Test
    void theModuleValidatesAndItsPlansHaveTheDeploymentsProperties() throws Exception {
        assertThat(validateAndTest("modules/flink-ecs"))
                .as("terraform test of the module")
                .contains("41 passed, 0 failed");
    }

    @Test
    void theExampleValidatesAndItsPlansHaveNoWayInAndAReplayBesideVersionN() throws Exception {
        assertThat(validateAndTest("examples/complete"))
                .as("terraform test of the example")
                .contains("2 passed, 0 failed");
    }

    /**
     * The floor is what the language features need: validations that name other variables (1.9).
     * The module uses them; the example, which calls it, must not promise less.
     */
    @Test
    void requiredVersionIsWhatTheLanguageFeaturesNeed() throws Exception {
        String module = Files.readString(work.resolve("modules/flink-ecs/versions.tf"));
        String example = Files.readString(work.resolve("examples/complete/main.tf"));
        assertThat(requiredVersion(module)).isEqualTo(">= 1.9");
        assertThat(requiredVersion(example)).isEqualTo(">= 1.9");
        String variables = Files.readString(work.resolve("modules/flink-ecs/variables.tf"));
        assertThat(variables)
                .as("a validation that names another variable, which is why 1.9")
                .contains(
                        "var.checkpoint_alarm_minutes * 60 >= 3 * var.checkpoint_interval_seconds");
    }

    private static String validateAndTest(String dir) throws Exception {
        Path d = work.resolve(dir);
        terraform(d, "fmt", "-check", "-recursive", "-no-color");
        terraform(d, "init", "-backend=false", "-input=false", "-no-color");
        assertThat(terraform(d, "validate", "-no-color")).contains("The configuration is valid");
        String test = terraform(d, "test", "-no-color");
        System.out.printf("terraform test %s:%n%s%n", dir, test);
        return test;
    }

    private static String requiredVersion(String hcl) {
        Matcher m = Pattern.compile("required_version\\s*=\\s*\"([^\"]+)\"").matcher(hcl);
        assertThat(m.find()).as("a required_version").isTrue();
        return m.group(1);
    }

    private static String terraform(Path dir, String... args) throws Exception {
        List<String> command = new ArrayList<>(List.of("terraform"));
        command.addAll(List.of(args));
        Path out = Files.createTempFile(work, "terraform", ".out");
        ProcessBuilder pb =
                new ProcessBuilder(command)
                        .directory(dir.toFile())
                        .redirectErrorStream(true)
                        .redirectOutput(out.toFile());
        pb.environment().put("TF_CLI_CONFIG_FILE", cliConfig.toString());
        pb.environment().put("TF_IN_AUTOMATION", "1");
        pb.environment().put("CHECKPOINT_DISABLE", "1"); // no version check over the network
        Process p = pb.start();
        assertThat(p.waitFor(10, TimeUnit.MINUTES)).as("terraform %s finished", args[0]).isTrue();
        String said = Files.readString(out, StandardCharsets.UTF_8);
        assertThat(p.exitValue()).as("terraform %s in %s: %s", args[0], dir, said).isZero();
        return said;
    }

    private static boolean onPath(String program) {
        return Stream.of(System.getenv().getOrDefault("PATH", "").split(":"))
                .anyMatch(d -> !d.isEmpty() && Files.isExecutable(Path.of(d, program)));
    }

    /** Copies a tree, leaving out what an earlier init left in the source (.terraform/). */
    private static void copy(Path from, Path to) throws IOException {
        try (Stream<Path> files = Files.walk(from)) {
            for (Path f : files.filter(f -> !f.toString().contains("/.terraform")).toList()) {
                Path target = to.resolve(from.relativize(f).toString());
                if (Files.isDirectory(f)) {
                    Files.createDirectories(target);
                } else {
                    Files.copy(f, target);
                }
            }
        }
    }
}
