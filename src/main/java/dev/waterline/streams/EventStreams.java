package dev.waterline.streams;

import java.io.IOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import jakarta.servlet.http.HttpServletResponse;
import org.springframework.context.SmartLifecycle;
import org.springframework.stereotype.Component;
import tools.jackson.databind.json.JsonMapper;

/**
 * Server-sent events for {@code GET /api/streams/{id}/events} (PROTOCOL.md §6). The request's own
 * (virtual) thread writes the response: it follows the stream through a {@link Sink} whose queue
 * the replay and the tail fill without waiting, and writes what it takes, flushing whenever the
 * queue is empty; a comment line every 15 s keeps proxies from timing out an idle stream and finds
 * a client that left. The response ends after the final {@code stream} event, when the client
 * goes, when the client reads so slowly that more than four subscriber buffers wait for it (it
 * resumes with {@code Last-Event-ID}), and at shutdown (before the web server's graceful stop
 * waits for requests).
 */
@Component
class EventStreams implements SmartLifecycle {

    private static final JsonMapper JSON = JsonMapper.builder().build();
    private static final String END = "";
    private static final long KEEP_ALIVE_SECONDS = 15;

    private final Tails tails;
    private final StreamMetrics metrics;
    private final long overflowChars;
    private final Set<Sink> active = ConcurrentHashMap.newKeySet();
    private volatile boolean running;

    EventStreams(Tails tails, StreamMetrics metrics, StreamProperties properties) {
        this.tails = tails;
        this.metrics = metrics;
        this.overflowChars = properties.subscriberBufferChars() * 4;
    }

    /**
     * Serves {@code stream} from {@code fromSeq} until it ends, the client goes away, the server
     * stops, or {@code goodUntilMillis} (the token's expiry) passes: then a last comment says why
     * and the response ends, as a WebSocket session ends with 4001; the client resumes with a fresh
     * token and {@code Last-Event-ID}.
     */
    void serve(StreamView stream, long fromSeq, long goodUntilMillis, HttpServletResponse response) throws IOException {
        response.setStatus(200);
        response.setContentType("text/event-stream");
        response.setCharacterEncoding(StandardCharsets.UTF_8.name());
        response.setHeader("Cache-Control", "no-cache");
        response.setHeader("X-Accel-Buffering", "no");
        Sink sink = new Sink();
        active.add(sink);
        if (!running) {
            sink.end();
        }
        Subscription sub = tails.follow(stream, fromSeq, sink);
        try {
            Writer out = response.getWriter();
            out.write(": following stream " + stream.streamId() + "\n\n");
            out.flush();
            while (true) {
                long untilExpiry = goodUntilMillis - System.currentTimeMillis();
                if (untilExpiry <= 0) {
                    metrics.sseExpired();
                    out.write(": token expired; reconnect with a fresh token and Last-Event-ID\n\n");
                    break;
                }
                String event = sink.queue.poll(Math.min(TimeUnit.SECONDS.toMillis(KEEP_ALIVE_SECONDS), untilExpiry), TimeUnit.MILLISECONDS);
                if (event == null) {
                    if (goodUntilMillis > System.currentTimeMillis()) {
                        out.write(": keep-alive\n\n");
                        out.flush();
                    }
                    continue;
                }
                if (event.isEmpty()) {
                    break;
                }
                sink.taken(event);
                out.write(event);
                if (sink.queue.isEmpty()) {
                    out.flush();
                }
            }
            out.flush();
        }
        catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        catch (IOException e) {
            // the client went away: nothing more to write, nothing lost (it resumes with Last-Event-ID)
        }
        finally {
            sink.closed = true;
            sub.cancel();
            active.remove(sink);
        }
    }

    record StateEvent(String streamId, String state, long lastSeq) {
    }

    /** A subscriber that queues events for the request's thread. */
    final class Sink implements Subscriber {

        final LinkedBlockingQueue<String> queue = new LinkedBlockingQueue<>();
        private final AtomicLong chars = new AtomicLong();
        volatile boolean closed;

        private boolean offer(String event) {
            if (closed) {
                return false;
            }
            if (chars.addAndGet(event.length()) > overflowChars) {
                // a reader this slow resumes with Last-Event-ID rather than hold the server's memory
                end();
                return false;
            }
            queue.add(event);
            return true;
        }

        void taken(String event) {
            chars.addAndGet(-event.length());
        }

        @Override
        public boolean chunk(String streamId, Chunk chunk) {
            boolean ok = offer(chunk.event());
            if (ok) {
                metrics.frame();
            }
            return ok;
        }

        @Override
        public boolean state(String streamId, String state, long lastSeq) {
            return offer("event: stream\ndata: " + JSON.writeValueAsString(new StateEvent(streamId, state, lastSeq)) + "\n\n");
        }

        @Override
        public void end() {
            if (!closed) {
                closed = true;
                queue.add(END);
            }
        }

        @Override
        public void failed(String code, String message) {
            if (!closed) {
                queue.add("event: error\ndata: " + JSON.writeValueAsString(java.util.Map.of("code", code, "message", message)) + "\n\n");
            }
            end();
        }

        @Override
        public boolean isOpen() {
            return !closed;
        }

        @Override
        public long backlog() {
            return chars.get();
        }
    }

    @Override
    public void start() {
        running = true;
    }

    /** Ends every event stream, so that the web server's graceful shutdown does not wait for them. */
    @Override
    public void stop() {
        running = false;
        active.forEach(Sink::end);
    }

    @Override
    public boolean isRunning() {
        return running;
    }

    @Override
    public int getPhase() {
        return Integer.MAX_VALUE - 100;
    }
}
