package dev.waterline.ingest;

import java.util.HashMap;
import java.util.Map;
import java.util.TreeMap;

/**
 * What one group commit writes for the chat list (PROTOCOL.md §10, V14), decided in the batch's
 * seq order from the counts read under the chat locks: each new history row's running count of
 * text and stream entries, each chat's new count and last such entry, and each sender's last own
 * text or stream entry per chat (sending is reading). Pure: no database, so that the rule can be
 * tested apart.
 */
final class ChatListCounts {

    /** The kinds a reader counts as unread and a chat list shows as its last message. */
    static boolean counts(String kind) {
        return SendRequest.TEXT.equals(kind) || SendRequest.STREAM.equals(kind);
    }

    /** Each (chat, sender)'s last text or stream entry of the batch, pairwise, in (chat, user) order. */
    record OwnEntries(String[] chatIds, String[] userIds, long[] seqs) {
    }

    private final Map<String, Long> running;
    private final Map<String, Long> counted = new HashMap<>();
    private final Map<String, Long> lastMessage = new HashMap<>();
    private final TreeMap<String, TreeMap<String, Long>> own = new TreeMap<>();

    /** {@code countable}: each chat's count as read under its lock. */
    ChatListCounts(Map<String, Long> countable) {
        this.running = new HashMap<>(countable);
    }

    /**
     * One new entry, in seq order within its chat: returns its row's count (the chat's count of
     * text and stream entries up to and including it).
     */
    long add(String chatId, String senderId, long seq, String kind) {
        long count = running.getOrDefault(chatId, 0L);
        if (counts(kind)) {
            count++;
            running.put(chatId, count);
            counted.merge(chatId, 1L, Long::sum);
            lastMessage.put(chatId, seq);
            own.computeIfAbsent(chatId, c -> new TreeMap<>()).merge(senderId, seq, Math::max);
        }
        return count;
    }

    /** For each chat, how many text and stream entries the batch adds to it. */
    long[] countedIn(String[] chatIds) {
        long[] out = new long[chatIds.length];
        for (int i = 0; i < chatIds.length; i++) {
            out[i] = counted.getOrDefault(chatIds[i], 0L);
        }
        return out;
    }

    /** For each chat, the seq of the batch's last text or stream entry in it, or null when it has none. */
    Long[] lastMessageSeqs(String[] chatIds) {
        Long[] out = new Long[chatIds.length];
        for (int i = 0; i < chatIds.length; i++) {
            out[i] = lastMessage.get(chatIds[i]);
        }
        return out;
    }

    OwnEntries ownEntries() {
        int n = own.values().stream().mapToInt(Map::size).sum();
        String[] chats = new String[n];
        String[] users = new String[n];
        long[] seqs = new long[n];
        int i = 0;
        for (var chat : own.entrySet()) {
            for (var user : chat.getValue().entrySet()) {
                chats[i] = chat.getKey();
                users[i] = user.getKey();
                seqs[i] = user.getValue();
                i++;
            }
        }
        return new OwnEntries(chats, users, seqs);
    }
}
