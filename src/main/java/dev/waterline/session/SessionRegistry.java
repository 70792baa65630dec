package dev.waterline.session;

import java.util.Collection;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;
import java.util.stream.IntStream;

import org.springframework.stereotype.Component;

/**
 * The connected clients of this process, at most one per user. {@link #register} swaps the new
 * session in atomically and returns the one it evicted, so the old connection is gone from the
 * registry before the new one can be found in it (the connection is the epoch). Whoever must
 * follow who is connected here (presence) registers a {@link Listener}.
 */
@Component
public class SessionRegistry {

    private final ConcurrentHashMap<String, ClientSession> byUser = new ConcurrentHashMap<>();
    private final ReentrantLock[] userLocks = IntStream.range(0, 64).mapToObj(i -> new ReentrantLock())
            .toArray(ReentrantLock[]::new);
    private final List<Listener> listeners = new CopyOnWriteArrayList<>();

    /**
     * Told of every registration and every removal, on the thread that made it (often under the
     * user's lock): it must only take note, never wait.
     */
    @FunctionalInterface
    public interface Listener {
        /** {@code userId}'s session here changed: {@code left} when one was removed, else one was registered. */
        void changed(String userId, boolean left);
    }

    public void listen(Listener listener) {
        listeners.add(listener);
    }

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
        ClientSession evicted = byUser.put(session.userId(), session);
        listeners.forEach(l -> l.changed(session.userId(), false));
        return evicted;
    }

    /** Removes {@code session} only if it is still its user's registered one. */
    public boolean unregister(ClientSession session) {
        boolean removed = byUser.remove(session.userId(), session);
        if (removed) {
            listeners.forEach(l -> l.changed(session.userId(), true));
        }
        return removed;
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
