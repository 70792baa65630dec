package dev.waterline.chat;

import java.util.List;

/**
 * {@code users} are members of {@code chatId} now (a chat was created with them, or one was
 * added): published (a Spring event) on the node that committed it, for whoever keeps who shares a
 * chat with whom (presence). A user may have been a member already.
 */
public record MembersJoined(String chatId, List<String> users) {
}
