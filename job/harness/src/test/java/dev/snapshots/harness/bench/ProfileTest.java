package dev.snapshots.harness.bench;

import static org.assertj.core.api.Assertions.assertThat;

import dev.snapshots.cli.Audit;
import dev.snapshots.format.PartEncoding;
import dev.snapshots.job.WindowAggregate;
import dev.snapshots.progress.CompletionPointer;
import dev.snapshots.sink.CanonicalSnapshotSink;
import dev.snapshots.store.s3.S3ObjectStore;
import dev.snapshots.testkit.S3ProxyServer;
import org.junit.jupiter.api.Test;

/** The profile's "sink library" is the library's classes, not the job's or the benchmark's own. */
class ProfileTest {
    @Test
    void theSinkLibraryIsTheLibraryAlone() {
        for (Class<?> library :
                new Class<?>[] {
                    CanonicalSnapshotSink.class,
                    PartEncoding.class,
                    CompletionPointer.class,
                    S3ObjectStore.class
                }) {
            assertThat(Profile.inLibrary(library.getName())).as(library.getName()).isTrue();
        }
        for (Class<?> other :
                new Class<?>[] {
                    WindowAggregate.Format.class,
                    BenchRun.class,
                    Audit.class,
                    S3ProxyServer.class,
                    String.class
                }) {
            assertThat(Profile.inLibrary(other.getName())).as(other.getName()).isFalse();
        }
    }
}
