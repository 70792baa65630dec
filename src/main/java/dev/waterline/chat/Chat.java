package dev.waterline.chat;

import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.annotation.JsonInclude;

/**
 * A chat as the REST API shows it (PROTOCOL.md §2, §10): {@code unread}, the caller's count of
 * others' text and stream entries past their read receipt, not deleted, and {@code lastMessage},
 * the chat's last text or stream entry in its current state (null when it has none, or retention
 * took it); {@code readSeq} only on {@code GET /api/chats/{id}}.
 */
public record Chat(String chatId, String title, List<String> members, long lastSeq, long unread, LastMessage lastMessage,
                   @JsonInclude(JsonInclude.Include.NON_NULL) Map<String, Long> readSeq) {

    /** Most characters (UTF-16 code units) of the last message's body a chat list carries. */
    static final int PREVIEW_LENGTH = 200;

    /** A chat that has nothing in it yet, as its creation answers it. */
    static Chat created(String chatId, String title, List<String> members) {
        return new Chat(chatId, title, members, 0, 0, null, null);
    }

    Chat withReadSeq(Map<String, Long> readSeq) {
        return new Chat(chatId, title, members, lastSeq, unread, lastMessage, readSeq);
    }

    /**
     * A chat's last text or stream entry as it stands: {@code body} is its latest text (after
     * edits) cut to {@link #PREVIEW_LENGTH}, empty once deleted; {@code editedAt} only when edited.
     */
    public record LastMessage(String messageId, long seq, String senderId, String kind, String body, String sentAt,
                              @JsonInclude(JsonInclude.Include.NON_NULL) String editedAt, boolean deleted) {
    }

    /**
     * {@code body} cut to at most {@code max} UTF-16 code units, never between the two halves of a
     * surrogate pair (the cut then keeps one unit less), so that the preview is text the input
     * gate would accept.
     */
    static String preview(String body, int max) {
        if (body == null || body.length() <= max) {
            return body;
        }
        int end = Character.isHighSurrogate(body.charAt(max - 1)) ? max - 1 : max;
        return body.substring(0, end);
    }
}
