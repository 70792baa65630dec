package dev.waterline.online;

import java.util.ArrayList;
import java.util.List;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * What presence broadcasts to every node (the node bus carries it as an opaque string), as JSON:
 * {@code {"p":[[user, state, lastSeen ms or null, setting], …]}} (announcements, for each node to push to
 * the co-members it holds; {@code setting}: made by a change of the hidden setting, pushed even though
 * the user hides their presence) or {@code {"j":chatId,"u":[user, …]}} (users joined a chat: a node
 * holding one of them adds the chat to what it knows of them).
 */
final class PresenceWire {

    private static final JsonMapper JSON = JsonMapper.builder().build();

    /** One announcement: {@code seenMillis} null when online, hidden or unknown; {@code setting} see above. */
    record Announced(String user, String state, Long seenMillis, boolean setting) {
    }

    /** A decoded broadcast: announcements, or a join. */
    record Message(List<Announced> announced, String chat, List<String> joined) {
    }

    private PresenceWire() {
    }

    static String announced(List<Announced> list) {
        ObjectNode m = JSON.createObjectNode();
        ArrayNode p = m.putArray("p");
        for (Announced a : list) {
            ArrayNode e = p.addArray().add(a.user()).add(a.state());
            if (a.seenMillis() == null) {
                e.addNull();
            }
            else {
                e.add(a.seenMillis());
            }
            e.add(a.setting());
        }
        return JSON.writeValueAsString(m);
    }

    static String joined(String chat, List<String> users) {
        ObjectNode m = JSON.createObjectNode().put("j", chat);
        ArrayNode u = m.putArray("u");
        users.forEach(u::add);
        return JSON.writeValueAsString(m);
    }

    static Message read(String message) {
        JsonNode m = JSON.readTree(message);
        if (m.has("p")) {
            List<Announced> list = new ArrayList<>(m.get("p").size());
            for (JsonNode e : m.get("p")) {
                list.add(new Announced(e.get(0).asString(), e.get(1).asString(), e.get(2).isNull() ? null : e.get(2).asLong(),
                        e.path(3).asBoolean(false)));
            }
            return new Message(list, null, List.of());
        }
        if (m.has("j")) {
            List<String> users = new ArrayList<>();
            m.get("u").forEach(u -> users.add(u.asString()));
            return new Message(List.of(), m.get("j").asString(), users);
        }
        throw new IllegalArgumentException("unknown presence broadcast: " + message);
    }
}
