package dev.waterline.blobs;

import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

import dev.waterline.metrics.WaterlineMetrics;
import dev.waterline.web.ApiException;
import io.micrometer.core.instrument.Counter;
import org.springframework.http.HttpStatus;
import org.springframework.stereotype.Component;

/**
 * The budget of file transfers in progress at once ({@code max-concurrent-transfers}): what bounds
 * the heap and database work that uploads and downloads take, however many arrive. One user holds
 * at most {@code max-transfers-per-user} of the turns, so one account cannot take them all. A
 * transfer waits its turn (fair: in arrival order) up to {@code transfer-wait}, its own user's
 * share first, then is refused with {@code 503 unavailable}, counted.
 */
@Component
public class Transfers {

    private final Semaphore permits;
    private final int perUser;
    private final java.util.Map<String, Semaphore> users = new java.util.concurrent.ConcurrentHashMap<>();
    private final long waitNanos;
    private final Counter refused;

    Transfers(BlobProperties properties, WaterlineMetrics metrics) {
        this.permits = new Semaphore(properties.maxConcurrentTransfers(), true);
        this.perUser = properties.maxTransfersPerUser();
        this.waitNanos = properties.transferWait().toNanos();
        int max = properties.maxConcurrentTransfers();
        metrics.gauge("waterline.blob.transfers.active", "uploads and downloads of file contents in progress",
                () -> max - permits.availablePermits());
        this.refused = metrics.counter("waterline.blob.transfers.refused",
                "transfers answered 503 because they waited past waterline.blobs.transfer-wait for their turn");
    }

    /** A transfer's turn: close it when the transfer ends, however it ends. */
    public interface Turn extends AutoCloseable {
        @Override
        void close();
    }

    /** Waits for {@code user}'s turn and then the node's; throws 503 {@code unavailable} past {@code transfer-wait}. */
    public Turn begin(String user) {
        long deadline = System.nanoTime() + waitNanos;
        Semaphore mine = users.computeIfAbsent(user, u -> new Semaphore(perUser, true));
        try {
            if (mine.tryAcquire(waitNanos, TimeUnit.NANOSECONDS)) {
                if (permits.tryAcquire(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS)) {
                    boolean[] closed = {false};
                    return () -> {
                        if (!closed[0]) {
                            closed[0] = true;
                            permits.release();
                            release(user, mine);
                        }
                    };
                }
                release(user, mine);
            }
        }
        catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        refused.increment();
        throw new ApiException(HttpStatus.SERVICE_UNAVAILABLE, "unavailable", "too many file transfers at once; retry", 1);
    }

    /** Gives a user's turn back, and forgets the user when none of theirs is out (the map holds only users with transfers). */
    private void release(String user, Semaphore mine) {
        mine.release();
        users.computeIfPresent(user, (u, s) -> s == mine && s.availablePermits() == perUser && !s.hasQueuedThreads() ? null : s);
    }
}
