package dev.waterline.session;

import java.util.Collection;
import java.util.concurrent.ConcurrentHashMap;

import org.springframework.stereotype.Component;

/**
 * The connected clients of this process, at most one per user. {@link #register} swaps the new
 * session in atomically and returns the one it evicted, so the old connection is gone from the
 * registry before the new one can be found in it (the connection is the epoch).
 */
@Component
public class SessionRegistry {

    private final ConcurrentHashMap<String, ClientSession> byUser = new ConcurrentHashMap<>();

    /** Registers {@code session} as its user's only session; returns the evicted one, or null. */
    public ClientSession register(ClientSession session) {
        return byUser.put(session.userId(), session);
    }

    /** Removes {@code session} only if it is still its user's registered one. */
    public boolean unregister(ClientSession session) {
        return byUser.remove(session.userId(), session);
    }

    public ClientSession get(String userId) {
        return byUser.get(userId);
    }

    /** Whether {@code session} is still the one registered for its user. */
    public boolean isCurrent(ClientSession session) {
        return byUser.get(session.userId()) == session;
    }

    public int size() {
        return byUser.size();
    }

    public Collection<ClientSession> all() {
        return byUser.values();
    }
}
