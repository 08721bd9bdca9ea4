package dev.snapshots.harness.testutils;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.WebSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.ObjectMapper;

/**
 * Headless Chromium from Debian's {@code chromium} package, driven over the DevTools protocol on a
 * WebSocket with the JDK's own HTTP client: load a page, evaluate JavaScript in it, read the
 * browser's own timings, take screenshots. Nothing else is downloaded (no Selenium, no driver).
 *
 * <p>Where the browser is missing, {@link #start} installs Debian's package ({@link
 * DebianPackages}) when it runs as root; otherwise, or if that fails, the calling test is skipped
 * with the reason, never passed.
 */
public final class Chromium implements AutoCloseable {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Pattern LISTENING =
            Pattern.compile("DevTools listening on (ws://127\\.0\\.0\\.1:(\\d+)/\\S+)");
    private static final Duration CALL_TIMEOUT = Duration.ofMinutes(3);

    private final Process process;
    private final Path profile;
    private final WebSocket socket;
    private final AtomicInteger ids = new AtomicInteger();
    private final Map<Integer, CompletableFuture<JsonNode>> calls = new ConcurrentHashMap<>();
    private final LinkedBlockingQueue<JsonNode> events = new LinkedBlockingQueue<>();

    /** What the browser measured loading a page (milliseconds from the navigation's start). */
    public record Timing(double domContentLoaded, double load, double firstContentfulPaint) {}

    private Chromium(Process process, Path profile, WebSocket socket) {
        this.process = process;
        this.profile = profile;
        this.socket = socket;
    }

    /** The browser, installed first if it has to be and can be; else the test is skipped. */
    public static Path binary() {
        return onPath().orElseGet(
                        () -> {
                            DebianPackages.require(Map.of("/usr/bin/chromium", "chromium"));
                            return Path.of("/usr/bin/chromium");
                        });
    }

    /** Starts a headless browser with a fresh profile, its DevTools on 127.0.0.1. */
    public static Chromium start(int width, int height) throws Exception {
        Path binary = binary();
        Path profile = Files.createTempDirectory("chromium-profile-");
        Process process =
                new ProcessBuilder(
                                binary.toString(),
                                "--headless",
                                // Root cannot use the sandbox; the pages are our own files.
                                "--no-sandbox",
                                "--disable-gpu",
                                "--disable-dev-shm-usage",
                                "--no-first-run",
                                "--hide-scrollbars",
                                "--remote-debugging-address=127.0.0.1",
                                "--remote-debugging-port=0",
                                "--user-data-dir=" + profile,
                                "--window-size=" + width + "," + height,
                                "about:blank")
                        .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                        .start();
        BufferedReader err =
                new BufferedReader(
                        new InputStreamReader(process.getErrorStream(), StandardCharsets.UTF_8));
        String ws = null;
        int port = 0;
        StringBuilder said = new StringBuilder();
        for (String line = err.readLine(); line != null; line = err.readLine()) {
            said.append(line).append('\n');
            Matcher m = LISTENING.matcher(line);
            if (m.find()) {
                ws = m.group(1);
                port = Integer.parseInt(m.group(2));
                break;
            }
        }
        if (ws == null) {
            process.destroyForcibly();
            throw new IOException("Chromium did not open its DevTools port: " + said);
        }
        // Keep draining its log, or a chatty browser blocks on a full pipe.
        Thread drain =
                new Thread(
                        () -> {
                            try {
                                err.transferTo(java.io.Writer.nullWriter());
                            } catch (IOException ignored) {
                                // the browser has gone
                            }
                        },
                        "chromium-stderr");
        drain.setDaemon(true);
        drain.start();
        HttpClient http = HttpClient.newHttpClient();
        JsonNode targets =
                JSON.readTree(
                        http.send(
                                        HttpRequest.newBuilder(
                                                        URI.create(
                                                                "http://127.0.0.1:"
                                                                        + port
                                                                        + "/json/list"))
                                                .build(),
                                        HttpResponse.BodyHandlers.ofString())
                                .body());
        String page = null;
        for (JsonNode t : targets) {
            if (t.path("type").asText().equals("page")) {
                page = t.path("webSocketDebuggerUrl").asText();
            }
        }
        if (page == null) {
            process.destroyForcibly();
            throw new IOException("Chromium has no page to drive: " + targets);
        }
        Listener listener = new Listener();
        WebSocket socket =
                http.newWebSocketBuilder()
                        .buildAsync(URI.create(page), listener)
                        .get(30, TimeUnit.SECONDS);
        Chromium chromium = new Chromium(process, profile, socket);
        listener.owner = chromium;
        chromium.call("Page.enable", Map.of());
        chromium.call("Runtime.enable", Map.of());
        return chromium;
    }

    /** Loads a page and waits for its load event; what the browser measured. */
    public Timing open(Path file) throws Exception {
        events.clear();
        call("Page.navigate", Map.of("url", file.toUri().toString()));
        long deadline = System.nanoTime() + CALL_TIMEOUT.toNanos();
        while (true) {
            JsonNode e =
                    events.poll(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            if (e == null) {
                throw new IOException("no load event within " + CALL_TIMEOUT + " for " + file);
            }
            if (e.path("method").asText().equals("Page.loadEventFired")) {
                break;
            }
        }
        JsonNode t =
                evaluate(
                        "(() => { const n = performance.getEntriesByType('navigation')[0];"
                                + " const p = performance.getEntriesByName('first-contentful-paint')[0];"
                                + " return {dcl: n.domContentLoadedEventEnd, load: n.loadEventEnd,"
                                + " fcp: p ? p.startTime : -1}; })()");
        return new Timing(
                t.path("dcl").asDouble(), t.path("load").asDouble(), t.path("fcp").asDouble());
    }

    /** The value of a JavaScript expression in the page; a promise is awaited. */
    public JsonNode evaluate(String expression) throws Exception {
        JsonNode result =
                call(
                        "Runtime.evaluate",
                        Map.of(
                                "expression", expression,
                                "returnByValue", true,
                                "awaitPromise", true));
        if (result.has("exceptionDetails")) {
            throw new IllegalStateException(
                    "the page threw: " + result.path("exceptionDetails").toString());
        }
        return result.path("result").path("value");
    }

    /**
     * A PNG of the page from its top, {@code width} CSS pixels wide (the page's own width, if
     * wider, up to 2400) and {@code height} at most. The window is made that large first: what lies
     * off screen is not drawn ({@code content-visibility}), and a screenshot must show it.
     */
    public byte[] screenshot(int width, int height) throws Exception {
        JsonNode size = call("Page.getLayoutMetrics", Map.of()).path("cssContentSize");
        long w = Math.round(Math.max(width, Math.min(size.path("width").asDouble(), 2400)));
        long h = Math.round(Math.min(size.path("height").asDouble(), height));
        call(
                "Emulation.setDeviceMetricsOverride",
                Map.of("width", w, "height", h, "deviceScaleFactor", 1, "mobile", false));
        try {
            evaluate("new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))");
            JsonNode shot = call("Page.captureScreenshot", Map.of("format", "png"));
            return Base64.getDecoder().decode(shot.path("data").asText());
        } finally {
            call("Emulation.clearDeviceMetricsOverride", Map.of());
        }
    }

    private JsonNode call(String method, Map<String, Object> params) throws Exception {
        int id = ids.incrementAndGet();
        CompletableFuture<JsonNode> reply = new CompletableFuture<>();
        calls.put(id, reply);
        socket.sendText(
                        JSON.writeValueAsString(
                                Map.of("id", id, "method", method, "params", params)),
                        true)
                .get(30, TimeUnit.SECONDS);
        JsonNode r = reply.get(CALL_TIMEOUT.toSeconds(), TimeUnit.SECONDS);
        if (r.has("error")) {
            throw new IOException(method + " failed: " + r.path("error"));
        }
        return r.path("result");
    }

    private void received(String message) {
        try {
            JsonNode m = JSON.readTree(message);
            if (m.has("id")) {
                CompletableFuture<JsonNode> reply = calls.remove(m.path("id").asInt());
                if (reply != null) {
                    reply.complete(m);
                }
            } else {
                events.add(m);
            }
        } catch (IOException e) {
            throw new IllegalStateException("the browser sent what is not JSON: " + message, e);
        }
    }

    /** Gathers a message's fragments; the protocol's replies can run to megabytes (screenshots). */
    private static final class Listener implements WebSocket.Listener {
        private final StringBuilder partial = new StringBuilder();
        volatile Chromium owner;

        @Override
        public CompletionStage<?> onText(WebSocket ws, CharSequence data, boolean last) {
            partial.append(data);
            if (last) {
                owner.received(partial.toString());
                partial.setLength(0);
            }
            ws.request(1);
            return null;
        }
    }

    @Override
    public void close() throws Exception {
        try {
            call("Browser.close", Map.of());
        } catch (Exception ignored) {
            // gone already: stopped below either way
        }
        socket.abort();
        if (!process.waitFor(10, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            process.waitFor(10, TimeUnit.SECONDS);
        }
        try (var files = Files.walk(profile)) {
            files.sorted(java.util.Comparator.reverseOrder())
                    .map(Path::toFile)
                    .forEach(File::delete);
        }
    }

    private static Optional<Path> onPath() {
        for (String dir :
                System.getenv().getOrDefault("PATH", "/usr/bin").split(File.pathSeparator)) {
            for (String name : List.of("chromium", "chromium-browser")) {
                Path p = Path.of(dir, name);
                if (Files.isExecutable(p)) {
                    return Optional.of(p);
                }
            }
        }
        return Optional.empty();
    }
}
