package dev.waterline.lifecycle;

import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;

/** The group-commit shape that ingest and receipts share: one item, then company for a while. */
public final class Batches {

    private Batches() {
    }

    /**
     * Waits up to {@code wait} for a first item; then adds more until {@code batch} holds
     * {@code max} or {@code linger} has passed since the first (under load the queue already
     * holds a full batch, so batches grow with load without waiting). Returns false when no first
     * item came.
     */
    public static <T> boolean gather(BlockingQueue<T> queue, List<T> batch, int max, long lingerNanos, long waitMillis)
            throws InterruptedException {
        T first = queue.poll(waitMillis, TimeUnit.MILLISECONDS);
        if (first == null) {
            return false;
        }
        batch.add(first);
        long deadline = System.nanoTime() + lingerNanos;
        while (batch.size() < max) {
            queue.drainTo(batch, max - batch.size());
            long left = deadline - System.nanoTime();
            if (batch.size() >= max || left <= 0) {
                break;
            }
            T next = queue.poll(left, TimeUnit.NANOSECONDS);
            if (next == null) {
                break;
            }
            batch.add(next);
        }
        return true;
    }
}
