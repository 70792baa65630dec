package dev.waterline.history;

import java.util.List;
import java.util.Map;

/**
 * One entry as history sync returns it (PROTOCOL.md §4; §6: {@code kind}, with {@code streamId}
 * on a stream's opening message only; §9: the fields of each kind). A {@code text} entry is shown
 * in its current state: {@code body} after the last edit with {@code editedAt}, {@code deleted}
 * (then {@code body} is empty and there are no files), {@code reactions} counted by emoji, the
 * reader's own {@code myReactions}, its {@code replyTo} and its {@code attachments} (ids, and their
 * descriptions in {@code attachmentDetails}). An {@code edit} carries {@code targetId} and its text
 * (empty once its message is deleted), a {@code delete} {@code targetId}, a {@code reaction}
 * {@code targetId}, {@code emoji} and {@code on}. Fields a kind does not use are left out.
 */
@com.fasterxml.jackson.annotation.JsonInclude(com.fasterxml.jackson.annotation.JsonInclude.Include.NON_NULL)
public record HistoryMessage(String messageId, String correlationId, String chatId, long seq,
                             String senderId, String body, String sentAt, String kind, String streamId,
                             String replyTo, String targetId, String emoji, Boolean on, String editedAt, Boolean deleted,
                             Map<String, Long> reactions, List<String> myReactions, List<String> attachments,
                             List<Attachment> attachmentDetails) {

    /** A file of a message, as its upload answered. */
    @com.fasterxml.jackson.annotation.JsonInclude(com.fasterxml.jackson.annotation.JsonInclude.Include.NON_NULL)
    public record Attachment(String attachmentId, String contentType, long size, String name, String sha256) {
    }

    /** This text entry with its reactions and files, as the page's second query found them. */
    HistoryMessage decorated(Map<String, Long> reactions, List<String> myReactions, List<Attachment> files) {
        boolean gone = Boolean.TRUE.equals(deleted);
        List<Attachment> shown = gone || files.isEmpty() ? null : files;
        return new HistoryMessage(messageId, correlationId, chatId, seq, senderId, body, sentAt, kind, streamId, replyTo, targetId,
                emoji, on, editedAt, deleted, reactions, myReactions,
                shown == null ? null : shown.stream().map(Attachment::attachmentId).toList(), shown);
    }
}
