package dev.waterline.hooks;

import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;

/**
 * When a failed delivery is tried again: {@code backoff-base × 2^(attempt-1)}, capped at
 * {@code backoff-max}, with "equal jitter" (a uniform draw over the upper half of that delay, so
 * that retries of one outage spread out but never come sooner than half the step); or exactly the
 * target's {@code Retry-After}, capped at {@code backoff-max} too.
 */
final class Backoff {

    private Backoff() {
    }

    static Duration delay(int attempt, Duration retryAfter, Duration base, Duration max) {
        if (retryAfter != null) {
            return retryAfter.compareTo(max) > 0 ? max : retryAfter;
        }
        long baseMs = Math.max(1, base.toMillis());
        int shift = Math.min(Math.max(0, attempt - 1), 40);
        long step = baseMs > (Long.MAX_VALUE >> shift) ? Long.MAX_VALUE : baseMs << shift;
        long capped = Math.min(step, max.toMillis());
        long half = capped / 2;
        return Duration.ofMillis(half + ThreadLocalRandom.current().nextLong(capped - half + 1));
    }
}
