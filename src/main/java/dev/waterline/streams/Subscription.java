package dev.waterline.streams;

import java.util.concurrent.atomic.AtomicBoolean;

/**
 * One subscriber following one stream from a seq on. {@code nextSeq} is the next chunk it must
 * get: its replay advances it, then hands it to the tail ({@link Tail#join}), which alone advances
 * it from then on (the hand-over goes through the tail's queue, which orders the two).
 */
final class Subscription {

    final Tail tail;
    final Subscriber sink;
    long nextSeq;
    /** Its last replay found nothing from {@code nextSeq} on (retention removed those chunks): the join reads on instead of replaying again. */
    boolean replayFoundNothing;
    volatile boolean cancelled;
    private final AtomicBoolean released = new AtomicBoolean();

    Subscription(Tail tail, Subscriber sink, long fromSeq) {
        this.tail = tail;
        this.sink = sink;
        this.nextSeq = fromSeq;
    }

    String streamId() {
        return tail.streamId;
    }

    /**
     * The subscriber leaves (unsubscribe, or its connection closed): no frame of this subscription
     * is written after this returns, since every write checks under the same lock ({@link #chunk},
     * {@link #state}); a re-subscribe's first frame therefore follows the old one's last.
     */
    void cancel() {
        synchronized (this) {
            cancelled = true;
        }
        tail.enqueue(() -> tail.drop(this));
    }

    /** Writes {@code c} unless the subscription is gone; false if it was. */
    synchronized boolean chunk(Chunk c) {
        if (gone()) {
            return false;
        }
        sink.chunk(tail.streamId, c);
        return true;
    }

    /** Writes the stream's state unless the subscription is gone. */
    synchronized void state(String state, long lastSeq) {
        if (!gone()) {
            sink.state(tail.streamId, state, lastSeq);
        }
    }

    /** Ends it with an error unless it is gone already (then it is only ended, so its sink lets go of it). */
    synchronized void failed(String code, String message) {
        if (!gone()) {
            sink.failed(code, message);
        }
        else {
            sink.end();
        }
        cancelled = true;
    }

    /** True the first time only: the subscription's place in its tail is given back once. */
    boolean release() {
        return released.compareAndSet(false, true);
    }

    boolean gone() {
        return cancelled || !sink.isOpen();
    }
}
