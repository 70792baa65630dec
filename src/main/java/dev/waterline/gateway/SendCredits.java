package dev.waterline.gateway;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;

import io.github.bucket4j.Bucket;

/**
 * One connection's send credits: at most {@code max-inflight-sends} sends taken and not yet
 * answered, and at most {@code max-sends-per-second} sends (and receipts) a second, a token
 * bucket refilled greedily.
 */
final class SendCredits {

    private final Bucket rate;
    private final int maxInflight;
    private final AtomicInteger inflight = new AtomicInteger();

    SendCredits(int maxInflight, int perSecond) {
        this.maxInflight = maxInflight;
        this.rate = Bucket.builder()
                .addLimit(limit -> limit.capacity(perSecond).refillGreedy(perSecond, Duration.ofSeconds(1)))
                .build();
    }

    /** One token of the rate, nothing in flight (a receipt). */
    boolean admitRate() {
        return rate.tryConsume(1);
    }

    /** One in-flight credit and one token of the rate, or neither. */
    boolean admitSend() {
        if (inflight.incrementAndGet() > maxInflight) {
            inflight.decrementAndGet();
            return false;
        }
        if (!rate.tryConsume(1)) {
            inflight.decrementAndGet();
            return false;
        }
        return true;
    }

    /** A send taken by {@link #admitSend} was answered: its in-flight credit comes back. */
    void answered() {
        inflight.decrementAndGet();
    }
}
