package dev.waterline.typing;

import java.util.Set;

import dev.waterline.session.ClientSession;
import dev.waterline.session.FrameHandler;
import dev.waterline.session.Frames;
import org.springframework.stereotype.Component;
import tools.jackson.databind.JsonNode;

/**
 * {@code typing} frames (PROTOCOL.md §10): a {@code chatId} or {@code invalid}; then {@link Typing}
 * admits or drops it. A dropped one (coalesced, or shed under load) gets no answer: the client
 * sends another within seconds while its user types, and nobody waits for one.
 */
@Component
class TypingFrames implements FrameHandler {

    static final int MAX_CHAT_ID = 128;

    private final Typing typing;

    TypingFrames(Typing typing) {
        this.typing = typing;
    }

    @Override
    public Set<String> types() {
        return Set.of("typing");
    }

    @Override
    public void handle(ClientSession from, String type, JsonNode frame) {
        String chatId = Frames.id(frame, "chatId", MAX_CHAT_ID);
        if (chatId == null) {
            from.send(Frames.error("invalid", "typing needs a chatId (1-" + MAX_CHAT_ID
                    + " characters, no control characters)", null));
            return;
        }
        if (typing.admit(from, chatId) == Typing.Admitted.STOPPING) {
            from.send(Frames.error("unavailable", "the server is shutting down", null));
        }
    }
}
