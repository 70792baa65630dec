package dev.waterline.outbox;

/** One delivery: a message for one recipient, with {@code id} as its deliveryId. */
public record OutboxRow(long id, String recipientId, String chatId, long seq, String messageId,
                        String senderId, String correlationId, String body, String sentAt, int attempts) {
}
