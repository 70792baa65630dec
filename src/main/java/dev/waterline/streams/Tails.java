package dev.waterline.streams;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.Executors;
import java.util.concurrent.locks.LockSupport;

import dev.waterline.lifecycle.Loops;
import dev.waterline.lifecycle.Workers;
import dev.waterline.web.ApiException;
import dev.waterline.web.DatabaseTurns;
import org.springframework.context.SmartLifecycle;
import org.springframework.stereotype.Component;

/**
 * The tails of this node: one {@link Tail} per stream that has a subscriber here, created by the
 * first and dropped with the last.
 *
 * <p>Where new chunks come from: this node's appender hands each committed change over in memory
 * ({@link #committed}); another node's commit arrives as a signal through {@link StreamSignals}
 * (best effort); and the poll (one loop of {@link Loops}, every {@code tail-poll-interval}) reads
 * the head (last seq and state) of every stream with a tail here in one query, which is the
 * authority: a signal lost, a hand-over that failed, or a node that died after its commit cost at
 * most two intervals (a head ahead of the tail is read only when the next poll finds the tail
 * still short of it, {@link Tail#polled}). The poll also drops subscribers whose connection closed.
 *
 * <p>A subscriber's replay ({@link #replay}) runs on a virtual thread of its own, a page at a time,
 * and waits while its sink holds more than {@code subscriber-buffer-chars} (a reader slower than
 * the stream is paced by its own socket, and no one else waits for it); then it joins the tail.
 */
@Component
class Tails implements SmartLifecycle {

    static final String LOOP = "stream_tails";
    /** A page of chunks read for a tail or a replay stops at this many bytes (the first chunk always comes). */
    static final long PAGE_BYTES = 1L << 20;

    private final StreamProperties properties;
    private final StreamRepository store;
    private final Loops loops;
    private final StreamMetrics metrics;
    private final DatabaseTurns turns;
    /** Tail reads at PostgreSQL at once: a quarter of the pool at most, so the group commits keep the rest. */
    private final java.util.concurrent.Semaphore tailReads = new java.util.concurrent.Semaphore(4, true);
    private final Map<String, Tail> tails = new ConcurrentHashMap<>();
    private final Executor executor = Executors.newVirtualThreadPerTaskExecutor();
    private volatile boolean running;
    private Thread poller;

    Tails(StreamProperties properties, StreamRepository store, Loops loops, StreamMetrics metrics, StreamSignals signals,
          DatabaseTurns turns) {
        this.properties = properties;
        this.turns = turns;
        this.store = store;
        this.loops = loops;
        this.metrics = metrics;
        metrics.gauges(tails::size, () -> tails.values().stream().mapToLong(t -> t.members).sum());
        signals.listen(this::signalled);
    }

    /**
     * {@code sink} follows {@code stream} from {@code fromSeq}: it is sent the stream's state as
     * {@code stream} says (just read by the caller, who checked the reader may see it), then every
     * chunk from {@code fromSeq} on, then the final state when the stream closes.
     */
    Subscription follow(StreamView stream, long fromSeq, Subscriber sink) {
        Tail tail = tails.compute(stream.streamId(), (id, t) -> {
            if (t == null) {
                t = new Tail(id, stream.createdAt(), this);
                Tail created = t;
                created.enqueue(created::init);   // its first task: nothing can be queued before it
            }
            t.members++;
            return t;
        });
        Subscription s = new Subscription(tail, sink, Math.max(1, fromSeq));
        metrics.subscribed();
        sink.state(stream.streamId(), stream.state(), stream.lastSeq());
        replay(s);
        return s;
    }

    /** Replays what {@code s} lacks in pages, then joins it to its tail (see the class note). */
    void replay(Subscription s) {
        executor.execute(() -> {
            try {
                long next = s.nextSeq;
                while (!s.gone()) {
                    List<Chunk> page = page(s, next);
                    if (page == null) {
                        break;   // gone while it waited for a turn
                    }
                    metrics.replayed(page.size());
                    long bytes = 0;
                    for (Chunk c : page) {
                        awaitRoom(s);
                        if (s.gone()) {
                            break;
                        }
                        if (!s.chunk(c)) {
                            break;
                        }
                        next = c.getSeq() + 1;
                        bytes += c.weight();
                    }
                    // a short page read everything there was, unless the byte budget cut it
                    if (page.size() < properties.pageSize() && bytes < PAGE_BYTES / 2) {
                        break;
                    }
                }
                s.replayFoundNothing = next == s.nextSeq;
                s.nextSeq = next;
                s.tail.enqueue(() -> s.tail.join(s));
            }
            catch (RuntimeException e) {
                loops.failed(LOOP, "a subscriber's replay of stream " + s.streamId(), e);
                s.failed("unavailable", "the stream could not be read; subscribe again");
                s.tail.enqueue(() -> s.tail.drop(s));
            }
        });
    }

    /**
     * One replay page, read within a turn at PostgreSQL ({@link DatabaseTurns}, shared with REST
     * reads), so that however many subscribers replay at once the rest of the pool stays free for
     * the group commits; a subscriber that finds no turn within the wait tries again (its replay
     * is late, never wrong). Null if the subscriber left meanwhile.
     */
    private List<Chunk> page(Subscription s, long next) {
        while (!s.gone()) {
            try {
                return turns.run(() -> store.chunks(s.streamId(), s.tail.createdAt, next, Long.MAX_VALUE, properties.pageSize(),
                        PAGE_BYTES));
            }
            catch (ApiException busy) {
                metrics.replayWaited();
            }
        }
        return null;
    }

    private void awaitRoom(Subscription s) {
        while (s.sink.backlog() > properties.subscriberBufferChars() && !s.gone()) {
            LockSupport.parkNanos(1_000_000);
        }
    }

    /** This node committed these changes: each goes to its stream's tail here, if there is one. */
    void committed(List<Appender.Change> changes) {
        for (Appender.Change c : changes) {
            Tail t = tails.get(c.streamId());
            if (t != null) {
                t.enqueue(() -> t.committed(c));
            }
        }
    }

    /** Another node committed changes to these streams. */
    void signalled(List<StreamSignals.Signal> signals) {
        for (StreamSignals.Signal s : signals) {
            Tail t = tails.get(s.streamId());
            if (t != null) {
                t.enqueue(() -> t.signalled(s.lastSeq(), s.state()));
            }
        }
    }

    /** One pass of the poll: the head of every stream with a tail here, and a sweep of closed subscribers. */
    void poll() {
        if (tails.isEmpty()) {
            return;
        }
        List<Tail> all = new ArrayList<>(tails.values());
        Map<String, StreamRepository.Head> heads;
        try {
            heads = store.heads(all.stream().map(t -> t.streamId).toArray(String[]::new));
        }
        catch (RuntimeException e) {
            // subscribers whose connection closed leave even while PostgreSQL is down
            all.forEach(t -> t.enqueue(t::sweep));
            throw e;
        }
        for (Tail t : all) {
            StreamRepository.Head h = heads.get(t.streamId);
            t.enqueue(() -> {
                t.sweep();
                if (h == null) {
                    t.gone();
                }
                else {
                    t.polled(h.lastSeq(), h.state());
                }
            });
        }
    }

    /** Gives a subscription's place back; the tail leaves the registry with its last member. */
    void release(Subscription s) {
        if (!s.release()) {
            return;
        }
        metrics.unsubscribed();
        tails.computeIfPresent(s.streamId(), (id, t) -> {
            if (t != s.tail) {
                return t;
            }
            t.members--;
            if (t.members <= 0) {
                t.dead = true;
                return null;
            }
            return t;
        });
    }

    // --- for the tails ---

    void run(Runnable task) {
        executor.execute(task);
    }

    StreamRepository.Head head(String streamId) {
        return store.heads(new String[] {streamId}).get(streamId);
    }

    List<Chunk> read(String streamId, String createdAt, long from, long to) {
        // a tail's read serves every subscriber on the node: it does not queue behind REST reads
        // and replays (DatabaseTurns), only behind the other tails' reads, a few at a time
        tailReads.acquireUninterruptibly();
        List<Chunk> page;
        try {
            page = store.chunks(streamId, createdAt, from, to, properties.pageSize(), PAGE_BYTES);
        }
        finally {
            tailReads.release();
        }
        metrics.tailRead(page.size());
        return page;
    }

    int pageSize() {
        return properties.pageSize();
    }

    void handedOver() {
        metrics.handedOver();
    }

    void missing(long n) {
        metrics.missing(n);
    }

    void failed(String what, Throwable e) {
        loops.failed(LOOP, what, e);
    }

    int size() {
        return tails.size();
    }

    @Override
    public void start() {
        running = true;
        poller = loops.start(LOOP, "stream-tails", () -> running, () -> {
            LockSupport.parkNanos(properties.tailPollInterval().toNanos());
            if (running) {
                poll();
            }
        });
    }

    @Override
    public void stop() {
        running = false;
        Workers.stop(poller, java.time.Duration.ofSeconds(2));
    }

    @Override
    public boolean isRunning() {
        return running;
    }
}
