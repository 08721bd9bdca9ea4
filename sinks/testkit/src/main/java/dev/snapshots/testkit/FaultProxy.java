package dev.snapshots.testkit;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.EnumSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.flink.annotation.PublicEvolving;

/**
 * An HTTP proxy on 127.0.0.1 between the AWS SDK and S3Proxy that injects the failures a real S3
 * produces but a local server will not: 409 ConditionalRequestConflict on conditional writes (after
 * which, as on S3, an upload whose completion got it is gone), 503 SlowDown, 500 InternalError,
 * added latency, and connections dropped after the request was carried out (so the write happened
 * but the client never heard). Seeded, so a run repeats.
 *
 * <p>Shipped with the library so you can run your own job against a misbehaving S3; the tests and
 * {@code snapshots chaos} use it the same way. Only faults sit here, never logic of the sink.
 */
@PublicEvolving
public final class FaultProxy implements AutoCloseable {
    public enum Fault {
        CONFLICT_409,
        SLOW_DOWN_503,
        INTERNAL_500,
        LATENCY,
        DROP_AFTER_FORWARD
    }

    private static final Set<String> HOP_HEADERS =
            Set.of(
                    "connection",
                    "content-length",
                    "expect",
                    "host",
                    "upgrade",
                    "transfer-encoding",
                    "keep-alive");

    private final HttpServer server;
    private final ExecutorService executor = Executors.newFixedThreadPool(32);
    private final HttpClient client =
            HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    private final String target;
    private final Random random;
    private final Map<Fault, AtomicInteger> injected = new ConcurrentHashMap<>();
    private final AtomicInteger forwarded = new AtomicInteger();
    private final AtomicInteger inFlight = new AtomicInteger();
    private final AtomicInteger peakInFlight = new AtomicInteger();
    private volatile double rate;
    private volatile Set<Fault> faults = EnumSet.noneOf(Fault.class);
    private volatile long outageUntilNanos;
    private final AtomicInteger forcedRemaining = new AtomicInteger();
    private volatile Fault forced;
    private volatile Runnable beforeForcedReply = () -> {};
    private volatile boolean stripConditions;

    public FaultProxy(String target, long seed) throws IOException {
        this.target = target;
        this.random = new Random(seed);
        this.server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 64);
        server.createContext("/", this::handle);
        server.setExecutor(executor);
        server.start();
        for (Fault f : Fault.values()) {
            injected.put(f, new AtomicInteger());
        }
    }

    public String endpoint() {
        return "http://127.0.0.1:" + server.getAddress().getPort();
    }

    /** Injects one of {@code faults} into this fraction of requests. */
    public FaultProxy inject(double rate, Set<Fault> faults) {
        this.faults = EnumSet.copyOf(faults);
        this.rate = rate;
        return this;
    }

    /** Answers every request with 503 for this long: a store that is down, not just flaky. */
    public FaultProxy outage(Duration duration) {
        outageUntilNanos = System.nanoTime() + duration.toNanos();
        return this;
    }

    /**
     * Injects {@code fault} into the next {@code count} requests it applies to, whatever the rate.
     */
    public FaultProxy failNext(Fault fault, int count) {
        return failNext(fault, count, () -> {});
    }

    /**
     * As {@link #failNext(Fault, int)}, running {@code meanwhile} first: what a concurrent writer
     * did.
     */
    public FaultProxy failNext(Fault fault, int count, Runnable meanwhile) {
        beforeForcedReply = meanwhile;
        forced = fault;
        forcedRemaining.set(count);
        return this;
    }

    /**
     * Forwards requests without {@code If-None-Match} and {@code If-Match}, as some proxies do: the
     * store behind then really overwrites what a conditional write would have refused.
     */
    public FaultProxy stripConditionalHeaders() {
        stripConditions = true;
        return this;
    }

    public FaultProxy heal() {
        rate = 0;
        outageUntilNanos = 0;
        return this;
    }

    public int injected(Fault fault) {
        return injected.get(fault).get();
    }

    public int injectedTotal() {
        return injected.values().stream().mapToInt(AtomicInteger::get).sum();
    }

    public int forwarded() {
        return forwarded.get();
    }

    /** The most requests it has had open at once: how parallel the client really was. */
    public int peakInFlight() {
        return peakInFlight.get();
    }

    private void handle(HttpExchange exchange) throws IOException {
        peakInFlight.accumulateAndGet(inFlight.incrementAndGet(), Math::max);
        try {
            serve(exchange);
        } finally {
            inFlight.decrementAndGet();
        }
    }

    private void serve(HttpExchange exchange) throws IOException {
        try (exchange) {
            byte[] body = exchange.getRequestBody().readAllBytes();
            if (System.nanoTime() < outageUntilNanos) {
                injected.get(Fault.SLOW_DOWN_503).incrementAndGet();
                error(exchange, 503, "SlowDown", "Please reduce your request rate.");
                return;
            }
            Fault fault = pick(exchange);
            if (fault != null) {
                injected.get(fault).incrementAndGet();
            }
            if (fault == Fault.CONFLICT_409) {
                dropUploadIfCompleting(exchange);
                error(
                        exchange,
                        409,
                        "ConditionalRequestConflict",
                        "A conflicting operation occurred.");
                return;
            } else if (fault == Fault.SLOW_DOWN_503) {
                error(exchange, 503, "SlowDown", "Please reduce your request rate.");
                return;
            } else if (fault == Fault.INTERNAL_500) {
                error(
                        exchange,
                        500,
                        "InternalError",
                        "We encountered an internal error. Please try again.");
                return;
            } else if (fault == Fault.LATENCY) {
                Thread.sleep(200 + nextInt(800));
            }
            HttpResponse<byte[]> response = forward(exchange, body);
            forwarded.incrementAndGet();
            if (fault == Fault.DROP_AFTER_FORWARD) {
                return; // the server did the work; closing an exchange that sent no headers drops
                // the connection
            }
            response.headers()
                    .map()
                    .forEach(
                            (name, values) -> {
                                if (!HOP_HEADERS.contains(name.toLowerCase(Locale.ROOT))
                                        && !name.startsWith(":")) {
                                    exchange.getResponseHeaders().put(name, values);
                                }
                            });
            byte[] out = response.body();
            boolean noBody = exchange.getRequestMethod().equals("HEAD") || out.length == 0;
            if (exchange.getRequestMethod().equals("HEAD")) {
                response.headers()
                        .firstValue("content-length")
                        .ifPresent(len -> exchange.getResponseHeaders().set("Content-Length", len));
            }
            exchange.sendResponseHeaders(response.statusCode(), noBody ? -1 : out.length);
            if (!noBody) {
                try (OutputStream os = exchange.getResponseBody()) {
                    os.write(out);
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private Fault pick(HttpExchange exchange) {
        boolean conditional =
                exchange.getRequestHeaders().containsKey("If-None-Match")
                        || exchange.getRequestHeaders().containsKey("If-Match");
        Fault once = forced;
        if (once != null
                && (once != Fault.CONFLICT_409 || conditional)
                && forcedRemaining.getAndDecrement() > 0) {
            beforeForcedReply.run();
            return once;
        }
        Set<Fault> enabled = faults;
        if (enabled.isEmpty() || nextDouble() >= rate) {
            return null;
        }
        List<Fault> candidates =
                enabled.stream()
                        .filter(
                                f ->
                                        f != Fault.CONFLICT_409
                                                || conditional) // S3 answers 409 only to
                        // conditional writes
                        .toList();
        return candidates.isEmpty() ? null : candidates.get(nextInt(candidates.size()));
    }

    /**
     * After a 409 on CompleteMultipartUpload, S3 has dropped the upload ("re-initiate the multipart
     * upload with CreateMultipartUpload and re-upload each part"): so does this proxy, by aborting
     * it on the server behind.
     */
    private void dropUploadIfCompleting(HttpExchange exchange)
            throws IOException, InterruptedException {
        String query = exchange.getRequestURI().getRawQuery();
        if (exchange.getRequestMethod().equals("POST")
                && query != null
                && query.contains("uploadId=")) {
            String uploadId = query.replaceAll(".*uploadId=([^&]*).*", "$1");
            client.send(
                    HttpRequest.newBuilder(
                                    URI.create(
                                            target
                                                    + exchange.getRequestURI().getRawPath()
                                                    + "?uploadId="
                                                    + uploadId))
                            .DELETE()
                            .timeout(Duration.ofSeconds(30))
                            .build(),
                    HttpResponse.BodyHandlers.discarding());
        }
    }

    private HttpResponse<byte[]> forward(HttpExchange exchange, byte[] body)
            throws IOException, InterruptedException {
        URI uri =
                URI.create(
                        target
                                + exchange.getRequestURI().getRawPath()
                                + (exchange.getRequestURI().getRawQuery() == null
                                        ? ""
                                        : "?" + exchange.getRequestURI().getRawQuery()));
        HttpRequest.Builder request =
                HttpRequest.newBuilder(uri)
                        .timeout(Duration.ofSeconds(30))
                        .method(
                                exchange.getRequestMethod(),
                                body.length == 0
                                        ? HttpRequest.BodyPublishers.noBody()
                                        : HttpRequest.BodyPublishers.ofByteArray(body));
        exchange.getRequestHeaders()
                .forEach(
                        (name, values) -> {
                            String lower = name.toLowerCase(Locale.ROOT);
                            boolean condition =
                                    lower.equals("if-none-match") || lower.equals("if-match");
                            if (!HOP_HEADERS.contains(lower) && !(stripConditions && condition)) {
                                values.forEach(v -> request.header(name, v));
                            }
                        });
        return client.send(request.build(), HttpResponse.BodyHandlers.ofByteArray());
    }

    private static void error(HttpExchange exchange, int status, String code, String message)
            throws IOException {
        byte[] xml =
                ("<?xml version=\"1.0\" encoding=\"UTF-8\"?><Error><Code>"
                                + code
                                + "</Code><Message>"
                                + message
                                + "</Message><RequestId>fault-proxy</RequestId></Error>")
                        .getBytes(StandardCharsets.UTF_8);
        exchange.getResponseHeaders().set("Content-Type", "application/xml");
        if (exchange.getRequestMethod().equals("HEAD")) {
            exchange.sendResponseHeaders(status, -1);
            return;
        }
        exchange.sendResponseHeaders(status, xml.length);
        try (OutputStream os = exchange.getResponseBody()) {
            os.write(xml);
        }
    }

    private synchronized double nextDouble() {
        return random.nextDouble();
    }

    private synchronized int nextInt(int bound) {
        return random.nextInt(bound);
    }

    @Override
    public void close() {
        server.stop(0);
        executor.shutdownNow();
    }
}
