package dev.snapshots.harness;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.snapshots.harness.testutils.Terraform;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
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

    private static Terraform terraform;

    @BeforeAll
    static void copyTheTerraformAndPointAtTheMirror() throws Exception {
        Optional<String> missing = Terraform.missing();
        assumeTrue(
                missing.isEmpty(),
                () -> "terraform validate and terraform test skipped: " + missing.orElseThrow());
        terraform = Terraform.copyOf(ROOT);
    }

    @AfterAll
    static void removeTheCopy() throws IOException {
        if (terraform != null) {
            terraform.close();
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
        String module = Files.readString(terraform.dir("modules/flink-ecs/versions.tf"));
        String example = Files.readString(terraform.dir("examples/complete/main.tf"));
        assertThat(requiredVersion(module)).isEqualTo(">= 1.9");
        assertThat(requiredVersion(example)).isEqualTo(">= 1.9");
        String variables = Files.readString(terraform.dir("modules/flink-ecs/variables.tf"));
        assertThat(variables)
                .as("a validation that names another variable, which is why 1.9")
                .contains(
                        "var.checkpoint_alarm_minutes * 60 >= 3 * var.checkpoint_interval_seconds");
    }

    private static String validateAndTest(String dir) throws Exception {
        Path d = terraform.dir(dir);
        terraform.run(d, "fmt", "-check", "-recursive", "-no-color");
        terraform.run(d, "init", "-backend=false", "-input=false", "-no-color");
        assertThat(terraform.run(d, "validate", "-no-color"))
                .contains("The configuration is valid");
        String test = terraform.run(d, "test", "-no-color");
        System.out.printf("terraform test %s:%n%s%n", dir, test);
        return test;
    }

    private static String requiredVersion(String hcl) {
        Matcher m = Pattern.compile("required_version\\s*=\\s*\"([^\"]+)\"").matcher(hcl);
        assertThat(m.find()).as("a required_version").isTrue();
        return m.group(1);
    }
}
