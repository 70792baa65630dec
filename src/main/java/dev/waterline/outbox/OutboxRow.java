package dev.waterline.outbox;

/**
 * One delivery: a message for one recipient, with {@code id} as its deliveryId.
 * {@code committedAtMillis} is when the message was committed, in epoch milliseconds (read by
 * ingest as its commit returned; for a row read back from the outbox, its insert time, moments
 * before its commit): what the delivery latency histogram measures from.
 */
public record OutboxRow(long id, String recipientId, String chatId, long seq, String messageId,
                        String senderId, String correlationId, String body, String sentAt, long committedAtMillis,
                        int attempts, String kind, String streamId) {

    /** This row with its commit time. */
    public OutboxRow committedAt(long millis) {
        return new OutboxRow(id, recipientId, chatId, seq, messageId, senderId, correlationId, body, sentAt, millis, attempts,
                kind, streamId);
    }
}
