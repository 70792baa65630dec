package dev.waterline.ingest;

/** A validated {@code send} waiting to be persisted, with where to answer it. */
public record SendRequest(String senderId, String correlationId, String chatId, String body, SendReply reply) {

    record Key(String senderId, String correlationId) {
    }

    Key key() {
        return new Key(senderId, correlationId);
    }
}
