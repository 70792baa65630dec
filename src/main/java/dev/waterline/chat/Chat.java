package dev.waterline.chat;

import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.annotation.JsonInclude;

/** A chat as the REST API shows it; {@code readSeq} only on {@code GET /api/chats/{id}}. */
public record Chat(String chatId, String title, List<String> members, long lastSeq,
                   @JsonInclude(JsonInclude.Include.NON_NULL) Map<String, Long> readSeq) {

    Chat withReadSeq(Map<String, Long> readSeq) {
        return new Chat(chatId, title, members, lastSeq, readSeq);
    }
}
