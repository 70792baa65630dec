package dev.waterline.online;

import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;

/**
 * The chats of the users connected to this node, both ways: chat → its members connected here,
 * user → their chats. What lets a node find, for an announced user, the connected co-members it
 * must push to without reading anyone else's memberships. Owned by the presence loop's thread.
 */
final class LocalMembers {

    private final Map<String, Set<String>> usersByChat = new HashMap<>();
    private final Map<String, Set<String>> chatsByUser = new HashMap<>();

    boolean holds(String user) {
        return chatsByUser.containsKey(user);
    }

    /** {@code user} is connected here, a member of {@code chats}. */
    void put(String user, Collection<String> chats) {
        remove(user);
        Set<String> own = new HashSet<>(chats);
        chatsByUser.put(user, own);
        own.forEach(c -> usersByChat.computeIfAbsent(c, k -> new HashSet<>()).add(user));
    }

    /** {@code user} is no longer connected here. */
    void remove(String user) {
        Set<String> chats = chatsByUser.remove(user);
        if (chats == null) {
            return;
        }
        for (String c : chats) {
            Set<String> users = usersByChat.get(c);
            users.remove(user);
            if (users.isEmpty()) {
                usersByChat.remove(c);
            }
        }
    }

    /** {@code users} joined {@code chat}: those connected here are now its members here too. */
    void joined(String chat, Collection<String> users) {
        for (String u : users) {
            Set<String> chats = chatsByUser.get(u);
            if (chats != null && chats.add(chat)) {
                usersByChat.computeIfAbsent(chat, k -> new HashSet<>()).add(u);
            }
        }
    }

    /** The members of {@code chat} connected here. */
    Set<String> in(String chat) {
        return usersByChat.getOrDefault(chat, Set.of());
    }

    int users() {
        return chatsByUser.size();
    }
}
