package dev.waterline.hooks;

import java.util.List;

/**
 * A hook's circuit breaker rule (PROTOCOL.md §7), apart from where its state lives (the hook's row,
 * changed only under that row's lock): {@code breaker-failures} consecutive retryable failures
 * open it; after {@code breaker-cooldown} the one worker that wins the compare-and-set on the row
 * sends the one probe ({@code half_open}); the probe's success closes it, its failure opens it
 * again. A permanent failure (a 4xx) counts as an answer: the target is up, so it resets the count
 * like a success. Outcomes of calls that were already out when the breaker opened only move the
 * count: only the probe decides a half-open breaker, and nothing but the cooldown an open one. A
 * probe that was not made (no connection to be had, or cut short by shutdown) says nothing about
 * the target: the breaker opens again with its cooldown already over, so that the next probe (the
 * first one made) may go as soon as a held delivery is due, rather than at the probe's deadline.
 */
final class Breaker {

    static final String CLOSED = "closed";
    static final String OPEN = "open";
    static final String HALF_OPEN = "half_open";

    /** The breaker's state on the row. */
    record State(String breaker, int failures) {
    }

    /**
     * One outcome, in the order they were recorded; {@code probe} for the half-open probe's;
     * {@code made} false for a call not made (its {@code answered} then means nothing).
     */
    record Result(boolean answered, boolean probe, boolean made) {

        Result(boolean answered, boolean probe) {
            this(answered, probe, true);
        }

        static Result notMade(boolean probe) {
            return new Result(false, probe, false);
        }
    }

    /**
     * What the row becomes; {@code opened}/{@code closed} when it changed to that state;
     * {@code probeAgain} when its probe was not made: open again, its cooldown over.
     */
    record Next(String breaker, int failures, boolean opened, boolean closed, boolean probeAgain) {

        Next(String breaker, int failures, boolean opened, boolean closed) {
            this(breaker, failures, opened, closed, false);
        }
    }

    private Breaker() {
    }

    static Next after(State state, List<Result> results, int threshold) {
        String breaker = state.breaker();
        int failures = state.failures();
        boolean opened = false, closed = false, probeAgain = false;
        for (Result r : results) {
            if (!r.made()) {
                if (r.probe() && HALF_OPEN.equals(breaker)) {
                    breaker = OPEN;
                    probeAgain = true;
                }
            }
            else if (r.answered()) {
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
        return new Next(breaker, failures, opened, closed, probeAgain);
    }
}
