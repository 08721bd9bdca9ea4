package dev.snapshots.harness;

import static com.tngtech.archunit.base.DescribedPredicate.not;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAPackage;
import static com.tngtech.archunit.library.Architectures.layeredArchitecture;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.core.importer.Location;
import com.tngtech.archunit.junit.AnalyzeClasses;
import com.tngtech.archunit.junit.ArchTest;
import com.tngtech.archunit.lang.ArchRule;

/**
 * Dependencies point one way: harness → cli → pipeline → table sink, Kinesis source → sink. Maven's
 * module graph already refuses a dependency back up (it would be a cycle); this also catches a
 * class put in the wrong module under another's package, and the sink's core reaching for the S3
 * store it must only find by scheme. Every module's main classes are on this module's test
 * classpath.
 */
@AnalyzeClasses(
        packages = "dev.snapshots",
        importOptions = {ImportOption.DoNotIncludeTests.class, ArchitectureTest.NoTestJars.class})
class ArchitectureTest {
    /** Main classes only: the pipeline's test fixtures come in a test-jar. */
    static final class NoTestJars implements ImportOption {
        @Override
        public boolean includes(Location location) {
            return !location.contains("-tests.jar");
        }
    }

    /**
     * The Kinesis source kept the packages it had in the pipeline ({@code
     * dev.snapshots.job.source}, {@code ...source.kinesis}), so its layer is the module's location,
     * not a package.
     */
    static final DescribedPredicate<JavaClass> KINESIS_MODULE =
            DescribedPredicate.describe(
                    "in the module sources/kinesis",
                    c ->
                            c.getSource()
                                    .map(s -> s.getUri().toString())
                                    .filter(
                                            u ->
                                                    u.contains("/sources/kinesis/")
                                                            || u.contains("/snapshots-kinesis-"))
                                    .isPresent());

    @ArchTest
    static final ArchRule dependenciesPointDown =
            layeredArchitecture()
                    .consideringOnlyDependenciesInLayers()
                    .layer("sink")
                    .definedBy(
                            "dev.snapshots.sink..",
                            "dev.snapshots.key..",
                            "dev.snapshots.format..",
                            "dev.snapshots.progress..",
                            "dev.snapshots.store")
                    .layer("s3 store")
                    .definedBy("dev.snapshots.store.s3..")
                    .layer("table sink")
                    .definedBy("dev.snapshots.table..")
                    .layer("test kit")
                    .definedBy("dev.snapshots.testkit..")
                    .layer("kinesis source")
                    .definedBy(resideInAPackage("dev.snapshots.kinesis..").or(KINESIS_MODULE))
                    .layer("pipeline")
                    .definedBy(resideInAPackage("dev.snapshots.job..").and(not(KINESIS_MODULE)))
                    .layer("cli")
                    .definedBy("dev.snapshots.cli..")
                    .layer("harness")
                    .definedBy("dev.snapshots.harness..")
                    .whereLayer("harness")
                    .mayNotBeAccessedByAnyLayer()
                    .whereLayer("cli")
                    .mayOnlyBeAccessedByLayers("harness")
                    .whereLayer("pipeline")
                    .mayOnlyBeAccessedByLayers("cli", "harness")
                    .whereLayer("test kit")
                    .mayOnlyBeAccessedByLayers("harness")
                    .whereLayer("s3 store")
                    .mayOnlyBeAccessedByLayers("harness")
                    .whereLayer("kinesis source")
                    .mayOnlyBeAccessedByLayers("pipeline", "cli", "harness")
                    .whereLayer("table sink")
                    .mayOnlyBeAccessedByLayers("pipeline", "cli", "harness")
                    .whereLayer("sink")
                    .mayOnlyBeAccessedByLayers(
                            "s3 store",
                            "table sink",
                            "kinesis source",
                            "test kit",
                            "pipeline",
                            "cli",
                            "harness");
}
