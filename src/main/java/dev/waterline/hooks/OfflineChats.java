package dev.waterline.hooks;

import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import org.springframework.stereotype.Component;

/**
 * The chats that have a hook listening to {@code offline} events, as this node knows them: the
 * group commit looks here before it works out who of a message's recipients is offline (a look at
 * presence it spares every other chat). A hook created on this node is added before its row
 * commits, so no message committed after the hook misses its offline events here; one created on
 * another node is learnt by the maintenance pass (within {@code waterline.hooks.maintenance-interval}).
 * An entry is dropped only when the database no longer has such a hook for the chat and it was not
 * just added here (a creation not yet committed).
 */
@Component
class OfflineChats {

    private static final long GRACE_NANOS = 60_000_000_000L;

    private final HookRepository hooks;
    /** chat → when this node last added it (System.nanoTime). */
    private final ConcurrentHashMap<String, Long> chats = new ConcurrentHashMap<>();

    OfflineChats(HookRepository hooks) {
        this.hooks = hooks;
    }

    boolean has(String chatId) {
        return chats.containsKey(chatId);
    }

    boolean isEmpty() {
        return chats.isEmpty();
    }

    void add(String chatId) {
        chats.put(chatId, System.nanoTime());
    }

    /** Reads the database's list; keeps what was added within the last minute besides. */
    void refresh() {
        Set<String> known = Set.copyOf(hooks.chatsWithOfflineHooks());
        long now = System.nanoTime();
        known.forEach(c -> chats.putIfAbsent(c, now - GRACE_NANOS));
        chats.entrySet().removeIf(e -> !known.contains(e.getKey()) && now - e.getValue() > GRACE_NANOS);
    }

    List<String> all() {
        return List.copyOf(chats.keySet());
    }
}
