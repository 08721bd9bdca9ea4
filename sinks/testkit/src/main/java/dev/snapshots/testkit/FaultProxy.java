package dev.snapshots.testkit;

import com.sun.net.httpserver.Headers;
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
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.flink.annotation.PublicEvolving;

/**
 * An HTTP proxy on 127.0.0.1 between the AWS SDK and S3Proxy that injects the failures a real S3
 * produces but a local server will not: 409 ConditionalRequestConflict on conditional writes (after
 * which, as on S3, an upload whose completion got it is gone), 503 SlowDown, 500 InternalError, 400
 * RequestTimeout, 400 ExpiredToken, 403 RequestTimeTooSkewed, an InternalError inside a 200 answer
 * to CompleteMultipartUpload or a copy, added latency, and connections dropped after the request
 * was carried out (so the write happened but the client never heard). Error answers are S3's: the
 * status, and an XML Error document with its Code and Message. Seeded, so a run repeats.
 *
 * <p>Shipped with the library so you can run your own job against a misbehaving S3; the tests and
 * {@code snapshots chaos} use it the same way. Only faults sit here, never logic of the sink.
 */
@PublicEvolving
public final class FaultProxy implements AutoCloseable {
    public enum Fault {
        /** To conditional writes only. */
        CONFLICT_409(409, "ConditionalRequestConflict", "A conflicting operation occurred."),
        SLOW_DOWN_503(503, "SlowDown", "Please reduce your request rate."),
        INTERNAL_500(500, "InternalError", "We encountered an internal error. Please try again."),
        /** S3 stopped waiting for the request's body: to requests that carry one. */
        REQUEST_TIMEOUT_400(
                400,
                "RequestTimeout",
                "Your socket connection to the server was not read from or written to within the"
                        + " timeout period. Idle connections will be closed."),
        /** The session token that signed the request expired. */
        EXPIRED_TOKEN_400(400, "ExpiredToken", "The provided token has expired."),
        /** The client's clock is more than 15 minutes off S3's. */
        TIME_SKEWED_403(
                403,
                "RequestTimeTooSkewed",
                "The difference between the request time and the current time is too large."),
        /**
         * CompleteMultipartUpload failing after S3 sent 200 OK: the Error document is the 200's
         * body. Not forwarded, so the upload stays as it was: the failure S3 reports, without the
         * doubt of a write that may have happened (which is {@link #DROP_AFTER_FORWARD}'s).
         */
        COMPLETE_INTERNAL_200(
                200, "InternalError", "We encountered an internal error. Please try again."),
        /** As {@link #COMPLETE_INTERNAL_200}, to UploadPartCopy and CopyObject. */
        COPY_INTERNAL_200(
                200, "InternalError", "We encountered an internal error. Please try again."),
        LATENCY,
        DROP_AFTER_FORWARD;

        private final int status;
        private final String code;
        private final String message;

        Fault(int status, String code, String message) {
            this.status = status;
            this.code = code;
            this.message = message;
        }

        /** A fault that changes how the request is carried out, not what S3 answers. */
        Fault() {
            this(0, null, null);
        }
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
    // What failNext or failOneRequest asked for, guarded by this.
    private Fault forced;
    private int forcedRemaining;
    private String forcedMethod; // null: any request the fault applies to
    private int forcedSkip; // requests of forcedMethod the fault applies to, let pass first
    private String forcedRequest; // failOneRequest's request, once it came: method and URI
    private volatile Runnable beforeForcedReply = () -> {};
    private volatile boolean stripConditions;
    private volatile String delayedWrites; // a part of the path of PUTs to hold, or null
    private volatile long delayedWritesMillis;
    private volatile CountDownLatch delayedWritesReleased = new CountDownLatch(0);
    private final AtomicInteger delayed = new AtomicInteger();

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
        return force(fault, count, null, 0, meanwhile);
    }

    /**
     * Injects {@code fault} into the first request of this HTTP method it applies to (a PUT, say,
     * and not the GET a writer starts with), and into the attempts at that same request (method and
     * URI) that follow, {@code times} in all: a request S3 keeps failing, past the client's own
     * immediate retry. Every other request passes.
     */
    public FaultProxy failOneRequest(Fault fault, String method, int times) {
        return failOneRequest(fault, method, 0, times);
    }

    /**
     * As {@link #failOneRequest(Fault, String, int)}, letting the first {@code skip} requests of
     * that method the fault applies to pass: the second completion of an upload, say.
     */
    public FaultProxy failOneRequest(Fault fault, String method, int skip, int times) {
        return force(fault, times, method, skip, () -> {});
    }

    private synchronized FaultProxy force(
            Fault fault, int count, String method, int skip, Runnable meanwhile) {
        beforeForcedReply = meanwhile;
        forcedSkip = skip;
        forced = fault;
        forcedRemaining = count;
        forcedMethod = method;
        forcedRequest = null;
        return this;
    }

    /** The fault failNext or failOneRequest asked for, if this request is to take it. */
    private synchronized Fault takeForced(HttpExchange exchange, byte[] body) {
        if (forced == null || forcedRemaining <= 0 || !appliesTo(forced, exchange, body)) {
            return null;
        }
        if (forcedMethod != null) {
            String request = exchange.getRequestMethod() + " " + exchange.getRequestURI();
            if (!exchange.getRequestMethod().equals(forcedMethod)
                    || (forcedRequest != null && !forcedRequest.equals(request))) {
                return null;
            }
            if (forcedSkip > 0) {
                forcedSkip--;
                return null;
            }
            forcedRequest = request;
        }
        forcedRemaining--;
        return forced;
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
        delayedWrites = null;
        delayedWritesReleased.countDown();
        return this;
    }

    /**
     * Holds each PUT whose path contains {@code pathPart} for {@code delay}, or until {@link
     * #heal}, before forwarding it: a store slow for one kind of object only (the completion
     * pointer's log, say).
     */
    public FaultProxy delayWrites(String pathPart, Duration delay) {
        delayedWritesReleased = new CountDownLatch(1);
        delayedWritesMillis = delay.toMillis();
        delayedWrites = pathPart;
        return this;
    }

    /** How many PUTs {@link #delayWrites} held. */
    public int delayed() {
        return delayed.get();
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
            String held = delayedWrites;
            if (held != null
                    && exchange.getRequestMethod().equals("PUT")
                    && exchange.getRequestURI().getPath().contains(held)) {
                delayed.incrementAndGet();
                delayedWritesReleased.await(delayedWritesMillis, TimeUnit.MILLISECONDS);
            }
            if (System.nanoTime() < outageUntilNanos) {
                injected.get(Fault.SLOW_DOWN_503).incrementAndGet();
                error(exchange, Fault.SLOW_DOWN_503);
                return;
            }
            Fault fault = pick(exchange, body);
            if (fault != null) {
                injected.get(fault).incrementAndGet();
            }
            if (fault == Fault.CONFLICT_409) {
                dropUploadIfCompleting(exchange);
            }
            if (fault != null && fault.code != null) {
                error(exchange, fault);
                return;
            }
            if (fault == Fault.LATENCY) {
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

    private Fault pick(HttpExchange exchange, byte[] body) {
        Fault once = takeForced(exchange, body);
        if (once != null) {
            beforeForcedReply.run(); // unlocked: it may send requests through this proxy
            return once;
        }
        Set<Fault> enabled = faults;
        if (enabled.isEmpty() || nextDouble() >= rate) {
            return null;
        }
        List<Fault> candidates =
                enabled.stream().filter(f -> appliesTo(f, exchange, body)).toList();
        return candidates.isEmpty() ? null : candidates.get(nextInt(candidates.size()));
    }

    /** Whether S3 could answer this request with {@code fault}. */
    private static boolean appliesTo(Fault fault, HttpExchange exchange, byte[] body) {
        Headers headers = exchange.getRequestHeaders();
        String method = exchange.getRequestMethod();
        return switch (fault) {
            case CONFLICT_409 ->
                    headers.containsKey("If-None-Match") || headers.containsKey("If-Match");
            case REQUEST_TIMEOUT_400 -> body.length > 0;
            // S3 answers a HEAD without a body, so the client would see a bare 400 or 403 and
            // could not tell it from a bad request or a denied one.
            case EXPIRED_TOKEN_400, TIME_SKEWED_403 -> !method.equals("HEAD");
            case COMPLETE_INTERNAL_200 -> isCompletion(exchange);
            case COPY_INTERNAL_200 ->
                    method.equals("PUT") && headers.containsKey("x-amz-copy-source");
            default -> true;
        };
    }

    /** CompleteMultipartUpload: a POST with the upload's id (starting one is a POST ?uploads). */
    private static boolean isCompletion(HttpExchange exchange) {
        String query = exchange.getRequestURI().getRawQuery();
        return exchange.getRequestMethod().equals("POST")
                && query != null
                && query.contains("uploadId=");
    }

    /**
     * After a 409 on CompleteMultipartUpload, S3 has dropped the upload ("re-initiate the multipart
     * upload with CreateMultipartUpload and re-upload each part"): so does this proxy, by aborting
     * it on the server behind.
     */
    private void dropUploadIfCompleting(HttpExchange exchange)
            throws IOException, InterruptedException {
        if (isCompletion(exchange)) {
            String uploadId =
                    exchange.getRequestURI().getRawQuery().replaceAll(".*uploadId=([^&]*).*", "$1");
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

    /**
     * Answers as S3 does. A 200 is S3 failing an operation it had already answered: headers and the
     * XML declaration at once, white space while it works, then the Error document in place of the
     * result; so the length is not known up front and the body is chunked.
     */
    private static void error(HttpExchange exchange, Fault fault) throws IOException {
        byte[] declaration =
                "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n".getBytes(StandardCharsets.UTF_8);
        byte[] document =
                ("<Error><Code>"
                                + fault.code
                                + "</Code><Message>"
                                + fault.message
                                + "</Message><RequestId>fault-proxy</RequestId></Error>")
                        .getBytes(StandardCharsets.UTF_8);
        exchange.getResponseHeaders().set("Content-Type", "application/xml");
        if (exchange.getRequestMethod().equals("HEAD")) {
            exchange.sendResponseHeaders(fault.status, -1);
            return;
        }
        boolean afterOk = fault.status == 200;
        exchange.sendResponseHeaders(
                fault.status, afterOk ? 0 : declaration.length + document.length);
        try (OutputStream os = exchange.getResponseBody()) {
            os.write(declaration);
            if (afterOk) {
                os.flush();
                os.write("\n  ".getBytes(StandardCharsets.UTF_8));
                os.flush();
            }
            os.write(document);
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
