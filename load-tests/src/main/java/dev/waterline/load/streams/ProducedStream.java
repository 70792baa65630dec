package dev.waterline.load.streams;

import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A stream as its producer keeps it in a streams run ({@link StreamLoad}): the next seq to send and
 * the last one answered. Appended to by one producer connection, read by the run's thread.
 */
final class ProducedStream {
    final String id;
    long nextSeq = 1;
    final AtomicLong ackedSeq = new AtomicLong();

    ProducedStream(String id) {
        this.id = id;
    }

    /** The seq to send: one after the last answered at least (a late gap answer may name one stored since). */
    synchronized long next() {
        nextSeq = Math.max(nextSeq, ackedSeq.get() + 1);
        return nextSeq++;
    }

    /** Due times of the seqs sent and not yet answered: a seq sent again carries the same data, as a producer's retry must. */
    final ConcurrentSkipListMap<Long, Long> unanswered = new ConcurrentSkipListMap<>();

    long dueOf(long seq, long due) {
        Long first = unanswered.putIfAbsent(seq, due);
        return first == null ? due : first;
    }

    void acked(long lastSeq) {
        ackedSeq.accumulateAndGet(lastSeq, Math::max);
        unanswered.headMap(lastSeq, true).clear();
        synchronized (this) {
            notifyAll();
        }
    }

    /** Every seq sent was answered. */
    synchronized boolean settled() {
        return ackedSeq.get() >= nextSeq - 1;
    }

    /** A refused append: the producer goes on from the seq the server expects (gap) or from the one refused. */
    synchronized void refused(String code, Long expected, String correlationId) {
        if (expected != null) {
            nextSeq = expected;
        }
        else if (correlationId != null) {
            nextSeq = Math.min(nextSeq, Long.parseLong(correlationId));
        }
        notifyAll();
    }
}
