package dev.waterline.presence.redis;

import java.util.ArrayList;
import java.util.List;

import dev.waterline.commit.ChatMessage;
import dev.waterline.outbox.OutboxRow;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * What nodes say to each other on their channels ({@code wl:chan:<node>}), as JSON: {@code rows}
 * (deliveries to record and write there), {@code close} (close one connection there, and say so)
 * and its answer {@code closed}, and {@code frame} (one frame for one connection there). A
 * broadcast ({@code wl:chan-all}) is carried as it was given.
 */
final class Wire {

    static final JsonMapper JSON = JsonMapper.builder().build();

    private Wire() {
    }

    static String rows(List<OutboxRow> rows, boolean poller) {
        ObjectNode m = JSON.createObjectNode().put("t", "rows").put("poller", poller);
        ArrayNode list = m.putArray("rows");
        for (OutboxRow r : rows) {
            list.addArray().add(r.id()).add(r.recipientId()).add(r.chatId()).add(r.seq()).add(r.messageId())
                    .add(r.senderId()).add(r.correlationId()).add(r.body()).add(r.sentAt()).add(r.committedAtMillis())
                    .add(r.attempts()).add(r.kind()).addNull().add(r.fields());
        }
        return JSON.writeValueAsString(m);
    }

    static List<OutboxRow> rows(JsonNode m) {
        List<OutboxRow> out = new ArrayList<>(m.get("rows").size());
        for (JsonNode r : m.get("rows")) {
            ChatMessage message = new ChatMessage(r.get(2).asString(), r.get(3).asLong(), r.get(4).asString(),
                    r.get(5).asString(), r.get(6).asString(), r.get(7).asString(),
                    // a node of the build before streams sends eleven fields: a text message
                    r.has(11) ? r.get(11).asString() : "text", fields(r));
            out.add(new OutboxRow(r.get(0).asLong(), r.get(1).asString(), message, r.get(8).asString(), r.get(9).asLong(),
                    r.get(10).asInt()));
        }
        return out;
    }

    /**
     * An entry's frame fields: the fourteenth element; a node of the build before the chat log's
     * entries sends a stream's id alone as the thirteenth (and a rolling upgrade's new node sends
     * null there, so an old node shows a stream's opening without its streamId until it is upgraded).
     */
    private static String fields(JsonNode r) {
        if (r.has(13) && !r.get(13).isNull()) {
            return r.get(13).asString();
        }
        return r.has(12) && !r.get(12).isNull() ? dev.waterline.commit.EntryFields.stream(r.get(12).asString()) : null;
    }

    static String close(String user, String session, int code, String reason, String replyTo, String id) {
        return JSON.writeValueAsString(JSON.createObjectNode().put("t", "close").put("user", user).put("session", session)
                .put("code", code).put("reason", reason).put("reply", replyTo).put("id", id));
    }

    static String closed(String id) {
        return JSON.writeValueAsString(JSON.createObjectNode().put("t", "closed").put("id", id));
    }

    static String frame(String user, String session, String frame) {
        return JSON.writeValueAsString(JSON.createObjectNode().put("t", "frame").put("user", user).put("session", session)
                .put("frame", frame));
    }
}
