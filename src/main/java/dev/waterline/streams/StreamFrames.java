package dev.waterline.streams;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import com.fasterxml.jackson.annotation.JsonInclude;
import dev.waterline.session.ClientSession;
import dev.waterline.session.FrameHandler;
import dev.waterline.session.Frames;
import dev.waterline.web.ApiException;
import dev.waterline.web.DatabaseTurns;
import org.springframework.stereotype.Component;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The stream frames of PROTOCOL.md §6 on the WebSocket: {@code subscribe}, {@code unsubscribe} and
 * {@code append} (answered {@code appended} or {@code error}, with {@code streamId}, and
 * {@code expectedSeq} for {@code gap} and {@code conflict}; an {@code append} may carry a
 * {@code correlationId} of the client's, which its answer echoes). A subscribe reads the stream
 * (membership) on the connection's reading thread, within a turn at PostgreSQL, so that a
 * connection's subscribes and unsubscribes take effect in the order it sent them; a second
 * subscribe to the same stream replaces the first. Subscribing and appending cost a token of the
 * connection's rate (shared with sends), and an append holds one of its send credits until it is
 * answered.
 */
@Component
class StreamFrames implements FrameHandler {

    static final int MAX_STREAM_ID = 128;
    static final int MAX_CORRELATION_ID = 64;
    private static final JsonMapper JSON = JsonMapper.builder().build();

    private final Streams streams;
    private final StreamRepository store;
    private final Tails tails;
    private final StreamProperties properties;
    private final DatabaseTurns turns;
    private final StreamMetrics metrics;
    private final dev.waterline.lifecycle.ThrottledLog subscribeFailures = new dev.waterline.lifecycle.ThrottledLog();
    private static final org.apache.commons.logging.Log log = org.apache.commons.logging.LogFactory.getLog(StreamFrames.class);
    /** Each connection's subscriptions, by stream; an entry leaves when its subscription ends. */
    private final Map<ClientSession, Map<String, Subscription>> subscriptions = new ConcurrentHashMap<>();

    StreamFrames(Streams streams, StreamRepository store, Tails tails, StreamProperties properties, DatabaseTurns turns,
                 StreamMetrics metrics) {
        this.streams = streams;
        this.store = store;
        this.tails = tails;
        this.properties = properties;
        this.turns = turns;
        this.metrics = metrics;
    }

    @Override
    public java.util.Set<String> types() {
        return java.util.Set.of("subscribe", "unsubscribe", "append");
    }

    @JsonInclude(JsonInclude.Include.NON_NULL)
    record Error(String type, String code, String message, String streamId, Long expectedSeq, String correlationId) {
    }

    @JsonInclude(JsonInclude.Include.NON_NULL)
    record Appended(String type, String streamId, long lastSeq, String correlationId) {
    }

    record State(String type, String streamId, String state, long lastSeq) {
    }

    static String error(String code, String message, String streamId, Long expectedSeq, String correlationId) {
        return JSON.writeValueAsString(new Error("error", code, message, streamId, expectedSeq, correlationId));
    }

    @Override
    public void handle(ClientSession from, String type, JsonNode frame) {
        JsonNode given = frame.get("streamId");
        String streamId = Frames.id(frame, "streamId", MAX_STREAM_ID);
        String echoed = given != null && given.isString() ? dev.waterline.input.InputGate.abbreviate(given.asString(), 256) : null;
        String correlationId = null;
        if (type.equals("append") && frame.has("correlationId")) {
            correlationId = Frames.id(frame, "correlationId", MAX_CORRELATION_ID);
            if (correlationId == null) {
                from.send(error("invalid", "correlationId must be a string of 1-" + MAX_CORRELATION_ID
                        + " characters without control characters", echoed, null, null));
                return;
            }
        }
        if (streamId == null) {
            from.send(error("invalid", "streamId must be a string of 1-" + MAX_STREAM_ID + " characters without control characters",
                    echoed, null, correlationId));
            return;
        }
        switch (type) {
            case "subscribe" -> subscribe(from, streamId, frame);
            case "unsubscribe" -> unsubscribe(from, streamId);
            case "append" -> append(from, streamId, frame, correlationId);
            default -> from.send(error("invalid", "unknown type", streamId, null, null));
        }
    }

    private void subscribe(ClientSession from, String streamId, JsonNode frame) {
        JsonNode f = frame.get("fromSeq");
        long fromSeq = 1;
        if (f != null && !f.isNull()) {
            if (!f.isIntegralNumber() || !f.canConvertToLong() || f.asLong() < 1) {
                from.send(error("invalid", "fromSeq must be an integer of at least 1", streamId, null, null));
                return;
            }
            fromSeq = f.asLong();
        }
        if (!from.admitRate()) {
            from.send(error("rate_limited", "over this connection's rate; not subscribed", streamId, null, null));
            return;
        }
        if (!mayFollowOneMore(from, streamId)) {
            from.send(error("rate_limited", "this connection follows " + properties.maxSubscriptionsPerConnection()
                    + " streams already; unsubscribe one first", streamId, null, null));
            return;
        }
        StreamView view;
        try {
            view = turns.run(() -> store.forMember(streamId, from.userId()).orElse(null));
        }
        catch (ApiException e) {
            metrics.refused("unavailable");
            from.send(error("unavailable", e.getMessage(), streamId, null, null));
            return;
        }
        catch (RuntimeException e) {
            metrics.refused("unavailable");
            long held = subscribeFailures.admit();
            if (held >= 0) {
                log.warn("a subscribe to stream " + streamId + " could not read it: " + e + dev.waterline.lifecycle.ThrottledLog.more(held));
            }
            from.send(error("unavailable", "the stream could not be read; subscribe again", streamId, null, null));
            return;
        }
        if (view == null) {
            from.send(error("not_found", "no such stream", streamId, null, null));
            return;
        }
        Subscription previous = take(from, streamId, null);
        if (previous != null) {
            previous.cancel();
        }
        Sink sink = new Sink(from, streamId);
        Subscription s = tails.follow(view, fromSeq, sink);
        sink.subscription = s;
        subscriptions.compute(from, (k, m) -> {
            Map<String, Subscription> mine = m == null ? new java.util.HashMap<>() : m;
            mine.put(streamId, s);
            return mine;
        });
        if (sink.ended) {
            take(from, streamId, s);
        }
    }

    private boolean mayFollowOneMore(ClientSession from, String streamId) {
        boolean[] may = {true};
        subscriptions.computeIfPresent(from, (k, m) -> {
            may[0] = m.containsKey(streamId) || m.size() < properties.maxSubscriptionsPerConnection();
            return m;
        });
        return may[0];
    }

    /**
     * Removes the connection's subscription to {@code streamId} (only if it is {@code which}, when
     * that is given) and returns it; the connection's entry goes with its last subscription. Every
     * change of the map is made inside its compute, so none is lost to a concurrent one.
     */
    private Subscription take(ClientSession conn, String streamId, Subscription which) {
        Subscription[] taken = {null};
        subscriptions.computeIfPresent(conn, (k, m) -> {
            Subscription s = m.get(streamId);
            if (s != null && (which == null || s == which)) {
                m.remove(streamId);
                taken[0] = s;
            }
            return m.isEmpty() ? null : m;
        });
        return taken[0];
    }

    private void unsubscribe(ClientSession from, String streamId) {
        Subscription s = take(from, streamId, null);
        if (s != null) {
            s.cancel();
        }
    }

    private void append(ClientSession from, String streamId, JsonNode frame, String correlationId) {
        List<NewChunk> chunks;
        try {
            chunks = ChunkInput.parse(frame.get("chunks"), properties);
        }
        catch (ChunkInput.Refused e) {
            metrics.refused(e.refusal.code());
            from.send(error(e.refusal.code(), e.refusal.message(), streamId, null, correlationId));
            return;
        }
        if (!from.admitSend()) {
            metrics.refused("rate_limited");
            from.send(error("rate_limited", "over this connection's credits or rate; nothing stored", streamId, null, correlationId));
            return;
        }
        streams.submit(AppendRequest.append(streamId, from.userId(), chunks, new AppendRequest.Reply() {
            @Override
            public void done(StreamView stream) {
                from.answered();
                from.send(JSON.writeValueAsString(new Appended("appended", streamId, stream.lastSeq(), correlationId)));
            }

            @Override
            public void refused(Refusal why) {
                from.answered();
                from.send(error(why.code(), why.message(), streamId, why.expectedSeq(), correlationId));
            }
        }));
    }

    /** Subscriptions followed on WebSocket connections now (for the tests and the gauge's cross-check). */
    int subscriptionCount() {
        int[] n = {0};
        subscriptions.forEach((conn, m) -> subscriptions.computeIfPresent(conn, (k, x) -> {
            n[0] += x.size();
            return x;
        }));
        return n[0];
    }

    /** A subscription's frames, on its connection. */
    private final class Sink implements Subscriber {

        private final ClientSession conn;
        private final String streamId;
        volatile Subscription subscription;
        volatile boolean ended;

        Sink(ClientSession conn, String streamId) {
            this.conn = conn;
            this.streamId = streamId;
        }

        @Override
        public boolean chunk(String id, Chunk chunk) {
            String f = chunk.frame(id);
            boolean sent;
            long committedAt = chunk.committedAtMillis();
            if (committedAt > 0) {
                sent = conn.send(f, () -> metrics.delivered(System.currentTimeMillis() - committedAt));
            }
            else {
                sent = conn.send(f);
            }
            if (sent) {
                metrics.frame();
            }
            return sent;
        }

        @Override
        public boolean state(String id, String state, long lastSeq) {
            return conn.send(JSON.writeValueAsString(new State("stream", id, state, lastSeq)));
        }

        @Override
        public void end() {
            ended = true;
            Subscription s = subscription;
            if (s != null) {
                take(conn, streamId, s);
            }
        }

        @Override
        public void failed(String code, String message) {
            conn.send(error(code, message, streamId, null, null));
            end();
        }

        @Override
        public boolean isOpen() {
            return !ended && conn.isOpen();
        }

        @Override
        public long backlog() {
            return conn.queuedChars();
        }
    }
}
