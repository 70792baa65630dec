package dev.waterline.outbox;

/**
 * One delivery: a message for one recipient, with {@code id} as its deliveryId. {@code sentAtMillis}
 * is {@code sentAt} as epoch milliseconds (the group commit's timestamp, taken just before its
 * transaction), from which delivery latency is measured.
 */
public record OutboxRow(long id, String recipientId, String chatId, long seq, String messageId,
                        String senderId, String correlationId, String body, String sentAt, long sentAtMillis,
                        int attempts) {
}
