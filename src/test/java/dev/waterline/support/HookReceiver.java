package dev.waterline.support;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BiFunction;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import tools.jackson.databind.JsonNode;

/**
 * A real HTTP server for hook tests, on the address "localhost" resolves to first (the one the
 * hook's SSRF guard will pick and connect to): records every request (headers, body, arrival) and
 * answers what the test's responder says, given the request and how many requests its idempotency
 * key has had before it (0 for the first).
 */
public final class HookReceiver implements AutoCloseable {

    /** One request as it arrived. */
    public record Request(String method, String path, Map<String, List<String>> headers, String body, long arrivedNanos) {

        public String header(String name) {
            for (var e : headers.entrySet()) {
                if (e.getKey().equalsIgnoreCase(name)) {
                    return e.getValue().getFirst();
                }
            }
            return null;
        }

        public String key() {
            return header("Waterline-Idempotency-Key");
        }

        public JsonNode json() {
            return Api.JSON.readTree(body);
        }
    }

    /** What to answer: a status, headers, how long to wait first, and whether to trickle a body for ever after. */
    public record Answer(int status, Map<String, String> headers, long delayMillis, boolean trickling) {

        public Answer(int status, Map<String, String> headers, long delayMillis) {
            this(status, headers, delayMillis, false);
        }

        public static Answer status(int status) {
            return new Answer(status, Map.of(), 0);
        }

        /** 200 with its headers at once, then a byte of body every half second, never ending (until the caller hangs up). */
        public static Answer trickle() {
            return new Answer(200, Map.of(), 0, true);
        }
    }

    private final HttpServer server;
    private final List<Request> requests = new ArrayList<>();
    private final Map<String, AtomicInteger> perKey = new ConcurrentHashMap<>();
    private final ScheduledExecutorService later = Executors.newSingleThreadScheduledExecutor();
    private final AtomicInteger open = new AtomicInteger();
    private final AtomicInteger mostAtOnce = new AtomicInteger();
    private volatile BiFunction<Request, Integer, Answer> responder = (r, n) -> Answer.status(200);

    public HookReceiver() {
        try {
            server = HttpServer.create(new InetSocketAddress(InetAddress.getByName("localhost"), 0), 0);
        }
        catch (IOException e) {
            throw new IllegalStateException(e);
        }
        server.setExecutor(Executors.newVirtualThreadPerTaskExecutor());
        server.createContext("/", exchange -> {
            Answer a;
            try (InputStream in = exchange.getRequestBody()) {
                String body = new String(in.readAllBytes(), StandardCharsets.UTF_8);
                Request r = new Request(exchange.getRequestMethod(), exchange.getRequestURI().toString(),
                        Map.copyOf(exchange.getRequestHeaders()), body, System.nanoTime());
                synchronized (requests) {
                    requests.add(r);
                }
                int before = r.key() == null ? 0 : perKey.computeIfAbsent(r.key(), k -> new AtomicInteger()).getAndIncrement();
                a = responder.apply(r, before);
            }
            catch (IOException e) {
                // the caller gave up before its request was read: nothing to answer
                exchange.close();
                return;
            }
            mostAtOnce.accumulateAndGet(open.incrementAndGet(), Math::max);
            // a slow target answers later, from the timer: no thread waits for it
            later.schedule(() -> answer(exchange, a, 0), a.delayMillis(), TimeUnit.MILLISECONDS);
        });
        server.start();
    }

    /** Sends {@code a}; a trickling answer writes its {@code written}th byte and comes back in half a second for the next. */
    private void answer(HttpExchange exchange, Answer a, int written) {
        try {
            if (written == 0) {
                a.headers().forEach((k, v) -> exchange.getResponseHeaders().add(k, v));
                exchange.sendResponseHeaders(a.status(), a.trickling() ? 0 : -1);
            }
            if (a.trickling() && written < 120) {
                exchange.getResponseBody().write('x');
                exchange.getResponseBody().flush();
                later.schedule(() -> answer(exchange, a, written + 1), 500, TimeUnit.MILLISECONDS);
                return;
            }
        }
        catch (IOException e) {
            // the caller hung up (its timeout): the exchange is closed below
        }
        open.decrementAndGet();
        exchange.close();
    }

    /**
     * A responder for a target that earns a hook's trust, then turns slow: each path's first
     * {@code fast} requests answered 200 at once, every later one 200 after {@code slowMillis}.
     */
    public static BiFunction<Request, Integer, Answer> fastThenSlow(int fast, long slowMillis) {
        Map<String, AtomicInteger> seen = new ConcurrentHashMap<>();
        return (r, before) -> seen.computeIfAbsent(r.path(), p -> new AtomicInteger()).getAndIncrement() < fast
                ? Answer.status(200) : new Answer(200, Map.of(), slowMillis);
    }

    /** The most requests this receiver had open (read, not yet answered) at once. */
    public int mostAtOnce() {
        return mostAtOnce.get();
    }

    public HookReceiver respond(BiFunction<Request, Integer, Answer> responder) {
        this.responder = responder;
        return this;
    }

    /** The URL of this receiver by the name "localhost", with {@code path}. */
    public String url(String path) {
        return "http://localhost:" + server.getAddress().getPort() + path;
    }

    public int port() {
        return server.getAddress().getPort();
    }

    public List<Request> requests() {
        synchronized (requests) {
            return List.copyOf(requests);
        }
    }

    public List<Request> requestsFor(String key) {
        return requests().stream().filter(r -> key.equals(r.key())).toList();
    }

    @Override
    public void close() {
        server.stop(0);
        later.shutdownNow();
    }
}
