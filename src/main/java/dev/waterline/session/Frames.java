package dev.waterline.session;

import java.io.StringWriter;
import java.util.Map;

import com.fasterxml.jackson.annotation.JsonInclude;
import tools.jackson.core.JsonGenerator;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/** Server-to-client frames of PROTOCOL.md §3, serialised once here so every writer agrees. */
public final class Frames {

    private static final JsonMapper JSON = JsonMapper.builder().build();

    private Frames() {
    }

    public record Welcome(String type, String userId, String sessionId, Map<String, Object> limits) {
    }

    public record Accepted(String type, String correlationId, String messageId, String chatId, long seq, String sentAt) {
    }

    /**
     * {@code streamId} only on a stream's opening message ({@code kind} {@code "stream"}); the other
     * kinds' fields (PROTOCOL.md §9) follow {@code kind} the same way ({@link #message}).
     */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record Message(String type, long deliveryId, String messageId, String correlationId, String chatId,
                          long seq, String senderId, String body, String sentAt, String kind, String streamId) {
    }

    public record Read(String type, String chatId, String userId, long seq) {
    }

    public record Typing(String type, String chatId, String userId) {
    }

    /** {@code lastSeen}: an ISO-8601 instant, or null (online, hidden, or not known). */
    public record Presence(String type, String userId, String state, String lastSeen) {
    }

    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record Error(String type, String code, String message, String correlationId) {
    }

    public static String welcome(String userId, String sessionId, Map<String, Object> limits) {
        return JSON.writeValueAsString(new Welcome("welcome", userId, sessionId, limits));
    }

    /*
     * accepted and message are one each per message on the hot path: written field by field with
     * Jackson's streaming generator, the text the mapper writes for their records (same fields, same
     * order, same escaping; FramesUnitTests compares the two) without the mapper's bean serializer
     * and its accessor calls through reflection (Jackson's share of the server's JFR samples went
     * from 10.4 to 7.9 % with this, docs/lab/2026-12-02-peers.md; the two frames' own cost was not measured
     * apart).
     */

    public static String accepted(String correlationId, String messageId, String chatId, long seq, String sentAt) {
        return accepted(correlationId, messageId, chatId, seq, sentAt, false);
    }

    /**
     * {@code unchanged}: the request changed nothing (a reaction already on, or already off;
     * PROTOCOL.md §9), so no entry was made and the ids are those of the message it named.
     */
    public static String accepted(String correlationId, String messageId, String chatId, long seq, String sentAt,
                                  boolean unchanged) {
        StringWriter out = new StringWriter(96 + length(correlationId) + length(chatId));
        try (JsonGenerator g = JSON.createGenerator(out)) {
            g.writeStartObject();
            g.writeStringProperty("type", "accepted");
            g.writeStringProperty("correlationId", correlationId);
            g.writeStringProperty("messageId", messageId);
            g.writeStringProperty("chatId", chatId);
            g.writeNumberProperty("seq", seq);
            g.writeStringProperty("sentAt", sentAt);
            if (unchanged) {
                g.writeBooleanProperty("unchanged", true);
            }
            g.writeEndObject();
        }
        return out.toString();
    }

    public static String message(long deliveryId, String messageId, String correlationId, String chatId, long seq,
                                 String senderId, String body, String sentAt, String kind, String fields) {
        StringWriter out = new StringWriter(160 + length(correlationId) + length(chatId) + length(senderId) + length(body));
        try (JsonGenerator g = JSON.createGenerator(out)) {
            g.writeStartObject();
            g.writeStringProperty("type", "message");
            g.writeNumberProperty("deliveryId", deliveryId);
            present(g, "messageId", messageId);
            present(g, "correlationId", correlationId);
            present(g, "chatId", chatId);
            g.writeNumberProperty("seq", seq);
            present(g, "senderId", senderId);
            present(g, "body", body);
            present(g, "sentAt", sentAt);
            g.writeStringProperty("kind", kind == null ? "text" : kind);
            g.writeEndObject();
        }
        if (fields == null) {
            return out.toString();
        }
        // the entry's own fields (EntryFields: JSON members, escaped when they were written) before the closing brace
        StringBuffer frame = out.getBuffer();
        frame.setLength(frame.length() - 1);
        return frame.append(',').append(fields).append('}').toString();
    }

    /** A field of a record marked NON_NULL: left out when null. */
    private static void present(JsonGenerator g, String name, String value) {
        if (value != null) {
            g.writeStringProperty(name, value);
        }
    }

    private static int length(String s) {
        return s == null ? 4 : s.length();
    }

    public static String read(String chatId, String userId, long seq) {
        return JSON.writeValueAsString(new Read("read", chatId, userId, seq));
    }

    /** A member is typing in a chat (PROTOCOL.md §10). */
    public static String typing(String chatId, String userId) {
        return JSON.writeValueAsString(new Typing("typing", chatId, userId));
    }

    /** A user's presence changed (PROTOCOL.md §10). */
    public static String presence(String userId, String state, String lastSeen) {
        return JSON.writeValueAsString(new Presence("presence", userId, state, lastSeen));
    }

    public static String error(String code, String message, String correlationId) {
        return JSON.writeValueAsString(new Error("error", code, message, correlationId));
    }

    public static String pong() {
        return "{\"type\":\"pong\"}";
    }

    /**
     * A frame field that must be an id (1..{@code maxLength} characters, no control characters):
     * the string, or null when absent, not a string, or not an acceptable id.
     */
    public static String id(JsonNode frame, String field, int maxLength) {
        JsonNode v = frame.get(field);
        if (v == null || !v.isString() || dev.waterline.input.InputGate.idProblem(v.asString(), 1, maxLength) != null) {
            return null;
        }
        return v.asString();
    }

    /** Bytes of {@code s} in UTF-8 (a lone surrogate counts as the 3 bytes of its replacement). */
    public static long utf8Length(CharSequence s) {
        long n = 0;
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c < 0x80) {
                n++;
            }
            else if (c < 0x800) {
                n += 2;
            }
            else if (Character.isHighSurrogate(c) && i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1))) {
                n += 4;
                i++;
            }
            else {
                n += 3;
            }
        }
        return n;
    }
}
