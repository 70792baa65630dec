package dev.waterline.ingest;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;

import dev.waterline.input.InputGate;
import dev.waterline.metrics.WaterlineMetrics;
import dev.waterline.session.ClientSession;
import dev.waterline.session.FrameHandler;
import dev.waterline.session.Frames;
import org.springframework.stereotype.Component;
import tools.jackson.databind.JsonNode;

/**
 * The frames that make entries of a chat's log: {@code send} (PROTOCOL.md §3, with §9's
 * {@code replyTo} and {@code attachments}), {@code edit}, {@code delete} and {@code react} (§9).
 * Each is validated, charged against the connection's credits and rate like a send, and queued for
 * group commit; the answer comes later from {@link Ingest} through a {@link SendReply}. What the
 * frame names (the message, the files) is judged in the commit ({@link Entries}). Every refusal
 * here is counted in {@code waterline_sends_rejected_total}.
 */
@Component
class SendFrames implements FrameHandler {

    static final int MAX_CORRELATION_ID = 64;
    static final int MAX_CHAT_ID = 128;
    static final int MAX_ID = 128;
    static final int MAX_ATTACHMENTS = 10;
    static final int MAX_EMOJI = 32;

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
        return Set.of("send", "edit", "delete", "react");
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
        SendRequest request = switch (type) {
            case "send" -> send(from, frame, corr, chatId, readNanos);
            case "edit" -> {
                String target = target(from, frame, corr);
                String body = target == null ? null : body(from, frame, corr, false);
                yield body == null ? null : SendRequest.edit(from.userId(), corr, chatId, target, body, new Reply(from, corr, readNanos));
            }
            case "delete" -> {
                String target = target(from, frame, corr);
                yield target == null ? null : SendRequest.delete(from.userId(), corr, chatId, target, new Reply(from, corr, readNanos));
            }
            default -> react(from, frame, corr, chatId, readNanos);
        };
        if (request == null) {
            return;
        }
        if (!from.admitSend()) {
            reject(from, "rate_limited", "over this connection's send credits or rate; not accepted", corr);
            return;
        }
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

    /** A {@code send}'s request, or null when the frame was refused (answered here). */
    private SendRequest send(ClientSession from, JsonNode frame, String corr, String chatId, long readNanos) {
        JsonNode given = frame.get("attachments");
        List<String> attachments = new ArrayList<>();
        if (given != null && !given.isNull()) {
            if (!given.isArray() || given.size() > MAX_ATTACHMENTS) {
                reject(from, "invalid", "attachments must be an array of at most " + MAX_ATTACHMENTS + " attachment ids", corr);
                return null;
            }
            for (JsonNode a : given) {
                String id = a.isString() && InputGate.idProblem(a.asString(), 1, MAX_ID) == null ? a.asString() : null;
                if (id == null || attachments.contains(id)) {
                    reject(from, "invalid", "attachments must be distinct attachment ids", corr);
                    return null;
                }
                attachments.add(id);
            }
        }
        String replyTo = null;
        JsonNode reply = frame.get("replyTo");
        if (reply != null && !reply.isNull()) {
            replyTo = Frames.id(frame, "replyTo", MAX_ID);
            if (replyTo == null) {
                reject(from, "invalid", "replyTo must be a messageId", corr);
                return null;
            }
        }
        String body = body(from, frame, corr, !attachments.isEmpty());
        return body == null ? null
                : SendRequest.text(from.userId(), corr, chatId, body, replyTo, attachments, new Reply(from, corr, readNanos));
    }

    /** A {@code react}'s request, or null when the frame was refused. */
    private SendRequest react(ClientSession from, JsonNode frame, String corr, String chatId, long readNanos) {
        String target = target(from, frame, corr);
        if (target == null) {
            return null;
        }
        JsonNode emoji = frame.get("emoji");
        if (emoji == null || !emoji.isString() || !emoji(emoji.asString())) {
            reject(from, "invalid", "emoji must be a string of 1-" + MAX_EMOJI + " characters without control characters", corr);
            return null;
        }
        JsonNode on = frame.get("on");
        if (on != null && !on.isNull() && !on.isBoolean()) {
            reject(from, "invalid", "on must be true or false", corr);
            return null;
        }
        return SendRequest.react(from.userId(), corr, chatId, target, emoji.asString(), on == null || on.isNull() || on.asBoolean(),
                new Reply(from, corr, readNanos));
    }

    /**
     * Whether {@code s} is an emoji as §9 admits it: 1 to 32 characters (code points; a sequence
     * joined by U+200D counts each of its parts), none of them a control character, and well formed
     * (no lone surrogate).
     */
    static boolean emoji(String s) {
        int n = s.codePointCount(0, s.length());
        if (n < 1 || n > MAX_EMOJI) {
            return false;
        }
        for (int i = 0; i < s.length(); ) {
            int cp = s.codePointAt(i);
            if (Character.getType(cp) == Character.CONTROL || Character.getType(cp) == Character.SURROGATE) {
                return false;
            }
            i += Character.charCount(cp);
        }
        return true;
    }

    /** The frame's {@code messageId}, or null when it is refused. */
    private String target(ClientSession from, JsonNode frame, String corr) {
        String id = Frames.id(frame, "messageId", MAX_ID);
        if (id == null) {
            reject(from, "invalid", "messageId must be a string of 1-" + MAX_ID + " characters without control characters", corr);
        }
        return id;
    }

    /** The frame's {@code body}, or null when it is refused; empty only when {@code mayBeEmpty}. */
    private String body(ClientSession from, JsonNode frame, String corr, boolean mayBeEmpty) {
        JsonNode body = frame.get("body");
        if (body == null || !body.isString()) {
            reject(from, "invalid", "body must be a string", corr);
            return null;
        }
        if (body.asString().length() > limits.maxBodyChars()) {
            reject(from, "too_large", "body longer than " + limits.maxBodyChars() + " characters", corr);
            return null;
        }
        if (body.asString().isEmpty() && !mayBeEmpty) {
            reject(from, "invalid", "body must not be empty (a send may have an empty body only with attachments)", corr);
            return null;
        }
        return body.asString();
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
        public void unchanged(String messageId, String chatId, long seq, String sentAt) {
            conn.answered();
            conn.send(Frames.accepted(correlationId, messageId, chatId, seq, sentAt, true));
        }

        @Override
        public void rejected(String code, String message) {
            conn.answered();
            reject(conn, code, message, correlationId);
        }
    }
}
