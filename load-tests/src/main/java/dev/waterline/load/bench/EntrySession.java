package dev.waterline.load.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import dev.waterline.load.clients.WsLink;
import tools.jackson.databind.JsonNode;

/**
 * One user's WebSocket for seeding a chat: frames go out with at most {@code window} awaiting
 * their answer, each answer completes its frame's future, a frame refused for now
 * ({@code rate_limited}, {@code overloaded}, {@code unavailable}) goes again with the same
 * correlationId after 50 ms, and every delivery is acked as soon as the read that brought it is
 * handed over (and every 20 ms besides), so that the server never withdraws the connection.
 */
final class EntrySession implements WsLink.Events, AutoCloseable {

    private final Semaphore window;
    private final Map<String, CompletableFuture<JsonNode>> pending = new ConcurrentHashMap<>();
    private final Map<String, String> frames = new ConcurrentHashMap<>();
    private final ConcurrentLinkedQueue<Long> acks = new ConcurrentLinkedQueue<>();
    private final CompletableFuture<Void> welcomed = new CompletableFuture<>();
    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "seed-session");
        t.setDaemon(true);
        return t;
    });
    private final AtomicLong retries = new AtomicLong();
    private final AtomicLong uncorrelatedErrors = new AtomicLong();
    private volatile WsLink link;
    private volatile int closedWith;

    EntrySession(int window) {
        this.window = new Semaphore(window);
    }

    /** Connects, waits for the welcome and starts acking. */
    static EntrySession open(WsLink.Connector connector, BenchHttp http, String token, int window) throws Exception {
        EntrySession s = new EntrySession(window);
        s.link = connector.connect(http.ws(), token, s).get(15, TimeUnit.SECONDS);
        s.welcomed.get(15, TimeUnit.SECONDS);
        s.timer.scheduleWithFixedDelay(s::flushAcks, 20, 20, TimeUnit.MILLISECONDS);
        return s;
    }

    /** Sends one frame (waiting for room in the window); its future completes with the {@code accepted} answer. */
    CompletableFuture<JsonNode> request(String correlationId, String frame) throws InterruptedException {
        window.acquire();
        CompletableFuture<JsonNode> f = new CompletableFuture<>();
        pending.put(correlationId, f);
        frames.put(correlationId, frame);
        write(frame);
        return f;
    }

    /** Sends a frame the server answers only when it refuses it (a {@code read} receipt); such refusals are counted. */
    void post(String frame) {
        write(frame);
    }

    long retries() {
        return retries.get();
    }

    /** Errors that named no frame of this session's (a refused {@code read}, say). */
    long uncorrelatedErrors() {
        return uncorrelatedErrors.get();
    }

    private void write(String frame) {
        if (closedWith != 0) {
            failAll();
            return;
        }
        try {
            link.send(frame);
        }
        catch (Exception e) {
            failAll();
        }
    }

    private synchronized void flushAcks() {
        List<Long> ids = new ArrayList<>();
        Long id;
        while (ids.size() < 5000 && (id = acks.poll()) != null) {
            ids.add(id);
        }
        if (!ids.isEmpty()) {
            write("{\"type\":\"ack\",\"ids\":" + ids + "}");
        }
    }

    @Override
    public void onText(String text) {
        for (String one : text.split("\n")) {
            onFrame(BenchHttp.JSON.readTree(one));
        }
        if (!link.writesOnReadComplete()) {
            flushAcks();
        }
    }

    /** The acks of everything one read delivered, at once: the server withdraws a user holding more than 20 unacked. */
    @Override
    public void onReadComplete() {
        flushAcks();
    }

    private void onFrame(JsonNode f) {
        String type = f.path("type").asString("");
        String corr = f.path("correlationId").asString(null);
        switch (type) {
            case "welcome" -> welcomed.complete(null);
            case "message" -> acks.add(f.path("deliveryId").asLong());
            case "accepted" -> {
                CompletableFuture<JsonNode> p = corr == null ? null : pending.remove(corr);
                if (p != null) {
                    frames.remove(corr);
                    window.release();
                    p.complete(f);
                }
            }
            case "error" -> {
                String code = f.path("code").asString("");
                String frame = corr == null ? null : frames.get(corr);
                if (frame != null && (code.equals("rate_limited") || code.equals("overloaded") || code.equals("unavailable"))) {
                    retries.incrementAndGet();
                    timer.schedule(() -> write(frame), 50, TimeUnit.MILLISECONDS);
                    return;
                }
                CompletableFuture<JsonNode> p = corr == null ? null : pending.remove(corr);
                if (p != null) {
                    frames.remove(corr);
                    window.release();
                    p.completeExceptionally(new IllegalStateException("refused " + code + ": " + f));
                }
                else {
                    uncorrelatedErrors.incrementAndGet();
                    System.err.println("seeding: a frame was refused: " + f);
                }
            }
            default -> { }
        }
    }

    @Override
    public void onClose(int code) {
        closedWith = code;
        welcomed.completeExceptionally(new IllegalStateException("closed " + code));
        failAll();
    }

    private void failAll() {
        for (String corr : List.copyOf(pending.keySet())) {
            CompletableFuture<JsonNode> p = pending.remove(corr);
            if (p != null) {
                window.release();
                p.completeExceptionally(new IllegalStateException("connection closed (" + closedWith + ") before the answer"));
            }
        }
    }

    @Override
    public void close() {
        flushAcks();
        timer.shutdownNow();
        WsLink l = link;
        if (l != null) {
            l.close("seeded");
        }
    }
}
