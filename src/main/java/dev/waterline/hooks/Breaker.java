package dev.waterline.hooks;

import java.util.List;

/**
 * A hook's circuit breaker rule (PROTOCOL.md §7), apart from where its state lives (the hook's row,
 * changed only under that row's lock): {@code breaker-failures} consecutive retryable failures
 * open it; after {@code breaker-cooldown} the one worker that wins the compare-and-set on the row
 * sends the one probe ({@code half_open}); the probe's success closes it, its failure opens it
 * again. A permanent failure (a 4xx) counts as an answer: the target is up, so it resets the count
 * like a success. Outcomes of calls that were already out when the breaker opened only move the
 * count: only the probe decides a half-open breaker, and nothing but the cooldown an open one.
 */
final class Breaker {

    static final String CLOSED = "closed";
    static final String OPEN = "open";
    static final String HALF_OPEN = "half_open";

    /** The breaker's state on the row. */
    record State(String breaker, int failures) {
    }

    /** One outcome, in the order they were recorded; {@code probe} for the half-open probe's. */
    record Result(boolean answered, boolean probe) {
    }

    /** What the row becomes; {@code opened}/{@code closed} when it changed to that state. */
    record Next(String breaker, int failures, boolean opened, boolean closed) {
    }

    private Breaker() {
    }

    static Next after(State state, List<Result> results, int threshold) {
        String breaker = state.breaker();
        int failures = state.failures();
        boolean opened = false, closed = false;
        for (Result r : results) {
            if (r.answered()) {
                failures = 0;
                if (r.probe() && HALF_OPEN.equals(breaker)) {
                    breaker = CLOSED;
                    closed = true;
                    opened = false;
                }
            }
            else {
                failures++;
                if (r.probe() && HALF_OPEN.equals(breaker) || CLOSED.equals(breaker) && failures >= threshold) {
                    breaker = OPEN;
                    opened = true;
                    closed = false;
                }
            }
        }
        return new Next(breaker, failures, opened, closed);
    }
}
