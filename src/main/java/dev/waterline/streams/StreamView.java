package dev.waterline.streams;

import com.fasterxml.jackson.annotation.JsonInclude;

/**
 * A stream as {@code GET /api/streams/{id}} answers it (PROTOCOL.md §6), with the opening message's
 * {@code messageId} and chat {@code seq}, its {@code title}, and for an aborted stream the
 * {@code reason}. {@code createdAtMillis} is kept for the reads: only partitions since it are scanned.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record StreamView(String streamId, String chatId, String producerId, String state, long lastSeq,
                         String createdAt, String title, String messageId, long seq, String reason) {

    public static final String OPEN = "open";
    public static final String COMPLETE = "complete";
    public static final String ABORTED = "aborted";

    boolean closed() {
        return !OPEN.equals(state);
    }
}
