package dev.waterline.ingest;

/** Where the outcome of one send (or other entry) goes; exactly one method is called, once. */
public interface SendReply {

    /** The entry is committed (or was, by an earlier request with the same key). */
    void accepted(String messageId, String chatId, long seq, String sentAt);

    /**
     * The request changed nothing (a reaction already as asked), so no entry was made; the ids are
     * those of the message it named (PROTOCOL.md §9).
     */
    default void unchanged(String messageId, String chatId, long seq, String sentAt) {
        accepted(messageId, chatId, seq, sentAt);
    }

    /** The entry was not accepted: {@code not_found}, {@code forbidden}, {@code invalid}, {@code unavailable}, … */
    void rejected(String code, String message);
}
