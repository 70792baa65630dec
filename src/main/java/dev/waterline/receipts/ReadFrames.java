package dev.waterline.receipts;

import java.util.Set;

import dev.waterline.session.ClientSession;
import dev.waterline.session.FrameHandler;
import dev.waterline.session.Frames;
import org.springframework.stereotype.Component;
import tools.jackson.databind.JsonNode;

/**
 * {@code read} frames (PROTOCOL.md §3): charged against the connection's rate, which sends share
 * (a receipt costs a write and a broadcast to every member), then queued for {@link Receipts}.
 */
@Component
class ReadFrames implements FrameHandler {

    static final int MAX_CHAT_ID = 128;

    private final Receipts receipts;

    ReadFrames(Receipts receipts) {
        this.receipts = receipts;
    }

    @Override
    public Set<String> types() {
        return Set.of("read");
    }

    @Override
    public void handle(ClientSession from, String type, JsonNode frame) {
        String chatId = Frames.id(frame, "chatId", MAX_CHAT_ID);
        JsonNode seq = frame.get("seq");
        if (chatId == null || seq == null || !seq.isIntegralNumber() || !seq.canConvertToLong() || seq.longValue() < 0) {
            from.send(Frames.error("invalid", "read needs a chatId (1-" + MAX_CHAT_ID
                    + " characters, no control characters) and a non-negative integer seq", null));
            return;
        }
        if (!from.admitRate()) {
            from.send(Frames.error("rate_limited", "over this connection's rate (shared with sends); read receipt not stored", null));
            return;
        }
        if (!receipts.offer(new ReadRequest(from, chatId, seq.longValue()))) {
            if (receipts.isRunning()) {
                from.send(Frames.error("overloaded", "too many read receipts waiting; send it again later", null));
            }
            else {
                from.send(Frames.error("unavailable", "the server is shutting down; send it again after reconnecting", null));
            }
        }
    }
}
