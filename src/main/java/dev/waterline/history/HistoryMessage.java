package dev.waterline.history;

/** One message as history sync returns it (PROTOCOL.md §4). */
public record HistoryMessage(String messageId, String correlationId, String chatId, long seq,
                             String senderId, String body, String sentAt) {
}
