package dev.waterline.hooks.sinks;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;
import java.util.function.LongSupplier;

import dev.waterline.lifecycle.ThrottledLog;
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
 * one, closed by the call that needs the room before it opens its own), when its turn is over
 * (below), and at shutdown. A call that needs one more while every one is in use gets {@link Full}
 * (its sink answers that the call was not made, and it is tried again within {@code call-timeout})
 * and is counted, rather than a connection, and for some clients a thread, beyond the bound.
 *
 * <p>Turns. A target whose calls never pause would otherwise keep its connection for ever, and a
 * refused target would be refused for ever (its call comes back within {@code call-timeout}; the
 * busy ones lease again within milliseconds). So a refused target <em>waits</em>, in the order it
 * was first refused, and room is given in that order: a target that does not wait opens only when
 * there is room beyond what the waiting ones need. While more targets wait for want of room than
 * the room coming (free, or held by connections closing) can take, a connection open for at least a
 * turn ({@code call-timeout}) ends its turn at its next lease: that call is refused (its target now
 * waits, last), no new call gets it, and it closes once its calls end, so its room goes to the
 * first waiting. A target that ended its turn waits in line but asks no other connection to end
 * its turn until it is refused again for want of room (else one turn's end would end every other
 * one due at once). A target that stops asking (not refused again for two turns: its hook deleted,
 * its breaker open, its rows done elsewhere) stops waiting. The bound is thus shared in turns of
 * about {@code call-timeout}, however fast the holders lease again.
 *
 * <p>An opening that fails (whatever it throws) fails every call waiting for it, and the entry
 * goes; a call waits for another's opening at most a turn.
 *
 * <p>Gauge {@code waterline.hook.connections{kind}} (open, closing included) and counters
 * {@code waterline.hook.connections.refused{kind}} and {@code waterline.hook.connections.close.failed{kind}}
 * (a close that threw: also logged at warn, at most once a second per kind). Closes other than to make room run on a virtual
 * thread of their own.
 */
final class Connections<V> {

    private static final Log log = LogFactory.getLog(Connections.class);

    /** Closes one connection. */
    @FunctionalInterface
    interface Closer<V> {
        void close(V connection) throws Exception;
    }

    /** Every connection is in use, and there are as many as the bound allows; or others wait first. */
    static final class Full extends RuntimeException {
        Full(String message) {
            super(message, null, false, false);
        }
    }

    private final class Entry {
        final String key;
        final CompletableFuture<V> opened = new CompletableFuture<>();
        final Set<String> hooks = new HashSet<>();
        final long openedNanos;
        int calls;
        long idleSinceNanos;
        /** Out of the map, counted in {@code closing} until its close returns; closed once no call holds it. */
        boolean gone;
        /** Its close has started. */
        boolean closeStarted;

        Entry(String key, long now) {
            this.key = key;
            this.openedNanos = now;
            this.idleSinceNanos = now;
        }
    }

    /**
     * A target refused: the hooks that asked, when it was last refused, and whether that was the
     * end of its own turn (it then waits in line, but asks no one else to end theirs until it is
     * refused again for want of room: otherwise each turn's end would end every other one due).
     */
    private static final class Waiter {
        final Set<String> hooks = new HashSet<>();
        long lastRefusedNanos;
        boolean endedTurn;
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
    private final long turnNanos;
    private final Closer<V> closer;
    private final Counter refused;
    /** Closes that failed: counted, and logged at most once a second per kind. */
    private final Counter closeFailed;
    private final ThrottledLog closeFailedLog = new ThrottledLog();
    private final LongSupplier nanos;
    /** In access order: the first idle one is the least recently used. Guarded by this. */
    private final LinkedHashMap<String, Entry> open = new LinkedHashMap<>(16, 0.75f, true);
    /** Targets refused for want of room, in the order first refused. Guarded by this. */
    private final LinkedHashMap<String, Waiter> waiting = new LinkedHashMap<>();
    /** Out of the map and not yet closed (still held by calls, or closing). Guarded by this. */
    private int closing;

    /** {@code turn}: how long a connection keeps its room while other targets wait ({@code call-timeout}). */
    Connections(String kind, int most, Duration idle, Duration turn, Closer<V> closer, WaterlineMetrics metrics) {
        this(kind, most, idle, turn, closer, metrics, System::nanoTime);
    }

    Connections(String kind, int most, Duration idle, Duration turn, Closer<V> closer, WaterlineMetrics metrics, LongSupplier nanos) {
        this.kind = kind;
        this.most = most;
        this.idleNanos = idle.toNanos();
        this.turnNanos = turn.toNanos();
        this.closer = closer;
        this.nanos = nanos;
        this.refused = metrics.counter("waterline.hook.connections.refused",
                "hook calls not made because every connection this node may keep to targets of the kind was in use",
                "kind", kind);
        this.closeFailed = metrics.counter("waterline.hook.connections.close.failed",
                "connections (or clients) to hook targets whose close failed (their sockets or threads may linger)", "kind", kind);
        metrics.gauge("waterline.hook.connections", "connections (or clients) this node keeps to hook targets, closing ones included",
                this::size, "kind", kind);
    }

    /**
     * The connection for {@code key}, opened by {@code opener} if there is none (its failure is
     * thrown, to every call waiting for it), held for this call of {@code hookId} until the lease
     * is closed.
     *
     * @throws Full when there is none for {@code key} and no room for it (every one there may be is
     *              in use, or the room left is owed to targets refused before this one)
     */
    Lease lease(String key, String hookId, Function<String, V> opener) {
        while (true) {
            Entry e;
            Entry evicted = null;
            Entry endsTurn = null;
            boolean turnEnded = false;
            boolean opening = false;
            synchronized (this) {
                long now = nanos.getAsLong();
                forgetWaitersPast(now);
                e = open.get(key);
                if (e != null && turnIsOver(e, now)) {
                    // others wait: this one ends its turn (its calls out finish; no new one gets it)
                    open.remove(key);
                    retire(e);
                    endsTurn = closable(e) ? e : null;
                    turnEnded = true;
                    e = null;
                }
                if (e == null && open.size() + closing >= most - waitingAhead(key)) {
                    evicted = leastRecentlyUsedIdle();
                    if (evicted == null) {
                        waitFor(key, hookId, now, turnEnded);
                        refused.increment();
                        if (endsTurn != null) {
                            closeLater(endsTurn);
                        }
                        throw new Full("every one of the " + most + " " + kind + " connections this node may keep is in use"
                                + " or owed to a target refused before (" + waiting.size() + " waiting, this one included)");
                    }
                    open.remove(evicted.key);
                    retire(evicted);
                    evicted.closeStarted = true;
                }
                else {
                    if (e == null) {
                        e = new Entry(key, now);
                        open.put(key, e);
                        waiting.remove(key);
                        opening = true;
                    }
                    e.calls++;
                    e.hooks.add(hookId);
                }
            }
            if (endsTurn != null) {
                closeLater(endsTurn);
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
                catch (Throwable failed) {
                    // an Error too: every call waiting for this opening must hear of it
                    e.opened.completeExceptionally(failed);
                    synchronized (this) {
                        if (open.get(key) == e) {
                            open.remove(key);
                            retire(e);
                        }
                    }
                }
            }
            return new Lease(e, opened(e));
        }
    }

    /** {@code e}'s connection once open; what its opening threw, or that it took longer than a turn, thrown (the call let go of it). */
    private V opened(Entry e) {
        try {
            return e.opened.get(turnNanos, TimeUnit.NANOSECONDS);
        }
        catch (ExecutionException failed) {
            release(e);
            throw failed.getCause() instanceof RuntimeException r ? r
                    : new IllegalStateException("opening the " + kind + " connection failed", failed.getCause());
        }
        catch (TimeoutException slow) {
            release(e);
            throw new IllegalStateException("the " + kind + " connection did not open within " + Duration.ofNanos(turnNanos));
        }
        catch (InterruptedException interrupted) {
            Thread.currentThread().interrupt();
            release(e);
            throw new IllegalStateException("interrupted while the " + kind + " connection opened");
        }
    }

    /**
     * Whether {@code e} has had its turn while more targets wait for want of room than the room
     * coming can take (free, or held by connections ending their turn or closing). Under this lock.
     */
    private boolean turnIsOver(Entry e, long now) {
        if (waiting.isEmpty() || !e.opened.isDone() || now - e.openedNanos < turnNanos) {
            return false;
        }
        int wanting = 0;
        for (Waiter w : waiting.values()) {
            wanting += w.endedTurn ? 0 : 1;
        }
        return wanting > most - open.size();
    }

    /** How many of the room there is are owed to others: the targets waiting before {@code key}, or all of them. Under this lock. */
    private int waitingAhead(String key) {
        int ahead = 0;
        for (String k : waiting.keySet()) {
            if (k.equals(key)) {
                return ahead;
            }
            ahead++;
        }
        return ahead;
    }

    /** {@code key} was refused ({@code endedTurn}: at the end of its own turn): it waits, in the place it first took. Under this lock. */
    private void waitFor(String key, String hookId, long now, boolean endedTurn) {
        Waiter w = waiting.computeIfAbsent(key, k -> new Waiter());
        w.hooks.add(hookId);
        w.lastRefusedNanos = now;
        w.endedTurn = endedTurn;
    }

    /** Targets not refused again for two turns no longer wait. Under this lock. */
    private void forgetWaitersPast(long now) {
        if (!waiting.isEmpty()) {
            waiting.values().removeIf(w -> now - w.lastRefusedNanos > 2 * turnNanos);
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
            e.idleSinceNanos = nanos.getAsLong();
            close = closable(e);
        }
        if (close) {
            closeLater(e);
        }
    }

    /**
     * Every connection that {@code hookId} used here and no other hook did is closed (now, or when
     * its last call ends), and a target only it waited for waits no more.
     */
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
            waiting.values().removeIf(w -> w.hooks.remove(hookId) && w.hooks.isEmpty());
        }
        toClose.forEach(this::closeLater);
    }

    /** Closes the connections no call has used for the idle time; returns how many. */
    int closeIdle() {
        List<Entry> toClose = new ArrayList<>();
        synchronized (this) {
            long now = nanos.getAsLong();
            forgetWaitersPast(now);
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

    /** Targets waiting for room. */
    synchronized int waiting() {
        return waiting.size();
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
            waiting.clear();
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
            // a close that fails may leave a socket or a thread behind: counted, and said at most once a second
            closeFailed.increment();
            long unlogged = closeFailedLog.admit();
            if (unlogged >= 0) {
                log.warn(kind + " hook connection did not close cleanly: " + failed + ThrottledLog.more(unlogged));
            }
        }
        finally {
            synchronized (this) {
                closing--;
            }
        }
    }
}
