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

    /** The subscriber leaves (unsubscribe, or its connection closed): no frame of this subscription is written after. */
    void cancel() {
        cancelled = true;
        tail.enqueue(() -> tail.drop(this));
    }

    /** True the first time only: the subscription's place in its tail is given back once. */
    boolean release() {
        return released.compareAndSet(false, true);
    }

    boolean gone() {
        return cancelled || !sink.isOpen();
    }
}
