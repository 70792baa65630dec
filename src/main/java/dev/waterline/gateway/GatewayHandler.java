package dev.waterline.gateway;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import com.github.f4b6a3.ulid.UlidCreator;
import dev.waterline.input.InputGate;
import dev.waterline.lifecycle.Failures;
import dev.waterline.lifecycle.Loops;
import dev.waterline.lifecycle.Workers;
import dev.waterline.lifecycle.ThrottledLog;
import dev.waterline.metrics.WaterlineMetrics;
import dev.waterline.presence.Location;
import dev.waterline.presence.Presence;
import dev.waterline.reaper.ReaperProperties;
import dev.waterline.reaper.Withdrawals;
import dev.waterline.session.ClientSession;
import dev.waterline.session.FrameHandler;
import dev.waterline.session.Frames;
import dev.waterline.session.SessionRegistry;
import dev.waterline.watermark.IndexHealth;
import dev.waterline.watermark.WatermarkIndex;
import io.micrometer.core.instrument.Counter;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.context.SmartLifecycle;
import org.springframework.context.event.ContextClosedEvent;
import org.springframework.context.event.EventListener;
import org.springframework.stereotype.Component;
import org.springframework.web.socket.BinaryMessage;
import org.springframework.web.socket.CloseStatus;
import org.springframework.web.socket.TextMessage;
import org.springframework.web.socket.WebSocketSession;
import org.springframework.web.socket.handler.TextWebSocketHandler;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * Reads client frames and hands each to the capability that answers its {@code type}
 * ({@link FrameHandler}s: messages, acks, read receipts). Before any handler sees a frame, every
 * string in it, field names included, has passed the input gate ({@link InputGate}: no U+0000, no
 * unpaired surrogate); a frame that fails is answered {@code invalid} and goes no further, so no
 * handler can queue, store or forward text that cannot be stored or written back. A bad frame
 * (malformed JSON, unknown type, a field of the wrong type) gets an {@code invalid} error and the
 * connection stays open; only a frame over {@code max-frame-bytes} closes it (1009).
 */
@Component
class GatewayHandler extends TextWebSocketHandler implements SmartLifecycle {

    private static final Log log = LogFactory.getLog(GatewayHandler.class);
    private static final String CONNECTION = "waterline.connection";

    private final GatewayProperties properties;
    private final OutboundBudget outboundBudget;
    private final SessionRegistry sessions;
    private final Map<String, FrameHandler> handlers = new HashMap<>();
    private final WatermarkIndex watermark;
    private final IndexHealth health;
    private final Withdrawals withdrawals;
    private final WaterlineMetrics metrics;
    private final Counter writeFailures;
    private final ThrottledLog writeFailureLog = new ThrottledLog();
    private final Counter transportErrors;
    private final JsonMapper json = JsonMapper.builder().build();
    private final Map<String, Object> limits;
    private final Loops loops;
    private final Presence presence;
    private volatile boolean running;
    private volatile boolean stopping;
    private Thread watchdog;

    GatewayHandler(GatewayProperties properties, ReaperProperties reapers, SessionRegistry sessions,
                   List<FrameHandler> frameHandlers, WatermarkIndex watermark, IndexHealth health,
                   Withdrawals withdrawals, WaterlineMetrics metrics, Loops loops, Presence presence) {
        this.loops = loops;
        this.presence = presence;
        this.properties = properties;
        this.outboundBudget = OutboundBudget.of(Runtime.getRuntime().maxMemory(), properties.outboundHeapShare());
        this.sessions = sessions;
        this.watermark = watermark;
        this.health = health;
        this.withdrawals = withdrawals;
        this.metrics = metrics;
        for (FrameHandler h : frameHandlers) {
            for (String type : h.types()) {
                FrameHandler other = handlers.putIfAbsent(type, h);
                if (other != null) {
                    throw new IllegalStateException("frame type " + type + " claimed by both " + other + " and " + h);
                }
            }
        }
        Map<String, Object> l = new LinkedHashMap<>();
        l.put("maxFrameBytes", properties.maxFrameBytes().toBytes());
        l.put("maxBodyChars", properties.maxBodyChars());
        l.put("maxInflightSends", properties.maxInflightSends());
        l.put("maxSendsPerSecond", properties.maxSendsPerSecond());
        l.put("idleTimeoutSeconds", reapers.idleTimeout().toSeconds());
        l.put("maxPending", reapers.maxPending());
        this.limits = Map.copyOf(l);
        metrics.gauge("waterline.connections.active", "open WebSocket sessions", sessions::size);
        this.writeFailures = metrics.counter("waterline.gateway.write.failures",
                "connections withdrawn because writing to them failed: a socket error (1011), or a client that does"
                        + " not read (4008: its queue past the send buffer, or a write in flight past the send time)");
        metrics.functionCounter("waterline.gateway.connections.refused",
                "connections closed as accepted: their address held max-connections-per-address already",
                GuardedProtocol::refusedTotal);
        metrics.gauge("waterline.gateway.outbound.queued.chars", "characters queued for clients, all connections together",
                outboundBudget::queued);
        metrics.functionCounter("waterline.gateway.heads.timed.out",
                "connections closed because their request head (line and headers) did not arrive whole within waterline.gateway.head-deadline",
                GuardedProtocol::headsTimedOutTotal);
        this.transportErrors = metrics.counter("waterline.gateway.transport.errors",
                "WebSocket transport errors reported by the container (a client vanished mid-frame, a reset)");
    }

    /** The frame types this server reads: those some capability answers, and {@code ping}, which the gateway answers itself. */
    java.util.Set<String> frameTypes() {
        java.util.Set<String> types = new java.util.TreeSet<>(handlers.keySet());
        types.add("ping");
        return java.util.Collections.unmodifiableSet(types);
    }

    @Override
    public void afterConnectionEstablished(WebSocketSession ws) {
        String userId = (String) ws.getAttributes().get(TokenHandshake.USER);
        long goodUntil = (Long) ws.getAttributes().get(TokenHandshake.GOOD_UNTIL);
        Connection conn = new Connection(ws, userId, goodUntil, UlidCreator.getMonotonicUlid().toString(), properties, outboundBudget,
                this::writeFailed);
        ws.getAttributes().put(CONNECTION, conn);
        if (stopping) {
            conn.close(CloseStatus.GOING_AWAY.getCode(), "server shutting down");
            return;
        }
        String node = presence.nodeId();
        boolean cluster = presence.clustered();
        // 0: registered; 1: the server is stopping; 2: Redis could not register it (cluster)
        int[] outcome = {0};
        WatermarkIndex.SessionLocation[] elsewhere = {null};
        // Registry and Redis epoch change together: two connections of one user racing here must
        // not leave Redis naming the evicted one while the registry names the survivor.
        ClientSession evicted = sessions.underUserLock(userId, () -> {
            ClientSession previous = sessions.register(conn);
            try {
                watermark.connect(conn, node).filter(p -> !p.node().equals(node)).ifPresent(p -> elsewhere[0] = p);
            }
            catch (RuntimeException e) {
                if (cluster) {
                    // Across nodes Redis is where one session per user is decided: without it
                    // this connection could live beside the user's connection on another node.
                    log.warn("could not register " + userId + "'s connection in Redis; closing it (1011): " + Failures.describe(e));
                    sessions.unregister(conn);
                    // the script may have run and only its answer been lost: an epoch without its
                    // connection, which the rebuild this suspicion brings removes
                    health.suspect();
                    outcome[0] = 2;
                    return previous;
                }
                log.warn("watermark index unavailable at connect of " + userId + " (delivery re-asserts it later): "
                        + Failures.describe(e));
                health.suspect();
            }
            // stop() sets the flag before it looks at the registry: a connection registered after
            // that is seen here instead, and leaves again
            if (stopping) {
                sessions.unregister(conn);
                health.suspect();   // Redis may name this connection now: rebuild before reclaiming
                outcome[0] = 1;
            }
            return previous;
        });
        if (outcome[0] != 0) {
            int code = outcome[0] == 1 ? CloseStatus.GOING_AWAY.getCode() : CloseStatus.SERVER_ERROR.getCode();
            String reason = outcome[0] == 1 ? "server shutting down" : "the server could not register this connection; reconnect";
            conn.close(code, reason);
            if (evicted != null) {
                evicted.close(code, reason);
            }
            return;
        }
        if (evicted != null) {
            evicted.closeNow(4009, "superseded by a newer connection");
        }
        if (elsewhere[0] != null) {
            // The user's older connection is on another node: it is closed there (4009) before
            // this one is welcomed, or evict-timeout passes (a node that does not answer: its
            // connection is no longer the epoch, and every delivery path refuses it).
            Location older = new Location(userId, elsewhere[0].node(), elsewhere[0].sessionId());
            try {
                presence.close(older, 4009, "superseded by a newer connection").join();
            }
            catch (RuntimeException e) {
                log.warn("could not ask node " + older.node() + " to close " + userId + "'s older connection: " + Failures.describe(e));
            }
        }
        // Registered first, so that anything committed from now on is offered to this connection
        // live; frames that raced ahead of welcome wait in the connection until it is written.
        conn.welcome(Frames.welcome(userId, conn.sessionId(), limits));
    }

    /**
     * A write to {@code conn} failed: counted and logged, and the connection withdrawn (its pins
     * dropped, never an ack) and closed with {@code code}, so that its client reconnects and
     * resyncs instead of staying on a socket that no longer receives anything.
     */
    private void writeFailed(Connection conn, String why, int code, String reason, Throwable cause) {
        writeFailures.increment();
        long unlogged = writeFailureLog.admit();
        if (unlogged >= 0) {
            log.warn("write to " + conn.userId() + "'s connection failed, withdrawing it (" + code + "): "
                    + Failures.describe(cause) + ThrottledLog.more(unlogged));
        }
        // The withdrawal talks to Redis and the close may wait for a stuck write: neither may hold
        // up the thread that wrote (a group-commit writer answering, a fast-path worker).
        Thread.startVirtualThread(() -> {
            if (!withdrawals.withdraw(conn, why, code, reason)) {
                conn.close(code, reason);
            }
        });
    }

    @Override
    public void afterConnectionClosed(WebSocketSession ws, CloseStatus status) {
        if (ws.getAttributes().get(CONNECTION) instanceof Connection conn) {
            conn.closed();
            sessions.underUserLock(conn.userId(), () -> {
                if (sessions.unregister(conn)) {
                    if (stopping) {
                        // Shutting down: no Redis call per connection (with Redis slow, thousands
                        // would hold the stop for minutes). The index is distrusted instead, so
                        // the next start (or resume) rebuilds it before anything is reclaimed; in
                        // the cluster this node's users leave live delivery in one sweep as the
                        // node leaves (presence), and the other nodes need rebuild nothing.
                        if (!presence.clustered()) {
                            health.suspect();
                        }
                        return null;
                    }
                    try {
                        watermark.disconnect(conn);
                    }
                    catch (RuntimeException e) {
                        log.warn("watermark index unavailable at disconnect of " + conn.userId()
                                + " (the next index rebuild drops it): " + e.getMessage());
                        health.suspect();
                    }
                }
                return null;
            });
        }
    }

    /**
     * The container hands over a frame in parts when it exceeds its receive buffer
     * ({@link WebSocketConfig}: kept small so that an idle connection costs little), and the
     * connection puts them together up to {@code max-frame-bytes}.
     */
    @Override
    public boolean supportsPartialMessages() {
        return true;
    }

    @Override
    protected void handleTextMessage(WebSocketSession ws, TextMessage message) {
        Connection conn = (Connection) ws.getAttributes().get(CONNECTION);
        if (!conn.isOpen() || !sessions.isCurrent(conn)) {
            // closed (e.g. 1009) while the container still hands over what it had read, or
            // withdrawn, superseded or expired (whoever did that closes it): never acted on
            return;
        }
        conn.received();
        long max = properties.maxFrameBytes().toBytes();
        String payload;
        try {
            payload = conn.assemble(message.getPayload(), message.isLast(), max);
        }
        catch (Connection.FrameTooLarge e) {
            tooLarge(conn, max);
            return;
        }
        if (payload == null) {
            return;
        }
        if (payload.length() > max / 3 && Frames.utf8Length(payload) > max) {
            tooLarge(conn, max);
            return;
        }
        JsonNode frame;
        try {
            frame = json.readTree(payload);
        }
        catch (JacksonException e) {
            invalid(conn, "malformed JSON", null);
            return;
        }
        if (frame == null || !frame.isObject()) {
            invalid(conn, "a frame must be a JSON object", null);
            return;
        }
        String problem = InputGate.treeProblem(frame);
        if (problem != null) {
            JsonNode type = frame.get("type");
            if (type != null && type.isString() && type.asString().equals("send")) {
                metrics.rejected("invalid").increment();
            }
            invalid(conn, "refused: " + problem + " (docs/PROTOCOL.md §3)", correlationIdOf(frame));
            return;
        }
        JsonNode type = frame.get("type");
        if (type == null || !type.isString()) {
            invalid(conn, "a frame needs a string type", null);
            return;
        }
        String t = type.asString();
        if (t.equals("ping")) {
            conn.send(Frames.pong());
            return;
        }
        FrameHandler handler = handlers.get(t);
        if (handler == null) {
            invalid(conn, "unknown type: " + InputGate.abbreviate(t, 64), null);
            return;
        }
        handler.handle(conn, t, frame);
    }

    /**
     * The correlationId of a refused frame, echoed only when it is itself acceptable text (a
     * {@code send} whose body failed the gate is still answered with its id, so the client knows
     * which send it was).
     */
    private static String correlationIdOf(JsonNode frame) {
        JsonNode c = frame.get("correlationId");
        return c != null && c.isString() && InputGate.isText(c.asString()) ? InputGate.abbreviate(c.asString(), 256) : null;
    }

    @Override
    protected void handleBinaryMessage(WebSocketSession ws, BinaryMessage message) {
        Connection conn = (Connection) ws.getAttributes().get(CONNECTION);
        if (!conn.isOpen() || !sessions.isCurrent(conn)) {
            return;
        }
        conn.received();
        long max = properties.maxFrameBytes().toBytes();
        try {
            if (conn.binaryPart(message.getPayloadLength(), message.isLast(), max)) {
                invalid(conn, "frames are JSON text frames", null);
            }
        }
        catch (Connection.FrameTooLarge e) {
            tooLarge(conn, max);
        }
    }

    private static void tooLarge(Connection conn, long max) {
        conn.close(CloseStatus.TOO_BIG_TO_PROCESS.getCode(), "frame larger than " + max + " bytes");
    }

    @Override
    public void handleTransportError(WebSocketSession ws, Throwable exception) {
        transportErrors.increment();
        log.debug("transport error on " + ws.getId() + ": " + exception);
    }

    private static void invalid(Connection conn, String message, String correlationId) {
        conn.send(Frames.error("invalid", message, correlationId));
    }

    /**
     * The write watchdog (one loop of {@link Loops}, every second): withdraws with 4008 every
     * connection one of whose writes has been blocked longer than {@code send-time-limit}.
     */
    @Override
    public void start() {
        running = true;
        stopping = false;   // a stopped context may be started again (the test framework pauses idle contexts)
        watchdog = loops.start("write_watchdog", "write-watchdog", () -> running, () -> {
            LockSupport.parkNanos(TimeUnit.SECONDS.toNanos(1));
            long now = System.nanoTime();
            for (ClientSession s : sessions.all()) {
                if (s instanceof Connection c) {
                    c.failIfStuck(now);
                }
            }
        });
    }

    /**
     * Shutdown begins (the context is closing, before any component stops): from now on a new
     * connection is closed with 1001 as it opens, while ingest drains what the open ones sent.
     */
    @EventListener(ContextClosedEvent.class)
    void closing() {
        stopping = true;
    }

    /**
     * Shutdown: once ingest has answered what it held, every client's writer finishes what is
     * queued for it (all at once, up to {@code close-timeout} in all) and the client is told 1001; a connection
     * that opens meanwhile is told 1001 at once.
     */
    @Override
    public void stop() {
        running = false;
        stopping = true;
        Workers.stop(watchdog, Duration.ofSeconds(2));
        long deadline = System.nanoTime() + properties.closeTimeout().toNanos();
        List<Thread> closing = new ArrayList<>();
        for (ClientSession s : sessions.all()) {
            if (s instanceof Connection c) {
                closing.add(Thread.startVirtualThread(() ->
                        c.drainThenClose(CloseStatus.GOING_AWAY.getCode(), "server shutting down", deadline)));
            }
            else {
                s.close(CloseStatus.GOING_AWAY.getCode(), "server shutting down");
            }
        }
        // all together within the deadline and a second more; closes still going on after that
        // finish on their own threads
        Workers.joinUntil(closing, deadline + TimeUnit.SECONDS.toNanos(1));
    }

    @Override
    public boolean isRunning() {
        return running;
    }

    /** Stops after ingest has answered every queued send, before delivery stops. */
    @Override
    public int getPhase() {
        return Integer.MAX_VALUE - 100;
    }
}
