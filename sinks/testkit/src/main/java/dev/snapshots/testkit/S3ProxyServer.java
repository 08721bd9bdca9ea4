package dev.snapshots.testkit;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.apache.flink.annotation.PublicEvolving;

/**
 * A real S3 server for tests: S3Proxy 4.1.0 with the filesystem-nio2 backend, started once per test
 * JVM as a child process on 127.0.0.1 and stopped (by its PID) when the JVM exits. Its conditional
 * writes are atomic (unlike S3Mock), which is what the sink's guarantee rests on. Authorization is
 * off so the fault proxy can sit in front without re-signing requests.
 */
@PublicEvolving
public final class S3ProxyServer {
    private static S3ProxyServer instance;
    private static S3ProxyServer withoutConditionalWrites;

    private final String endpoint;

    private S3ProxyServer(String endpoint) {
        this.endpoint = endpoint;
    }

    /** The shared server, started on first use. */
    public static synchronized S3ProxyServer get() {
        if (instance == null) {
            instance = start("s3proxy.jar", "filesystem-nio2");
        }
        return instance;
    }

    /**
     * S3Proxy 2.0.0, a real S3-compatible server that ignores {@code If-None-Match}: a second
     * conditional PUT replaces the object. What the sink must refuse to publish to.
     */
    public static synchronized S3ProxyServer withoutConditionalWrites() {
        if (withoutConditionalWrites == null) {
            withoutConditionalWrites = start("s3proxy.legacy.jar", "filesystem");
        }
        return withoutConditionalWrites;
    }

    public String endpoint() {
        return endpoint;
    }

    /** A fresh, empty bucket: tests never share one. */
    public String createBucket(String prefix) {
        String bucket = (prefix + "-" + Long.toHexString(System.nanoTime())).toLowerCase();
        try {
            HttpResponse<String> r =
                    HttpClient.newHttpClient()
                            .send(
                                    HttpRequest.newBuilder(URI.create(endpoint + "/" + bucket))
                                            .PUT(HttpRequest.BodyPublishers.noBody())
                                            .build(),
                                    HttpResponse.BodyHandlers.ofString());
            if (r.statusCode() != 200) {
                throw new IllegalStateException(
                        "creating bucket "
                                + bucket
                                + " failed: "
                                + r.statusCode()
                                + " "
                                + r.body());
            }
            return bucket;
        } catch (IOException | InterruptedException e) {
            throw new IllegalStateException("creating bucket " + bucket + " failed", e);
        }
    }

    private static S3ProxyServer start(String jarProperty, String provider) {
        String jar = System.getProperty(jarProperty);
        if (jar == null || !Files.exists(Path.of(jar))) {
            throw new IllegalStateException(
                    "system property "
                            + jarProperty
                            + " must point at an s3proxy jar-with-dependencies (the build sets it; got "
                            + jar
                            + ")");
        }
        try {
            Path dir = Files.createTempDirectory("s3proxy");
            Files.createDirectories(dir.resolve("data"));
            int port = freePort();
            String endpoint = "http://127.0.0.1:" + port;
            Path props = dir.resolve("s3proxy.properties");
            Files.write(
                    props,
                    List.of(
                            "s3proxy.endpoint=" + endpoint,
                            "s3proxy.authorization=none",
                            "jclouds.provider=" + provider,
                            "jclouds.filesystem.basedir=" + dir.resolve("data")));
            Process process =
                    new ProcessBuilder(
                                    Path.of(System.getProperty("java.home"), "bin", "java")
                                            .toString(),
                                    "-Xmx256m",
                                    "-jar",
                                    jar,
                                    "--properties",
                                    props.toString())
                            .redirectErrorStream(true)
                            .redirectOutput(dir.resolve("s3proxy.log").toFile())
                            .start();
            Runtime.getRuntime().addShutdownHook(new Thread(process::destroyForcibly));
            awaitReady(process, endpoint, dir.resolve("s3proxy.log"));
            return new S3ProxyServer(endpoint);
        } catch (IOException e) {
            throw new IllegalStateException("could not start S3Proxy", e);
        }
    }

    /** Ready when it answers HTTP at all (any status); fails fast if the process died. */
    private static void awaitReady(Process process, String endpoint, Path log) throws IOException {
        HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(1)).build();
        Instant deadline = Instant.now().plusSeconds(60);
        while (Instant.now().isBefore(deadline)) {
            if (!process.isAlive()) {
                throw new IllegalStateException("S3Proxy exited: " + Files.readString(log));
            }
            try {
                http.send(
                        HttpRequest.newBuilder(URI.create(endpoint + "/")).build(),
                        HttpResponse.BodyHandlers.discarding());
                return;
            } catch (IOException e) {
                sleep(100);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
        }
        process.destroyForcibly();
        throw new IllegalStateException(
                "S3Proxy did not answer at " + endpoint + " within 60 s: " + Files.readString(log));
    }

    static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
