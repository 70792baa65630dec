package dev.waterline.history;

/**
 * One message as history sync returns it (PROTOCOL.md §4, and §6: {@code kind}, with
 * {@code streamId} on a stream's opening message only).
 */
@com.fasterxml.jackson.annotation.JsonInclude(com.fasterxml.jackson.annotation.JsonInclude.Include.NON_NULL)
public record HistoryMessage(String messageId, String correlationId, String chatId, long seq,
                             String senderId, String body, String sentAt, String kind, String streamId) {
}
