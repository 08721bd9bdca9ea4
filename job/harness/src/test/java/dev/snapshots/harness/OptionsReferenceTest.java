package dev.snapshots.harness;

import static org.assertj.core.api.Assertions.assertThat;

import dev.snapshots.job.config.CommandLine;
import dev.snapshots.job.config.JobOptions;
import dev.snapshots.kinesis.SnapshotsKinesisTableFactory;
import dev.snapshots.table.CanonicalSnapshotsTableFactory;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.description.HtmlFormatter;
import org.apache.flink.table.factories.DynamicTableFactory;
import org.apache.flink.util.TimeUtils;
import org.junit.jupiter.api.Test;

/**
 * docs/OPTIONS.md is generated from the {@link ConfigOption}s themselves (the two table factories'
 * required and optional options, and {@link JobOptions#ALL}), with Flink's {@link HtmlFormatter}
 * for descriptions, as Flink's own configuration docs are. This test fails when the committed file
 * differs from what the options say now; {@value #REGENERATE} writes it again.
 */
class OptionsReferenceTest {
    static final String REGENERATE =
            "./mvnw -B -q -ntp -o -pl job/harness -am verify -Dtest=OptionsReferenceTest"
                    + " -Dsurefire.failIfNoSpecifiedTests=false -DskipITs"
                    + " -Dspotless.check.skip=true -Dsnapshots.options.write=true";

    private static final Path FILE =
            Path.of(System.getProperty("snapshots.root"), "docs", "OPTIONS.md");

    @Test
    void docsOptionsMdIsWhatTheConfigOptionsSay() throws Exception {
        String generated = render();
        if (Boolean.getBoolean("snapshots.options.write")) {
            Files.writeString(FILE, generated, StandardCharsets.UTF_8);
        }
        String committed = Files.exists(FILE) ? Files.readString(FILE) : "";
        assertThat(committed)
                .as("docs/OPTIONS.md is stale; regenerate it with: %s", REGENERATE)
                .isEqualTo(generated);
    }

    static String render() throws Exception {
        StringBuilder md = new StringBuilder();
        md.append("# Options\n\n")
                .append("Generated from the `ConfigOption`s by `OptionsReferenceTest`")
                .append(" (job/harness); do not edit by hand. After changing an option, run:\n\n")
                .append("```\n")
                .append(REGENERATE)
                .append("\n```\n\n");
        md.append("## `'connector' = 'canonical-snapshots'` (the table sink)\n\n")
                .append("`dev.snapshots.table.CanonicalSnapshotsOptions`.\n\n");
        table(md, new CanonicalSnapshotsTableFactory(), false);
        md.append("## `'connector' = 'snapshots-kinesis'` (the Kinesis table source)\n\n")
                .append("`dev.snapshots.kinesis.SnapshotsKinesisOptions`, and `format`.")
                .append(" Any other `aws.*` key goes to the AWS client as it is.\n\n");
        table(md, new SnapshotsKinesisTableFactory(), false);
        md.append("## The bundled job (`./snapshots run`, the job jar, `submit`)\n\n")
                .append("`dev.snapshots.job.config.JobOptions`. Each is set by its flag")
                .append(" (`--window 5m`), else by the Flink configuration the job runs with")
                .append(" (`snapshots.window: 5m`, e.g. in `FLINK_PROPERTIES`), else by its")
                .append(" default. `./snapshots run --help` lists the same.\n\n");
        rows(md, JobOptions.ALL, Set.of(), true);
        return md.toString();
    }

    private static void table(StringBuilder md, DynamicTableFactory factory, boolean flags)
            throws Exception {
        Comparator<ConfigOption<?>> byKey = Comparator.comparing(ConfigOption::key);
        List<ConfigOption<?>> options = new ArrayList<>();
        // Factories return sets, whose order changes from one JVM to the next.
        factory.requiredOptions().stream().sorted(byKey).forEach(options::add);
        factory.optionalOptions().stream().sorted(byKey).forEach(options::add);
        rows(md, options, factory.requiredOptions(), flags);
    }

    private static void rows(
            StringBuilder md,
            List<ConfigOption<?>> options,
            Set<ConfigOption<?>> required,
            boolean flags)
            throws Exception {
        md.append("<table>\n  <thead>\n    <tr><th>Key</th>")
                .append(flags ? "<th>Flag</th>" : "<th>Required</th>")
                .append("<th>Default</th><th>Type</th><th>Description</th></tr>\n")
                .append("  </thead>\n  <tbody>\n");
        for (ConfigOption<?> o : options) {
            md.append("    <tr><td><code>")
                    .append(o.key())
                    .append("</code></td><td>")
                    .append(
                            flags
                                    ? "<code>" + CommandLine.flag(o) + "</code>"
                                    : required.contains(o) ? "yes" : "no")
                    .append("</td><td>")
                    .append(defaultText(o))
                    .append("</td><td>")
                    .append(type(o))
                    .append("</td><td>")
                    .append(new HtmlFormatter().format(o.description()))
                    .append("</td></tr>\n");
        }
        md.append("  </tbody>\n</table>\n\n");
    }

    private static String defaultText(ConfigOption<?> o) {
        Object value = o.hasDefaultValue() ? o.defaultValue() : null;
        if (value == null || value.toString().isEmpty()) {
            return "(none)";
        }
        return value instanceof Duration d
                ? TimeUtils.formatWithHighestUnit(d)
                : value.toString().replace("&", "&amp;").replace("<", "&lt;");
    }

    /** The option's type as Flink's docs name it; the class is only reachable reflectively. */
    private static String type(ConfigOption<?> o) throws Exception {
        Method getClazz = ConfigOption.class.getDeclaredMethod("getClazz");
        getClazz.setAccessible(true);
        Class<?> type = (Class<?>) getClazz.invoke(o);
        if (!type.isEnum()) {
            return type.getSimpleName();
        }
        return "Enum: "
                + Arrays.stream(type.getEnumConstants())
                        .map(Object::toString)
                        .collect(Collectors.joining(", "));
    }
}
