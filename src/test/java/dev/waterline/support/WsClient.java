package dev.waterline.support;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.WebSocket;
import java.net.http.WebSocketHandshakeException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

import tools.jackson.databind.JsonNode;

/**
 * A WebSocket client written against PROTOCOL.md alone (the JDK's client, not the server's
 * classes). Frames are kept in arrival order; {@link #next} takes the first untaken one that
 * matches, waiting for it if need be, and leaves the frames it skips for later calls.
 */
public final class WsClient implements AutoCloseable {

    private static final HttpClient HTTP = HttpClient.newHttpClient();

    private final WebSocket socket;
    private final List<JsonNode> frames = new ArrayList<>();
    private final Set<JsonNode> taken = Collections.newSetFromMap(new IdentityHashMap<>());
    private final Map<JsonNode, Long> arrivedAt = Collections.synchronizedMap(new IdentityHashMap<>());
    private final CompletableFuture<Integer> closeCode = new CompletableFuture<>();
    private volatile long closedAtNanos;
    /** The JDK client allows one outstanding send: the test thread and the auto-acker take turns. */
    private final Object sendLock = new Object();
    private volatile boolean autoAck;

    private WsClient(URI uri, String bearer) {
        WebSocket.Builder b = HTTP.newWebSocketBuilder().connectTimeout(Duration.ofSeconds(5));
        if (bearer != null) {
            b.header("Authorization", "Bearer " + bearer);
        }
        this.socket = b.buildAsync(uri, new Listener()).join();
    }

    /** Connects with the token in the Authorization header. */
    public static WsClient connect(int port, String token) {
        return new WsClient(URI.create("ws://127.0.0.1:" + port + "/ws"), token);
    }

    /** Connects and takes the {@code welcome} frame, which always comes first. */
    public static WsClient connectWelcomed(int port, String token) {
        WsClient c = connect(port, token);
        try {
            c.next("welcome");
            return c;
        }
        catch (RuntimeException | Error e) {
            c.close();
            throw e;
        }
    }

    /** Connects with the token as the {@code access_token} query parameter, as browsers do. */
    public static WsClient connectWithQueryToken(int port, String token) {
        return new WsClient(URI.create("ws://127.0.0.1:" + port + "/ws?access_token=" + token), null);
    }

    /** The HTTP status of a refused handshake, or -1 when the upgrade succeeded. */
    public static int handshakeStatus(int port, String bearer, String queryToken) {
        String q = queryToken == null ? "" : "?access_token=" + queryToken;
        try (WsClient c = new WsClient(URI.create("ws://127.0.0.1:" + port + "/ws" + q), bearer)) {
            return -1;
        }
        catch (CompletionException e) {
            if (e.getCause() instanceof WebSocketHandshakeException h) {
                return h.getResponse().statusCode();
            }
            throw e;
        }
    }

    /**
     * From now on, ack every {@code message} frame as it arrives (the frames are still kept for
     * {@link #next}), as a well-behaved client does, so the reapers leave this client alone.
     */
    public WsClient autoAck() {
        this.autoAck = true;
        return this;
    }

    public void sendRaw(String text) {
        synchronized (sendLock) {
            socket.sendText(text, true).join();
        }
    }

    public void sendBinary(byte[] data) {
        synchronized (sendLock) {
            socket.sendBinary(ByteBuffer.wrap(data), true).join();
        }
    }

    public void send(Map<String, ?> frame) {
        sendRaw(Api.JSON.writeValueAsString(frame));
    }

    public void sendMessage(String correlationId, String chatId, String body) {
        send(Map.of("type", "send", "correlationId", correlationId, "chatId", chatId, "body", body));
    }

    public void ack(long... deliveryIds) {
        List<Long> ids = new ArrayList<>();
        for (long id : deliveryIds) {
            ids.add(id);
        }
        send(Map.of("type", "ack", "ids", ids));
    }

    /** The next not-yet-taken frame matching {@code match}, waiting up to {@code timeout}; fails the test if none comes. */
    public synchronized JsonNode next(Predicate<JsonNode> match, Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            for (JsonNode f : frames) {
                if (!taken.contains(f) && match.test(f)) {
                    taken.add(f);
                    return f;
                }
            }
            long leftMs = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
            if (leftMs <= 0) {
                throw new AssertionError("no matching frame within " + timeout + "; received: " + frames);
            }
            try {
                wait(leftMs);
            }
            catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError(e);
            }
        }
    }

    public JsonNode next(String type) {
        return next(f -> type.equals(f.path("type").asString()), Duration.ofSeconds(10));
    }

    /** The next {@code accepted} or {@code error} frame answering this correlationId. */
    public JsonNode answer(String correlationId) {
        return next(f -> correlationId.equals(f.path("correlationId").asString())
                && ("accepted".equals(f.path("type").asString()) || "error".equals(f.path("type").asString())),
                Duration.ofSeconds(15));
    }

    /** Every frame received so far, taken or not, without waiting. */
    public synchronized List<JsonNode> received() {
        return List.copyOf(frames);
    }

    /** When {@code frame} arrived ({@link System#nanoTime()}). */
    public long arrivedAtNanos(JsonNode frame) {
        return arrivedAt.get(frame);
    }

    private synchronized void arrived(JsonNode frame) {
        arrivedAt.put(frame, System.nanoTime());
        frames.add(frame);
        notifyAll();
    }

    /** The close code once the server closes the connection. */
    public int awaitClose(Duration timeout) {
        return closeCode.orTimeout(timeout.toMillis(), TimeUnit.MILLISECONDS).join();
    }

    public boolean isClosed() {
        return closeCode.isDone();
    }

    /** When the server's close arrived ({@link System#nanoTime()}), or 0 while open. */
    public long closedAtNanos() {
        return closedAtNanos;
    }

    @Override
    public void close() {
        if (!socket.isOutputClosed()) {
            socket.sendClose(WebSocket.NORMAL_CLOSURE, "bye").exceptionally(e -> null);
        }
        socket.abort();
    }

    private final class Listener implements WebSocket.Listener {
        private final StringBuilder partial = new StringBuilder();

        @Override
        public CompletionStage<?> onText(WebSocket ws, CharSequence data, boolean last) {
            partial.append(data);
            if (last) {
                JsonNode frame = Api.JSON.readTree(partial.toString());
                partial.setLength(0);
                arrived(frame);
                if (autoAck && "message".equals(frame.path("type").asString())) {
                    long id = frame.get("deliveryId").asLong();
                    // Not on the listener's thread: a send may wait for the test thread's send.
                    Thread.startVirtualThread(() -> {
                        try {
                            ack(id);
                        }
                        catch (RuntimeException closedMeanwhile) {
                            // the test closed the connection; nothing left to ack
                        }
                    });
                }
            }
            ws.request(1);
            return null;
        }

        @Override
        public CompletionStage<?> onClose(WebSocket ws, int statusCode, String reason) {
            closedAtNanos = System.nanoTime();
            closeCode.complete(statusCode);
            return null;
        }

        @Override
        public void onError(WebSocket ws, Throwable error) {
            closeCode.complete(1006);
        }
    }
}
