package dev.waterline.streams;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The shared tail of one stream on this node: every new chunk is taken once (handed over in memory
 * by this node's appender, or read from PostgreSQL once when it was appended elsewhere) and fanned
 * out to every live subscriber here.
 *
 * <p>Everything a tail does runs on its own queue, one task at a time ({@link #enqueue}), so its
 * fields need no lock. Its one invariant: {@code high} is the highest seq fanned out, and chunks
 * are fanned out strictly one after the other (high + 1, high + 2, …): a hand-over or a signal
 * that shows chunks beyond high + 1 first reads the missing ones from PostgreSQL, once for every
 * subscriber. A live subscriber takes a chunk only if it is exactly its {@code nextSeq}, so it
 * gets every seq once, in order (S4).
 *
 * <p><b>The seam between replay and tail</b> (S5): a subscriber is registered with the tail first
 * (so nothing committed after that is missed), then replays from PostgreSQL in pages on a thread
 * of its own, then asks to {@link #join}. On the tail's queue, the join compares: if the tail has
 * fanned out chunks past the subscriber's replay (appended while it read), those are read once more
 * for it and written; if the subscriber read beyond the tail (chunks committed but not yet handed
 * over), it simply skips them when they come. Only then does it become live. A tail that does not
 * know yet where the stream stands ({@code high} = -1: its first read has not succeeded) keeps
 * hand-overs and joins until it does.
 */
final class Tail {

    /** Hand-overs kept while the tail's first read is outstanding; past this they are dropped and read again. */
    private static final int MAX_PENDING = 1024;

    final String streamId;
    final String createdAt;
    private final Tails tails;
    private final ConcurrentLinkedQueue<Runnable> mailbox = new ConcurrentLinkedQueue<>();
    private final AtomicBoolean scheduled = new AtomicBoolean();

    /** Subscribers registered here (replaying or live), guarded by the registry's map (Tails#release). */
    int members;
    /** Set when the last member left and the tail left the registry; guarded like {@link #members}. */
    boolean dead;

    // --- touched only by the tail's own tasks ---
    private long high = -1;
    private String state;
    private final List<Subscription> live = new ArrayList<>();
    private final List<Subscription> waiting = new ArrayList<>();
    private final List<Appender.Change> pending = new ArrayList<>();
    private boolean pendingOverflowed;
    /** The head the previous poll found ahead of {@code high}, or -1 (see {@link #polled}). */
    private long polledAhead = -1;

    Tail(String streamId, String createdAt, Tails tails) {
        this.streamId = streamId;
        this.createdAt = createdAt;
        this.tails = tails;
    }

    /** Runs {@code task} after every task queued before it, never two at once. */
    void enqueue(Runnable task) {
        mailbox.add(task);
        if (scheduled.compareAndSet(false, true)) {
            tails.run(this::drain);
        }
    }

    private void drain() {
        while (true) {
            Runnable task;
            while ((task = mailbox.poll()) != null) {
                try {
                    task.run();
                }
                catch (RuntimeException e) {
                    tails.failed("a task of the tail of stream " + streamId, e);
                }
            }
            scheduled.set(false);
            if (mailbox.isEmpty() || !scheduled.compareAndSet(false, true)) {
                return;
            }
        }
    }

    int liveCount() {
        return live.size();
    }

    // --- tasks ---

    /** The first task of every tail: where the stream stands, read after the tail was registered. */
    void init() {
        if (high >= 0) {
            return;
        }
        StreamRepository.Head head = tails.head(streamId);
        if (head == null) {
            gone();
            return;
        }
        known(head.lastSeq(), head.state());
    }

    /** The head of the stream, read from PostgreSQL after this tail was registered (its first read, or the poll's). */
    private void known(long lastSeq, String headState) {
        high = lastSeq;
        state = headState;
        List<Subscription> joins = new ArrayList<>(waiting);
        waiting.clear();
        try {
            List<Appender.Change> kept = new ArrayList<>(pending);
            pending.clear();
            boolean overflowed = pendingOverflowed;
            pendingOverflowed = false;
            for (Appender.Change c : kept) {
                apply(c);
            }
            if (overflowed) {
                // what was dropped is committed, so a read of the head now covers it
                StreamRepository.Head again = tails.head(streamId);
                if (again != null) {
                    signalled(again.lastSeq(), again.state());
                }
            }
        }
        finally {
            // a read above that failed leaves the tail behind its head (the next signal or poll
            // reads on); the waiting subscribers join it as it stands, each on its own
            joins.forEach(this::join);
        }
    }

    /** This node's appender committed {@code change}. */
    void committed(Appender.Change change) {
        if (high < 0) {
            if (pending.size() < MAX_PENDING) {
                pending.add(change);
            }
            else {
                pendingOverflowed = true;
            }
            return;
        }
        apply(change);
    }

    private void apply(Appender.Change change) {
        List<Chunk> chunks = change.chunks();
        if (!chunks.isEmpty() && chunks.getLast().getSeq() > high) {
            long first = chunks.getFirst().getSeq();
            if (first > high + 1) {
                fetch(first - 1);
            }
            for (Chunk c : chunks) {
                if (c.getSeq() == high + 1) {
                    fanOut(c);
                    tails.handedOver();
                }
            }
        }
        settle(change.lastSeq(), change.state());
    }

    /**
     * The stream's head as the poll read it. A head ahead of {@code high} is most often a local
     * commit whose hand-over is still on its way (the poll read the head between the commit and
     * the hand-over), so the tail reads it only if the next poll finds the tail still short of
     * it: a lost signal costs at most two poll intervals, and a local stream is not read again
     * from PostgreSQL for nothing, each poll, for every stream that was committing.
     */
    void polled(long lastSeq, String headState) {
        if (high < 0 || lastSeq <= high) {
            polledAhead = -1;
            signalled(lastSeq, headState);
            return;
        }
        if (polledAhead >= 0 && high < polledAhead) {
            polledAhead = -1;
            settle(lastSeq, headState);
            return;
        }
        polledAhead = lastSeq;
    }

    /** The stream's head as another node committed it (its signal), or as read for this tail. */
    void signalled(long lastSeq, String headState) {
        if (high < 0) {
            known(lastSeq, headState);
            return;
        }
        settle(lastSeq, headState);
    }

    /** Brings the tail up to {@code lastSeq} (reading what it lacks) and to {@code headState}. */
    private void settle(long lastSeq, String headState) {
        if (lastSeq > high) {
            fetch(lastSeq);
        }
        if (headState != null && !headState.equals(state) && !StreamView.OPEN.equals(headState) && lastSeq <= high) {
            state = headState;
            for (Subscription s : live) {
                s.state(state, high);
                finish(s);
            }
            live.clear();
        }
    }

    /** Reads chunks high + 1 .. {@code to} from PostgreSQL, once for every subscriber here, and fans them out. */
    private void fetch(long to) {
        while (high < to) {
            List<Chunk> page = tails.read(streamId, createdAt, high + 1, to);
            if (page.isEmpty()) {
                // committed but not there: dropped by retention; nothing to fan out below the head
                tails.missing(to - high);
                high = to;
                return;
            }
            for (Chunk c : page) {
                if (c.getSeq() != high + 1) {
                    tails.missing(c.getSeq() - high - 1);
                    high = c.getSeq() - 1;
                }
                fanOut(c);
            }
        }
    }

    private void fanOut(Chunk c) {
        high = c.getSeq();
        for (Iterator<Subscription> it = live.iterator(); it.hasNext(); ) {
            Subscription s = it.next();
            if (s.gone()) {
                it.remove();
                finish(s);
                continue;
            }
            if (c.getSeq() == s.nextSeq) {
                if (s.chunk(c)) {
                    s.nextSeq++;
                }
            }
            else if (c.getSeq() > s.nextSeq) {
                // cannot happen while the invariant holds; if it did, the subscriber replays what it lacks
                it.remove();
                tails.failed("the tail of stream " + streamId + " found a live subscriber behind it",
                        new IllegalStateException("subscriber at " + s.nextSeq + ", chunk " + c.getSeq()));
                tails.replay(s);
            }
        }
    }

    /** A subscriber's replay is done up to its {@code nextSeq}: make it live (S5, see the class note). */
    void join(Subscription s) {
        if (s.gone()) {
            finish(s);
            return;
        }
        if (high < 0) {
            waiting.add(s);
            return;
        }
        if (s.nextSeq <= high) {
            if (high - s.nextSeq >= tails.pageSize() && !s.replayFoundNothing) {
                tails.replay(s);   // far behind (a slow reader): another round of pages off this queue
                return;
            }
            try {
                while (s.nextSeq <= high) {
                    List<Chunk> page = tails.read(streamId, createdAt, s.nextSeq, high);
                    if (page.isEmpty()) {
                        s.nextSeq = high + 1;
                        break;
                    }
                    for (Chunk c : page) {
                        if (!s.chunk(c)) {
                            finish(s);
                            return;
                        }
                        s.nextSeq = c.getSeq() + 1;
                    }
                }
            }
            catch (RuntimeException e) {
                // the subscriber cannot be brought up to the tail: it is told so, never left silent
                tails.failed("a subscriber joining the tail of stream " + streamId, e);
                s.failed("unavailable", "the stream could not be read; subscribe again from the last seq seen + 1");
                tails.release(s);
                return;
            }
        }
        if (state == null) {
            // the tail found the stream gone (retention) before this subscriber joined
            s.failed("not_found", "the stream is gone");
            tails.release(s);
            return;
        }
        if (!StreamView.OPEN.equals(state)) {
            // the stream closed: every subscriber's last frame is its final state
            s.state(state, high);
            finish(s);
            return;
        }
        live.add(s);
    }

    /** The subscription was cancelled. */
    void drop(Subscription s) {
        live.remove(s);
        waiting.remove(s);
        tails.release(s);
    }

    /** Drops subscribers whose sink closed. */
    void sweep() {
        for (Iterator<Subscription> it = live.iterator(); it.hasNext(); ) {
            Subscription s = it.next();
            if (s.gone()) {
                it.remove();
                finish(s);
            }
        }
    }

    /** The stream is no longer there (retention removed it): every subscriber here is done. */
    void gone() {
        high = Math.max(high, 0);
        for (Subscription s : live) {
            s.failed("not_found", "the stream is gone");
            tails.release(s);
        }
        for (Subscription s : waiting) {
            s.failed("not_found", "the stream is gone");
            tails.release(s);
        }
        live.clear();
        waiting.clear();
    }

    private void finish(Subscription s) {
        s.sink.end();
        tails.release(s);
    }
}
