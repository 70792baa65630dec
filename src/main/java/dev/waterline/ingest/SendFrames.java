package dev.waterline.ingest;

import java.util.Set;

import dev.waterline.input.InputGate;
import dev.waterline.metrics.WaterlineMetrics;
import dev.waterline.session.ClientSession;
import dev.waterline.session.FrameHandler;
import dev.waterline.session.Frames;
import org.springframework.stereotype.Component;
import tools.jackson.databind.JsonNode;

/**
 * {@code send} frames (PROTOCOL.md §3): validated, charged against the connection's credits and
 * rate, and queued for group commit; the answer comes later from {@link Ingest} through a
 * {@link SendReply}. Every refusal here is counted in {@code waterline_sends_rejected_total}.
 */
@Component
class SendFrames implements FrameHandler {

    static final int MAX_CORRELATION_ID = 64;
    static final int MAX_CHAT_ID = 128;

    private final Ingest ingest;
    private final SendLimits limits;
    private final WaterlineMetrics metrics;

    SendFrames(Ingest ingest, SendLimits limits, WaterlineMetrics metrics) {
        this.ingest = ingest;
        this.limits = limits;
        this.metrics = metrics;
    }

    @Override
    public Set<String> types() {
        return Set.of("send");
    }

    @Override
    public void handle(ClientSession from, String type, JsonNode frame) {
        long readNanos = System.nanoTime();
        String corr = Frames.id(frame, "correlationId", MAX_CORRELATION_ID);
        if (corr == null) {
            JsonNode given = frame.get("correlationId");
            reject(from, "invalid", "correlationId must be a string of 1-" + MAX_CORRELATION_ID
                    + " characters without control characters",
                    given != null && given.isString() ? InputGate.abbreviate(given.asString(), 256) : null);
            return;
        }
        String chatId = Frames.id(frame, "chatId", MAX_CHAT_ID);
        if (chatId == null) {
            reject(from, "invalid", "chatId must be a string of 1-" + MAX_CHAT_ID + " characters without control characters", corr);
            return;
        }
        JsonNode body = frame.get("body");
        if (body == null || !body.isString()) {
            reject(from, "invalid", "body must be a string", corr);
            return;
        }
        if (body.asString().length() > limits.maxBodyChars()) {
            reject(from, "too_large", "body longer than " + limits.maxBodyChars() + " characters", corr);
            return;
        }
        if (!from.admitSend()) {
            reject(from, "rate_limited", "over this connection's send credits or rate; not accepted", corr);
            return;
        }
        SendRequest request = new SendRequest(from.userId(), corr, chatId, body.asString(), new Reply(from, corr, readNanos));
        if (!ingest.offer(request)) {
            from.answered();
            if (ingest.isRunning()) {
                reject(from, "overloaded", "the server is saturated; not accepted, retry later", corr);
            }
            else {
                reject(from, "unavailable", "the server is shutting down; not accepted, retry", corr);
            }
        }
    }

    private void reject(ClientSession to, String code, String message, String correlationId) {
        metrics.rejected(code).increment();
        to.send(Frames.error(code, message, correlationId));
    }

    /** Answers one send when ingest has decided it, and returns its credit. */
    private final class Reply implements SendReply {
        private final ClientSession conn;
        private final String correlationId;
        private final long readNanos;

        Reply(ClientSession conn, String correlationId, long readNanos) {
            this.conn = conn;
            this.correlationId = correlationId;
            this.readNanos = readNanos;
        }

        @Override
        public void accepted(String messageId, String chatId, long seq, String sentAt) {
            conn.answered();
            conn.send(Frames.accepted(correlationId, messageId, chatId, seq, sentAt),
                    () -> metrics.sendAccepted(System.nanoTime() - readNanos));
        }

        @Override
        public void rejected(String code, String message) {
            conn.answered();
            reject(conn, code, message, correlationId);
        }
    }
}
