package dev.waterline.gateway;

import java.util.concurrent.atomic.AtomicLong;

/**
 * The heap that frames queued for clients may take, all connections together. Each connection
 * bounds its own queue ({@code send-buffer-limit}, 1 MiB), but thousands of clients that stop
 * reading while a stream or a busy chat fills their queues could hold that much each: more than
 * the heap. Past this budget, a connection with more than {@link #FLOOR_CHARS} characters waiting
 * is withdrawn (4008, as a slow reader is) when more is queued for it; a connection that reads
 * keeps its queue near empty and is never the one withdrawn. The count is in characters, taken at
 * two bytes each (a frame with any character outside Latin-1 is stored so).
 */
final class OutboundBudget {

    /** A connection with no more than this waiting is never withdrawn for the budget. */
    static final long FLOOR_CHARS = 16_384;

    private final AtomicLong queued = new AtomicLong();
    private final long limitChars;

    OutboundBudget(long limitChars) {
        this.limitChars = limitChars;
    }

    /** The budget for {@code share} of a heap of {@code maxHeap} bytes. */
    static OutboundBudget of(long maxHeap, double share) {
        return new OutboundBudget(maxHeap <= 0 || maxHeap == Long.MAX_VALUE ? Long.MAX_VALUE : (long) (maxHeap * share) / 2);
    }

    /**
     * Takes {@code chars} for a frame queued behind {@code alreadyWaiting} characters of its
     * connection; false (nothing taken) when the budget is spent and that connection already had
     * more than its floor waiting (a client that reads is withdrawn for no frame, however large).
     */
    boolean take(long chars, long alreadyWaiting) {
        long total = queued.addAndGet(chars);
        if (total > limitChars && alreadyWaiting > FLOOR_CHARS) {
            queued.addAndGet(-chars);
            return false;
        }
        return true;
    }

    void release(long chars) {
        queued.addAndGet(-chars);
    }

    long queued() {
        return queued.get();
    }

    long limit() {
        return limitChars;
    }
}
