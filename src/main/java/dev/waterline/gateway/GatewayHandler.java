package dev.waterline.gateway;

import java.util.LinkedHashMap;
import java.util.Map;

import com.github.f4b6a3.ulid.UlidCreator;
import dev.waterline.ingest.Ingest;
import dev.waterline.ingest.SendReply;
import dev.waterline.ingest.SendRequest;
import dev.waterline.metrics.WaterlineMetrics;
import dev.waterline.reaper.ReaperProperties;
import dev.waterline.receipts.ReadRequest;
import dev.waterline.receipts.Receipts;
import dev.waterline.session.ClientSession;
import dev.waterline.session.Frames;
import dev.waterline.session.SessionRegistry;
import dev.waterline.watermark.AckRecorder;
import dev.waterline.watermark.IndexHealth;
import dev.waterline.watermark.WatermarkIndex;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.context.SmartLifecycle;
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
 * Reads client frames and answers them. A bad frame (malformed JSON, unknown type, a field of
 * the wrong type) gets an {@code invalid} error and the connection stays open; only a frame over
 * {@code max-frame-bytes} closes it (1009). Sends are validated, charged against the
 * connection's credits and rate, and queued for group commit; their answer comes later from
 * ingest through {@link Reply}.
 */
@Component
class GatewayHandler extends TextWebSocketHandler implements SmartLifecycle {

    private static final Log log = LogFactory.getLog(GatewayHandler.class);
    private static final String CONNECTION = "waterline.connection";
    private static final int MAX_CORRELATION_ID = 64;
    private static final int MAX_CHAT_ID = 128;
    private static final int MAX_ACK_IDS = 10_000;

    private final GatewayProperties properties;
    private final SessionRegistry sessions;
    private final Ingest ingest;
    private final Receipts receipts;
    private final WatermarkIndex watermark;
    private final AckRecorder acks;
    private final IndexHealth health;
    private final WaterlineMetrics metrics;
    private final JsonMapper json = JsonMapper.builder().build();
    private final Map<String, Object> limits;
    private volatile boolean running;

    GatewayHandler(GatewayProperties properties, ReaperProperties reapers, SessionRegistry sessions, Ingest ingest,
                   Receipts receipts, WatermarkIndex watermark, AckRecorder acks, IndexHealth health,
                   WaterlineMetrics metrics) {
        this.acks = acks;
        this.health = health;
        this.properties = properties;
        this.sessions = sessions;
        this.ingest = ingest;
        this.receipts = receipts;
        this.watermark = watermark;
        this.metrics = metrics;
        Map<String, Object> l = new LinkedHashMap<>();
        l.put("maxFrameBytes", properties.maxFrameBytes().toBytes());
        l.put("maxBodyChars", properties.maxBodyChars());
        l.put("maxInflightSends", properties.maxInflightSends());
        l.put("maxSendsPerSecond", properties.maxSendsPerSecond());
        l.put("idleTimeoutSeconds", reapers.idleTimeout().toSeconds());
        l.put("maxPending", reapers.maxPending());
        this.limits = Map.copyOf(l);
        metrics.gauge("waterline.connections.active", "open WebSocket sessions", sessions::size);
    }

    @Override
    public void afterConnectionEstablished(WebSocketSession ws) {
        String userId = (String) ws.getAttributes().get(TokenHandshake.USER);
        Connection conn = new Connection(ws, userId, UlidCreator.getMonotonicUlid().toString(), properties);
        ws.getAttributes().put(CONNECTION, conn);
        // Registry and Redis epoch change together: two connections of one user racing here must
        // not leave Redis naming the evicted one while the registry names the survivor.
        ClientSession evicted = sessions.underUserLock(userId, () -> {
            ClientSession previous = sessions.register(conn);
            try {
                watermark.connect(conn);
            }
            catch (RuntimeException e) {
                log.warn("watermark index unavailable at connect of " + userId + " (delivery re-asserts it later): "
                        + e.getMessage());
                health.suspect();
            }
            return previous;
        });
        if (evicted != null) {
            evicted.close(4009, "superseded by a newer connection");
        }
        // Registered first, so that anything committed from now on is offered to this connection
        // live; frames that raced ahead of welcome wait in the connection until it is written.
        conn.welcome(Frames.welcome(userId, conn.sessionId(), limits));
    }

    @Override
    public void afterConnectionClosed(WebSocketSession ws, CloseStatus status) {
        if (ws.getAttributes().get(CONNECTION) instanceof Connection conn) {
            sessions.underUserLock(conn.userId(), () -> {
                if (sessions.unregister(conn)) {
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
        if (!ws.isOpen()) {
            return;   // closed (e.g. 1009) while the container still hands over what it had read
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
        JsonNode type = frame.get("type");
        if (type == null || !type.isString()) {
            invalid(conn, "a frame needs a string type", null);
            return;
        }
        switch (type.asString()) {
            case "send" -> send(conn, frame);
            case "ack" -> ack(conn, frame);
            case "read" -> read(conn, frame);
            case "ping" -> conn.send(Frames.pong());
            default -> invalid(conn, "unknown type: " + abbreviate(type.asString()), null);
        }
    }

    @Override
    protected void handleBinaryMessage(WebSocketSession ws, BinaryMessage message) {
        Connection conn = (Connection) ws.getAttributes().get(CONNECTION);
        if (!ws.isOpen()) {
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
        log.debug("transport error on " + ws.getId() + ": " + exception);
    }

    private void send(Connection conn, JsonNode frame) {
        JsonNode corrNode = frame.get("correlationId");
        String corr = corrNode != null && corrNode.isString() ? corrNode.asString() : null;
        if (corr == null || corr.isEmpty() || corr.length() > MAX_CORRELATION_ID) {
            reject(conn, "invalid", "correlationId must be a string of 1-" + MAX_CORRELATION_ID + " characters", corr);
            return;
        }
        JsonNode chatId = frame.get("chatId");
        if (chatId == null || !chatId.isString() || chatId.asString().isEmpty() || chatId.asString().length() > MAX_CHAT_ID) {
            reject(conn, "invalid", "chatId must be a non-empty string", corr);
            return;
        }
        JsonNode body = frame.get("body");
        if (body == null || !body.isString()) {
            reject(conn, "invalid", "body must be a string", corr);
            return;
        }
        if (body.asString().length() > properties.maxBodyChars()) {
            reject(conn, "too_large", "body longer than " + properties.maxBodyChars() + " characters", corr);
            return;
        }
        if (!conn.admitSend()) {
            reject(conn, "rate_limited", "over this connection's send credits or rate; not accepted", corr);
            return;
        }
        SendRequest request = new SendRequest(conn.userId(), corr, chatId.asString(), body.asString(), new Reply(conn, corr));
        if (!ingest.offer(request)) {
            conn.answered();
            reject(conn, "overloaded", "the server is saturated; not accepted, retry later", corr);
        }
    }

    private void ack(Connection conn, JsonNode frame) {
        JsonNode ids = frame.get("ids");
        if (ids == null || !ids.isArray() || ids.size() > MAX_ACK_IDS) {
            invalid(conn, "ids must be an array of at most " + MAX_ACK_IDS + " deliveryId numbers", null);
            return;
        }
        long[] deliveryIds = new long[ids.size()];
        for (int i = 0; i < deliveryIds.length; i++) {
            JsonNode id = ids.get(i);
            if (!id.isIntegralNumber() || !id.canConvertToLong()) {
                invalid(conn, "ids must be deliveryId numbers", null);
                return;
            }
            deliveryIds[i] = id.longValue();
        }
        acks.ack(conn, deliveryIds);
    }

    private void read(Connection conn, JsonNode frame) {
        JsonNode chatId = frame.get("chatId");
        JsonNode seq = frame.get("seq");
        if (chatId == null || !chatId.isString() || chatId.asString().isEmpty()
                || seq == null || !seq.isIntegralNumber() || !seq.canConvertToLong() || seq.longValue() < 0) {
            invalid(conn, "read needs a string chatId and a non-negative integer seq", null);
            return;
        }
        if (!receipts.offer(new ReadRequest(conn, chatId.asString(), seq.longValue()))) {
            conn.send(Frames.error("overloaded", "too many read receipts waiting; send it again later", null));
        }
    }

    private void invalid(Connection conn, String message, String correlationId) {
        conn.send(Frames.error("invalid", message, correlationId));
    }

    private void reject(Connection conn, String code, String message, String correlationId) {
        metrics.rejected(code).increment();
        conn.send(Frames.error(code, message, correlationId));
    }

    private static String abbreviate(String s) {
        return s.length() <= 64 ? s : s.substring(0, 64) + "…";
    }

    /** Answers one send when ingest has decided it, and returns its credit. */
    private final class Reply implements SendReply {
        private final Connection conn;
        private final String correlationId;

        Reply(Connection conn, String correlationId) {
            this.conn = conn;
            this.correlationId = correlationId;
        }

        @Override
        public void accepted(String messageId, String chatId, long seq, String sentAt) {
            conn.answered();
            conn.send(Frames.accepted(correlationId, messageId, chatId, seq, sentAt));
        }

        @Override
        public void rejected(String code, String message) {
            conn.answered();
            reject(conn, code, message, correlationId);
        }
    }

    @Override
    public void start() {
        running = true;
    }

    /** Shutdown: once ingest has answered what it held, every client is told 1001. */
    @Override
    public void stop() {
        running = false;
        for (ClientSession s : sessions.all()) {
            s.close(CloseStatus.GOING_AWAY.getCode(), "server shutting down");
        }
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
