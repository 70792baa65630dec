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
import dev.waterline.reaper.ReaperProperties;
import dev.waterline.reaper.Withdrawals;
import dev.waterline.session.ClientSession;
import dev.waterline.session.FrameHandler;
import dev.waterline.session.Frames;
import dev.waterline.session.SessionRegistry;
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
    private final Admission admission;
    private final Withdrawals withdrawals;
    private final GatewayMetrics metrics;
    private final ThrottledLog writeFailureLog = new ThrottledLog();
    private final JsonMapper json = JsonMapper.builder().build();
    private final Map<String, Object> limits;
    private final Loops loops;
    private volatile boolean running;
    private volatile boolean stopping;
    private Thread watchdog;

    GatewayHandler(GatewayProperties properties, ReaperProperties reapers, SessionRegistry sessions,
                   List<FrameHandler> frameHandlers, Admission admission, Withdrawals withdrawals, GatewayMetrics metrics,
                   Loops loops) {
        this.loops = loops;
        this.properties = properties;
        this.outboundBudget = OutboundBudget.of(Runtime.getRuntime().maxMemory(), properties.outboundHeapShare());
        this.sessions = sessions;
        this.admission = admission;
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
        metrics.outboundQueued(outboundBudget::queued);
    }

    /** The frame types this server reads: those some capability answers, and {@code ping}, which the gateway answers itself. */
    java.util.Set<String> frameTypes() {
        java.util.Set<String> types = new java.util.TreeSet<>(handlers.keySet());
        types.add("ping");
        return java.util.Collections.unmodifiableSet(types);
    }

    /**
     * A new connection: {@link Admission} lets it in (registered, its user's earlier connections
     * closed) and it is welcomed, or it is closed as admission says. Registered first, so that
     * anything committed from now on is offered to this connection live; frames that raced ahead
     * of welcome wait in the connection until it is written.
     */
    @Override
    public void afterConnectionEstablished(WebSocketSession ws) {
        String userId = (String) ws.getAttributes().get(TokenHandshake.USER);
        long goodUntil = (Long) ws.getAttributes().get(TokenHandshake.GOOD_UNTIL);
        Connection conn = new Connection(ws, userId, goodUntil, UlidCreator.getMonotonicUlid().toString(), properties, outboundBudget,
                this::writeFailed, metrics.closeFailures());
        ws.getAttributes().put(CONNECTION, conn);
        switch (admission.admit(conn, () -> stopping)) {
            case Admission.Refused refused -> conn.close(refused.code(), refused.reason());
            case Admission.Admitted admitted -> conn.welcome(Frames.welcome(userId, conn.sessionId(), limits));
        }
    }

    /**
     * A write to {@code conn} failed: counted and logged, and the connection withdrawn (its pins
     * dropped, never an ack) and closed with {@code code}, so that its client reconnects and
     * resyncs instead of staying on a socket that no longer receives anything.
     */
    private void writeFailed(Connection conn, String why, int code, String reason, Throwable cause) {
        metrics.writeFailures().increment();
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
            admission.leave(conn, () -> stopping);
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
        catch (FrameAssembler.FrameTooLarge e) {
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
                metrics.invalidSends().increment();
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
        catch (FrameAssembler.FrameTooLarge e) {
            tooLarge(conn, max);
        }
    }

    private static void tooLarge(Connection conn, long max) {
        conn.close(CloseStatus.TOO_BIG_TO_PROCESS.getCode(), "frame larger than " + max + " bytes");
    }

    @Override
    public void handleTransportError(WebSocketSession ws, Throwable exception) {
        metrics.transportErrors().increment();
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
