package dev.waterline.outbox;

import dev.waterline.commit.ChatMessage;

/**
 * One delivery: a message for one recipient, with {@code id} as its deliveryId.
 * {@code committedAtMillis} is when the message was committed, in epoch milliseconds (read by
 * ingest as its commit returned; for a row read back from the outbox, its insert time, moments
 * before its commit): what the delivery latency histogram measures from.
 *
 * <p>The message's own fields are one {@link ChatMessage}, shared by the rows of its recipients as
 * the group commit makes them; the accessors of its fields ({@link #chatId()}, {@link #seq()},
 * ...) read through it.
 */
public record OutboxRow(long id, String recipientId, ChatMessage message, String sentAt, long committedAtMillis, int attempts) {


    /** This row with its commit time. */
    public OutboxRow committedAt(long millis) {
        return new OutboxRow(id, recipientId, message, sentAt, millis, attempts);
    }

    public String chatId() {
        return message.chatId();
    }

    public long seq() {
        return message.seq();
    }

    public String messageId() {
        return message.messageId();
    }

    public String senderId() {
        return message.senderId();
    }

    public String correlationId() {
        return message.correlationId();
    }

    public String body() {
        return message.body();
    }

    public String kind() {
        return message.kind();
    }

    /** The entry's kind-specific frame fields ({@link dev.waterline.commit.EntryFields}), or null. */
    public String fields() {
        return message.fields();
    }
}
