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
 * the heap and database work that uploads and downloads take, however many arrive. A transfer
 * waits its turn (fair: in arrival order) up to {@code transfer-wait}, then is refused with
 * {@code 503 unavailable}, counted.
 */
@Component
public class Transfers {

    private final Semaphore permits;
    private final long waitNanos;
    private final Counter refused;

    Transfers(BlobProperties properties, WaterlineMetrics metrics) {
        this.permits = new Semaphore(properties.maxConcurrentTransfers(), true);
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

    /** Waits for a turn; throws 503 {@code unavailable} past {@code transfer-wait}. */
    public Turn begin() {
        try {
            if (permits.tryAcquire(waitNanos, TimeUnit.NANOSECONDS)) {
                boolean[] closed = {false};
                return () -> {
                    if (!closed[0]) {
                        closed[0] = true;
                        permits.release();
                    }
                };
            }
        }
        catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        refused.increment();
        throw new ApiException(HttpStatus.SERVICE_UNAVAILABLE, "unavailable", "too many file transfers at once; retry", 1);
    }
}
