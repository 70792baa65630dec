package dev.waterline.session;

import java.util.Collection;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;
import java.util.stream.IntStream;

import org.springframework.stereotype.Component;

/**
 * The connected clients of this process, at most one per user. {@link #register} swaps the new
 * session in atomically and returns the one it evicted, so the old connection is gone from the
 * registry before the new one can be found in it (the connection is the epoch).
 */
@Component
public class SessionRegistry {

    private final ConcurrentHashMap<String, ClientSession> byUser = new ConcurrentHashMap<>();
    private final ReentrantLock[] userLocks = IntStream.range(0, 64).mapToObj(i -> new ReentrantLock())
            .toArray(ReentrantLock[]::new);

    /**
     * Runs {@code action} holding {@code userId}'s lock. Whoever changes which connection is a
     * user's epoch (in this registry and in the Redis index together) does it under this lock,
     * so that the two can never name different connections.
     */
    public <T> T underUserLock(String userId, Supplier<T> action) {
        ReentrantLock lock = userLocks[Math.floorMod(userId.hashCode(), userLocks.length)];
        lock.lock();
        try {
            return action.get();
        }
        finally {
            lock.unlock();
        }
    }

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
