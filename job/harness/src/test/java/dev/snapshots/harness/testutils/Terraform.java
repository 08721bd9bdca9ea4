package dev.snapshots.harness.testutils;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.ObjectMapper;

/**
 * A copy of deploy/terraform (modules and examples) that a {@code terraform} binary on the PATH
 * runs in, with the AWS provider from a filesystem mirror on this machine: no registry is reached.
 * A copy, because init writes .terraform/ and a lock file beside the configuration.
 */
public final class Terraform implements AutoCloseable {
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

    private final Path work;
    private final Path cliConfig;

    private Terraform(Path work, Path cliConfig) {
        this.work = work;
        this.cliConfig = cliConfig;
    }

    /** Why Terraform cannot run here (no binary, no mirror), or empty if it can. */
    public static Optional<String> missing() {
        if (!onPath("terraform")) {
            return Optional.of("no terraform binary on the PATH");
        }
        return mirror().isPresent()
                ? Optional.empty()
                : Optional.of(
                        "no filesystem mirror of registry.terraform.io/hashicorp/aws in "
                                + MIRRORS.stream().filter(m -> !m.isEmpty()).toList());
    }

    /**
     * Copies {@code root}/deploy/terraform's modules, examples and own-bucket; {@link #missing()}
     * first.
     */
    public static Terraform copyOf(Path root) throws IOException {
        Path work = Files.createTempDirectory("snapshots-terraform");
        copy(root.resolve("deploy/terraform/modules"), work.resolve("modules"));
        copy(root.resolve("deploy/terraform/examples"), work.resolve("examples"));
        copy(root.resolve("deploy/terraform/own-bucket"), work.resolve("own-bucket"));
        Path cliConfig = work.resolve("terraform.rc");
        Files.writeString(
                cliConfig,
                "provider_installation {\n  filesystem_mirror {\n    path    = \""
                        + mirror().orElseThrow()
                        + "\"\n    include = [\"registry.terraform.io/hashicorp/aws\"]\n  }\n"
                        + "  direct {\n    exclude = [\"registry.terraform.io/hashicorp/aws\"]\n  }\n}\n");
        return new Terraform(work, cliConfig);
    }

    /** A directory of the copy, e.g. {@code modules/flink-ecs}. */
    public Path dir(String relative) {
        return work.resolve(relative);
    }

    /**
     * The plan of {@code module} with these variables (HCL assignments), as {@code terraform show
     * -json} renders one: {@code terraform test -json -verbose} prints it for a run of a test file
     * of its own, against the module's mocked AWS provider ({@code tests/aws.tfmock.hcl}), so no
     * AWS account is needed.
     */
    public JsonNode plan(String module, String variables) throws Exception {
        Path d = dir(module);
        Files.writeString(
                d.resolve("tests/rendered.tftest.hcl"),
                "mock_provider \"aws\" {\n  source          = \"./tests\"\n"
                        + "  override_during = plan\n}\n\nvariables {\n"
                        + variables
                        + "}\n\nrun \"rendered\" {\n  command = plan\n}\n");
        run(d, "init", "-backend=false", "-input=false", "-no-color");
        String said =
                run(
                        d,
                        "test",
                        "-json",
                        "-verbose",
                        "-no-color",
                        "-filter=tests/rendered.tftest.hcl");
        ObjectMapper json = new ObjectMapper();
        for (String line : said.split("\n")) {
            JsonNode message = json.readTree(line);
            if (message.path("type").asText().equals("test_plan")) {
                return message.path("test_plan");
            }
        }
        throw new AssertionError("terraform test printed no plan: " + said);
    }

    /** Runs terraform in {@code dir}; fails the test unless it exits 0. Returns what it said. */
    public String run(Path dir, String... args) throws Exception {
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
        Files.delete(out);
        assertThat(p.exitValue()).as("terraform %s in %s: %s", args[0], dir, said).isZero();
        return said;
    }

    @Override
    public void close() throws IOException {
        try (Stream<Path> files = Files.walk(work)) {
            // Deepest first; the providers are symbolic links into the mirror, removed as links.
            for (Path f : files.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(f);
            }
        }
    }

    private static Optional<Path> mirror() {
        return MIRRORS.stream()
                .filter(m -> !m.isEmpty())
                .map(Path::of)
                .filter(m -> Files.isDirectory(m.resolve("registry.terraform.io/hashicorp/aws")))
                .findFirst();
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
