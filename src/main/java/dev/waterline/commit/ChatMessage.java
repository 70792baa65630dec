package dev.waterline.commit;

/**
 * An entry of a chat's log as the group commit writes it, once, for its history row and every
 * recipient's outbox row: where it is in its chat ({@code chatId}, {@code seq}), its id, who sent it
 * with which {@code correlationId}, what it says ({@code body}) and of which {@code kind} it is
 * ({@code text}, {@code stream}, {@code edit}, {@code delete}, {@code reaction}), with the fields
 * that kind adds to a {@code message} frame ({@link EntryFields}: {@code streamId}, {@code targetId},
 * {@code emoji}, {@code on}, {@code replyTo}, {@code attachments}), or {@code null} when it adds none
 * (a plain text message). Ingest makes it; the outbox's rows carry it as they are, so an entry's
 * fields are held once whatever its recipients.
 */
public record ChatMessage(String chatId, long seq, String messageId, String senderId, String correlationId, String body,
                          String kind, String fields) {

    /** This entry with its text gone (a delete erased it): the body empty, and a text entry's fields (replyTo, attachments) too. */
    public ChatMessage erased() {
        return new ChatMessage(chatId, seq, messageId, senderId, correlationId, "", kind, "text".equals(kind) ? null : fields);
    }
}
