package dev.waterline.watermark;

import java.util.Set;

import dev.waterline.session.ClientSession;
import dev.waterline.session.FrameHandler;
import dev.waterline.session.Frames;
import org.springframework.stereotype.Component;
import tools.jackson.databind.JsonNode;

/**
 * {@code ack} frames (PROTOCOL.md §3): the ids go to {@link AckRecorder}, which records them
 * against the acking connection's own epoch, so acking ids that are not this connection's pending
 * deliveries changes nothing.
 */
@Component
class AckFrames implements FrameHandler {

    static final int MAX_ACK_IDS = 10_000;

    private final AckRecorder acks;

    AckFrames(AckRecorder acks) {
        this.acks = acks;
    }

    @Override
    public Set<String> types() {
        return Set.of("ack");
    }

    @Override
    public void handle(ClientSession from, String type, JsonNode frame) {
        JsonNode ids = frame.get("ids");
        if (ids == null || !ids.isArray() || ids.size() > MAX_ACK_IDS) {
            from.send(Frames.error("invalid", "ids must be an array of at most " + MAX_ACK_IDS + " deliveryId numbers", null));
            return;
        }
        long[] deliveryIds = new long[ids.size()];
        for (int i = 0; i < deliveryIds.length; i++) {
            JsonNode id = ids.get(i);
            if (!id.isIntegralNumber() || !id.canConvertToLong()) {
                from.send(Frames.error("invalid", "ids must be deliveryId numbers", null));
                return;
            }
            deliveryIds[i] = id.longValue();
        }
        acks.ack(from, deliveryIds);
    }
}
