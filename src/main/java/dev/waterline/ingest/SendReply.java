package dev.waterline.ingest;

/** Where the outcome of one send goes; exactly one method is called, once. */
public interface SendReply {

    /** The message is committed (or was, by an earlier send with the same key). */
    void accepted(String messageId, String chatId, long seq, String sentAt);

    /** The message was not accepted: {@code not_found}, {@code unavailable}, … */
    void rejected(String code, String message);
}
