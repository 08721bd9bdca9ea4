package dev.snapshots.warmup;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.net.URI;
import java.util.Iterator;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.FileSystemFactory;
import org.apache.flink.core.fs.local.LocalFileSystem;
import org.apache.flink.core.plugin.PluginManager;
import org.apache.flink.metrics.MetricConfig;
import org.apache.flink.metrics.reporter.MetricReporter;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Against Flink's own file system registry, with a plugin whose making is counted. */
class FileSystemWarmUpTest {
    private static final URI CHECKPOINTS = URI.create("counted://bucket/checkpoints/jm-1");

    private final Counted factory = new Counted();

    @AfterEach
    void forgetTheFactory() {
        FileSystem.initialize(new Configuration(), null);
    }

    @Test
    void theFileSystemIsMadeOnceAsTheProcessStartsAndEveryLaterUserGetsThatOne() throws Exception {
        FileSystem.initialize(new Configuration(), plugins());

        MetricReporter reporter = open(CHECKPOINTS.toString());
        awaitWarmUpThread();

        assertThat(factory.made).as("made before any task asked").hasValue(1);
        // A task's checkpoint storage, later, at another path of the same bucket.
        FileSystem.get(URI.create("counted://bucket/checkpoints/jm-1/chk-7"));
        assertThat(factory.made).as("not made a second time").hasValue(1);
        reporter.close();
    }

    @Test
    void aFailureCostsOnlyTheHeadStart() throws Exception {
        factory.failNext.set(true);
        FileSystem.initialize(new Configuration(), plugins());

        open(CHECKPOINTS.toString());
        awaitWarmUpThread();

        assertThat(factory.made).hasValue(0);
        assertThat(FileSystem.get(CHECKPOINTS)).as("the first task makes it").isNotNull();
        assertThat(factory.made).hasValue(1);
    }

    @Test
    void withoutAUriItSaysWhatToSet() {
        assertThatThrownBy(
                        () -> new FileSystemWarmUpFactory().createMetricReporter(new Properties()))
                .hasMessageContaining("metrics.reporter.<name>.uri");
    }

    private static MetricReporter open(String uri) {
        Properties properties = new Properties();
        properties.setProperty(FileSystemWarmUpFactory.URI_OPTION, uri);
        MetricReporter reporter = new FileSystemWarmUpFactory().createMetricReporter(properties);
        reporter.open(new MetricConfig());
        return reporter;
    }

    private static void awaitWarmUpThread() throws InterruptedException {
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            if (t.getName().equals("snapshots-filesystem-warmup")) {
                t.join();
            }
        }
    }

    private PluginManager plugins() {
        return new PluginManager() {
            @Override
            @SuppressWarnings("unchecked")
            public <P> Iterator<P> load(Class<P> service) {
                return service == FileSystemFactory.class
                        ? (Iterator<P>) List.of(factory).iterator()
                        : List.<P>of().iterator();
            }
        };
    }

    /** Makes a local file system under its own scheme, counting each one it made. */
    private static final class Counted implements FileSystemFactory {
        final AtomicInteger made = new AtomicInteger();
        final AtomicBoolean failNext = new AtomicBoolean();

        @Override
        public String getScheme() {
            return "counted";
        }

        @Override
        public FileSystem create(URI fsUri) throws IOException {
            if (failNext.getAndSet(false)) {
                throw new IOException("no credentials yet");
            }
            made.incrementAndGet();
            return new LocalFileSystem();
        }
    }
}
