package dev.waterline.delivery;

import dev.waterline.outbox.OutboxRow;
import dev.waterline.session.Frames;

final class FramesOut {

    private FramesOut() {
    }

    static String message(OutboxRow r) {
        return Frames.message(r.id(), r.messageId(), r.correlationId(), r.chatId(), r.seq(), r.senderId(), r.body(), r.sentAt(),
                r.kind(), r.fields());
    }
}
