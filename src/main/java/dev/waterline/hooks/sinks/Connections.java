package dev.waterline.hooks.sinks;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.function.Function;

import dev.waterline.metrics.WaterlineMetrics;
import io.micrometer.core.instrument.Counter;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

/**
 * The connections (or clients) a sink keeps, one per checked address and target, at most
 * {@code most} of them, those still closing included (a client's close may wait for its own
 * network thread: the bound is on threads and sockets, not on map entries). Opened on first use
 * and held by each call that uses them ({@link #lease}), so that none is closed under a call. One
 * is closed when a call found it broken ({@link Lease#discard}), when it has been idle for the
 * sink's idle time ({@link #closeIdle}, from the maintenance pass), when every hook that used it
 * here is deleted ({@link #forget}), to make room for another target (the least recently used idle
 * one, closed by the call that needs the room before it opens its own), and at shutdown. A call
 * that needs one more while every one is in use gets {@link Full} (its sink answers that the call
 * was not made) and is counted, rather than a connection, and for some clients a thread, beyond the
 * bound.
 *
 * <p>Gauge {@code waterline.hook.connections{kind}} (open, closing included) and counter
 * {@code waterline.hook.connections.refused{kind}}. Closes other than to make room run on a virtual
 * thread of their own.
 */
final class Connections<V> {

    private static final Log log = LogFactory.getLog(Connections.class);

    /** Closes one connection. */
    @FunctionalInterface
    interface Closer<V> {
        void close(V connection) throws Exception;
    }

    /** Every connection is in use, and there are as many as the bound allows. */
    static final class Full extends RuntimeException {
        Full(String message) {
            super(message, null, false, false);
        }
    }

    private final class Entry {
        final String key;
        final CompletableFuture<V> opened = new CompletableFuture<>();
        final Set<String> hooks = new HashSet<>();
        int calls;
        long idleSinceNanos = System.nanoTime();
        /** Out of the map, counted in {@code closing} until its close returns; closed once no call holds it. */
        boolean gone;
        /** Its close has started. */
        boolean closeStarted;

        Entry(String key) {
            this.key = key;
        }
    }

    /** A connection held by one call; {@link #close} gives it back. */
    final class Lease implements AutoCloseable {
        private final Entry entry;
        private final V connection;
        private boolean released;

        private Lease(Entry entry, V connection) {
            this.entry = entry;
            this.connection = connection;
        }

        V connection() {
            return connection;
        }

        /** The connection is broken: no later call gets it, and it closes once no call holds it. */
        void discard() {
            boolean close;
            synchronized (Connections.this) {
                if (open.get(entry.key) == entry) {
                    open.remove(entry.key);
                    retire(entry);
                }
                close = closable(entry);
            }
            if (close) {
                closeLater(entry);
            }
        }

        @Override
        public void close() {
            if (!released) {
                released = true;
                release(entry);
            }
        }
    }

    private final String kind;
    private final int most;
    private final long idleNanos;
    private final Closer<V> closer;
    private final Counter refused;
    /** In access order: the first idle one is the least recently used. Guarded by this. */
    private final LinkedHashMap<String, Entry> open = new LinkedHashMap<>(16, 0.75f, true);
    /** Out of the map and not yet closed (still held by calls, or closing). Guarded by this. */
    private int closing;

    Connections(String kind, int most, Duration idle, Closer<V> closer, WaterlineMetrics metrics) {
        this.kind = kind;
        this.most = most;
        this.idleNanos = idle.toNanos();
        this.closer = closer;
        this.refused = metrics.counter("waterline.hook.connections.refused",
                "hook calls not made because every connection this node may keep to targets of the kind was in use",
                "kind", kind);
        metrics.gauge("waterline.hook.connections", "connections (or clients) this node keeps to hook targets, closing ones included",
                this::size, "kind", kind);
    }

    /**
     * The connection for {@code key}, opened by {@code opener} if there is none (its failure is
     * thrown, to every call waiting for it), held for this call of {@code hookId} until the lease
     * is closed.
     *
     * @throws Full when there is none for {@code key} and every one there may be is in use
     */
    Lease lease(String key, String hookId, Function<String, V> opener) {
        while (true) {
            Entry e;
            Entry evicted = null;
            boolean opening = false;
            synchronized (this) {
                e = open.get(key);
                if (e == null && open.size() + closing >= most) {
                    evicted = leastRecentlyUsedIdle();
                    if (evicted == null) {
                        refused.increment();
                        throw new Full("every one of the " + most + " " + kind + " connections this node may keep is in use");
                    }
                    open.remove(evicted.key);
                    retire(evicted);
                    evicted.closeStarted = true;
                }
                else {
                    if (e == null) {
                        e = new Entry(key);
                        open.put(key, e);
                        opening = true;
                    }
                    e.calls++;
                    e.hooks.add(hookId);
                }
            }
            if (evicted != null) {
                // room first: its thread and socket go before this call's connection comes
                closeNow(evicted);
                continue;
            }
            if (opening) {
                try {
                    e.opened.complete(opener.apply(key));
                }
                catch (RuntimeException failed) {
                    e.opened.completeExceptionally(failed);
                    synchronized (this) {
                        if (open.get(key) == e) {
                            open.remove(key);
                            retire(e);
                        }
                    }
                }
            }
            try {
                return new Lease(e, e.opened.join());
            }
            catch (CompletionException failed) {
                release(e);
                throw failed.getCause() instanceof RuntimeException r ? r : failed;
            }
        }
    }

    private Entry leastRecentlyUsedIdle() {
        for (Entry e : open.values()) {
            if (e.calls == 0 && e.opened.isDone()) {
                return e;
            }
        }
        return null;
    }

    /** {@code e}, just taken out of the map, counts as closing until its close returns. Under this lock. */
    private void retire(Entry e) {
        e.gone = true;
        closing++;
    }

    /** Whether {@code e} is out of the map, held by no call, and not yet being closed; if so, it is now. Under this lock. */
    private boolean closable(Entry e) {
        if (e.gone && e.calls == 0 && !e.closeStarted) {
            e.closeStarted = true;
            return true;
        }
        return false;
    }

    private void release(Entry e) {
        boolean close;
        synchronized (this) {
            e.calls--;
            e.idleSinceNanos = System.nanoTime();
            close = closable(e);
        }
        if (close) {
            closeLater(e);
        }
    }

    /** Every connection that {@code hookId} used here and no other hook did is closed (now, or when its last call ends). */
    void forget(String hookId) {
        List<Entry> toClose = new ArrayList<>();
        synchronized (this) {
            for (Iterator<Entry> it = open.values().iterator(); it.hasNext(); ) {
                Entry e = it.next();
                if (e.hooks.remove(hookId) && e.hooks.isEmpty()) {
                    it.remove();
                    retire(e);
                    if (closable(e)) {
                        toClose.add(e);
                    }
                }
            }
        }
        toClose.forEach(this::closeLater);
    }

    /** Closes the connections no call has used for the idle time; returns how many. */
    int closeIdle() {
        List<Entry> toClose = new ArrayList<>();
        long now = System.nanoTime();
        synchronized (this) {
            for (Iterator<Entry> it = open.values().iterator(); it.hasNext(); ) {
                Entry e = it.next();
                if (e.calls == 0 && e.opened.isDone() && now - e.idleSinceNanos >= idleNanos) {
                    it.remove();
                    retire(e);
                    if (closable(e)) {
                        toClose.add(e);
                    }
                }
            }
        }
        toClose.forEach(this::closeLater);
        return toClose.size();
    }

    /** Connections open or closing. */
    synchronized int size() {
        return open.size() + closing;
    }

    void closeAll() {
        List<Entry> all = new ArrayList<>();
        synchronized (this) {
            for (Entry e : open.values()) {
                retire(e);
                if (closable(e)) {
                    all.add(e);
                }
            }
            open.clear();
        }
        // at shutdown: closed here, not on threads that might outlive the context (one still held
        // by a call closes when that call lets go)
        all.forEach(this::closeNow);
    }

    private void closeLater(Entry e) {
        Thread.ofVirtual().name("hook-connection-close").start(() -> closeNow(e));
    }

    /** Closes a connection out of the map, if it was ever opened, and stops counting it. */
    private void closeNow(Entry e) {
        try {
            if (e.opened.isDone() && !e.opened.isCompletedExceptionally()) {
                closer.close(e.opened.join());
            }
        }
        catch (Exception failed) {
            log.debug(kind + " hook connection did not close cleanly: " + failed);
        }
        finally {
            synchronized (this) {
                closing--;
            }
        }
    }
}
