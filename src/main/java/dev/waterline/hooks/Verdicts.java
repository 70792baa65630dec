package dev.waterline.hooks;

import java.time.Duration;
import java.time.Instant;

/**
 * The judge of a call's outcome: what is recorded for a claimed delivery, given what its sink
 * answered (PROTOCOL.md §7). Pure: no clock of its own, no store, no metrics; the caller hands it
 * the time and counts what it answers.
 *
 * <ul>
 *   <li>{@link Sink.Outcome.Done}: {@link Verdict#DONE}, the target answered.</li>
 *   <li>{@link Sink.Outcome.Permanent}: {@link Verdict#DEAD} at once, the target answered.</li>
 *   <li>{@link Sink.Outcome.Retry}: {@link Verdict#RETRY} after the backoff (or the target's
 *       {@code Retry-After}), a failure for the breaker; {@link Verdict#DEAD} once the attempt was
 *       the {@code max-attempts}th; {@link Verdict#RELEASE} now, and nothing for the breaker, when
 *       the workers are stopping (the call was cut short: it says nothing about the target).</li>
 *   <li>{@link Sink.Outcome.NotMade}: {@link Verdict#RELEASE} within about a {@code call-timeout}
 *       (no room on this node, which a call ends within that), nothing for the breaker.</li>
 * </ul>
 */
final class Verdicts {

    /** Errors are kept to this many characters. */
    static final int ERROR_CHARS = 500;

    /** The properties the judgement reads. */
    record Rules(int maxAttempts, Duration backoffBase, Duration backoffMax, Duration callTimeout) {

        static Rules of(HookProperties p) {
            return new Rules(p.maxAttempts(), p.backoffBase(), p.backoffMax(), p.callTimeout());
        }
    }

    private Verdicts() {
    }

    /** What is recorded for {@code c} after its sink answered {@code outcome}; {@code stopping}: the workers are stopping. */
    static DeliveryQueueRepository.Recorded judge(DeliveryQueueRepository.Claimed c, Sink.Outcome outcome, boolean stopping,
                                                  Instant now, Rules rules) {
        return switch (outcome) {
            case Sink.Outcome.Done d -> new DeliveryQueueRepository.Recorded(c, Verdict.DONE, null, null, true);
            case Sink.Outcome.Permanent p -> new DeliveryQueueRepository.Recorded(c, Verdict.DEAD, null, clip(p.error()), true);
            case Sink.Outcome.NotMade n -> {
                // no room on this node (a bound of the sink's, counted there), which a call ends within
                // call-timeout: says nothing about the target, so its last error stays the target's
                Duration soon = Backoff.delay(1, null, rules.callTimeout(), rules.backoffMax());
                yield new DeliveryQueueRepository.Recorded(c, Verdict.RELEASE, now.plus(soon), null, null);
            }
            case Sink.Outcome.Retry r when stopping ->
                // cut short by shutdown: says nothing about the target, and costs the delivery no attempt
                    released(c, now);
            case Sink.Outcome.Retry r when c.attempt() >= rules.maxAttempts() -> new DeliveryQueueRepository.Recorded(c, Verdict.DEAD, null,
                    clip("gave up after " + c.attempt() + " attempts; the last: " + r.error()), false);
            case Sink.Outcome.Retry r -> {
                Duration delay = Backoff.delay(c.attempt(), r.retryAfter(), rules.backoffBase(), rules.backoffMax());
                yield new DeliveryQueueRepository.Recorded(c, Verdict.RETRY, now.plus(delay), clip(r.error()), false);
            }
        };
    }

    /** A delivery claimed but not called (given back past a share, or not started): back as it was, due now, no attempt counted. */
    static DeliveryQueueRepository.Recorded released(DeliveryQueueRepository.Claimed c, Instant now) {
        return new DeliveryQueueRepository.Recorded(c, Verdict.RELEASE, now, null, null);
    }

    /**
     * Whether the call's time says how fast its hook's target is: not for a call not made, nor for
     * one cut short by shutdown.
     */
    static boolean judgesTarget(Sink.Outcome outcome, boolean stopping) {
        return !(outcome instanceof Sink.Outcome.NotMade) && !(stopping && outcome instanceof Sink.Outcome.Retry);
    }

    static String clip(String error) {
        return error == null ? null : error.length() <= ERROR_CHARS ? error : error.substring(0, ERROR_CHARS);
    }
}
