package dev.waterline.web;

import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import org.springframework.http.HttpStatus;
import org.springframework.stereotype.Component;

/**
 * Bounded turns at PostgreSQL for REST requests ({@code waterline.api.max-concurrent-queries}):
 * a request's queries and the serialisation of its answer happen within its turn, so at most that
 * many REST answers are being read and built at once however many requests arrive, and the rest
 * of the pool stays free for the group commit. A request that waits longer than
 * {@code max-wait} is answered 503 {@code unavailable}. Fair, so a storm's requests are served
 * in arrival order.
 */
@Component
public class DatabaseTurns {

    private final Semaphore turns;
    private final long maxWaitNanos;

    DatabaseTurns(ApiProperties properties) {
        this.turns = new Semaphore(properties.maxConcurrentQueries(), true);
        this.maxWaitNanos = properties.maxWait().toNanos();
    }

    /** Runs {@code work} within a turn. */
    public <T> T run(Supplier<T> work) {
        acquire();
        try {
            return work.get();
        }
        finally {
            turns.release();
        }
    }

    private void acquire() {
        try {
            if (turns.tryAcquire(maxWaitNanos, TimeUnit.NANOSECONDS)) {
                return;
            }
        }
        catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        throw new ApiException(HttpStatus.SERVICE_UNAVAILABLE, "unavailable", "too many requests at the database at once; retry");
    }
}
