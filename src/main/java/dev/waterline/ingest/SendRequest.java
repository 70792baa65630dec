package dev.waterline.ingest;

/** A validated {@code send} waiting to be persisted, with where to answer it. */
public record SendRequest(String senderId, String correlationId, String chatId, String body, SendReply reply,
                          String kind, String streamId) {

    /** A message's kind: a send. */
    public static final String TEXT = "text";
    /** A message's kind: the message that opens a stream (PROTOCOL.md §6), naming it. */
    public static final String STREAM = "stream";

    /** A {@code send}: a text message. */
    public SendRequest(String senderId, String correlationId, String chatId, String body, SendReply reply) {
        this(senderId, correlationId, chatId, body, reply, TEXT, null);
    }

    record Key(String senderId, String correlationId) {
    }

    Key key() {
        return new Key(senderId, correlationId);
    }
}
