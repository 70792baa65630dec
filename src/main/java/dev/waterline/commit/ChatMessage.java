package dev.waterline.commit;

/**
 * A message as the group commit writes it, once, for its history row and every recipient's
 * outbox row: where it is in its chat ({@code chatId}, {@code seq}), its id, who sent it with
 * which {@code correlationId}, and what it says ({@code body}, of {@code kind}, with its
 * {@code streamId} if it opens a stream). Ingest makes it; the outbox's rows carry it as they
 * are, so a message's fields are held once whatever its recipients.
 */
public record ChatMessage(String chatId, long seq, String messageId, String senderId, String correlationId, String body,
                          String kind, String streamId) {
}
