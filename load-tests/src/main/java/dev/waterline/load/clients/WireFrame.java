package dev.waterline.load.clients;

import dev.waterline.load.chat.LoadRun;
import tools.jackson.core.JsonParser;
import tools.jackson.core.JsonToken;

/**
 * The fields of a server frame that a simulated client acts on, read with Jackson's streaming
 * parser: the top-level scalars only, every nested value (a {@code welcome}'s limits) skipped.
 * Building a whole tree per frame was a fifth of the generator's CPU at saturation
 * (docs/lab/2026-12-02-peers.md, "Like for like"). A field the frame lacks is null (text) or -1
 * (number); anything but a JSON object is a frame with no type. {@code kind} is an entry's
 * (PROTOCOL.md §9; null on a frame without one, a plain message of a v2 server) with its
 * {@code targetId}, {@code unchanged}
 * an {@code accepted} react's that changed nothing (no new entry).
 */
record WireFrame(String type, String correlationId, String messageId, String chatId, long seq, long deliveryId, String code,
                 String kind, String targetId, boolean unchanged) {

    static WireFrame parse(String text) {
        String type = null, correlationId = null, messageId = null, chatId = null, code = null, kind = null, targetId = null;
        boolean unchanged = false;
        long seq = -1, deliveryId = -1;
        try (JsonParser p = LoadRun.JSON.createParser(text)) {
            if (p.nextToken() != JsonToken.START_OBJECT) {
                return new WireFrame(null, null, null, null, -1, -1, null, null, null, false);   // no frame of PROTOCOL.md: a client ignores it
            }
            String name;
            while ((name = p.nextName()) != null) {
                JsonToken t = p.nextToken();
                if (t == JsonToken.START_OBJECT || t == JsonToken.START_ARRAY) {
                    p.skipChildren();
                    continue;
                }
                switch (name) {
                    case "type" -> type = p.getValueAsString();
                    case "correlationId" -> correlationId = p.getValueAsString();
                    case "messageId" -> messageId = p.getValueAsString();
                    case "chatId" -> chatId = p.getValueAsString();
                    case "code" -> code = p.getValueAsString();
                    case "seq" -> seq = p.getValueAsLong(-1);
                    case "deliveryId" -> deliveryId = p.getValueAsLong(-1);
                    case "kind" -> kind = p.getValueAsString();
                    case "targetId" -> targetId = p.getValueAsString();
                    case "unchanged" -> unchanged = p.getValueAsBoolean(false);
                    default -> { }
                }
            }
        }
        return new WireFrame(type, correlationId, messageId, chatId, seq, deliveryId, code, kind, targetId, unchanged);
    }
}
