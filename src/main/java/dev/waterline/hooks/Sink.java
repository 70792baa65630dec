package dev.waterline.hooks;

import java.time.Duration;
import java.util.Map;

/**
 * One kind of hook target (PROTOCOL.md §7): HTTP, or a broker reached with its own client. A port
 * with one adapter per kind ({@code hooks.sinks}); the workers know none of them.
 *
 * <p>{@link #deliver} is called on a virtual thread, at most {@code per-hook-concurrency} at a time
 * per hook (fewer while the hook is judged slow); it blocks for at most about
 * {@code call-timeout}, checks the target's address with the {@link AddressGuard} first (every
 * call: a name may resolve elsewhere since the hook was created) and connects to the address it
 * checked. It answers {@link Outcome.Done} only once the target has confirmed (a 2xx, a publisher
 * confirm, a PUBACK, a JetStream ack or a flush, a Kafka ack from every in-sync replica, an XADD
 * reply), and never throws: a failure is an {@link Outcome}.
 *
 * <p>A sink that keeps connections per target bounds them and lets go of them: {@link #forget} when
 * a hook is deleted, {@link #closeIdle} from the maintenance pass.
 */
public interface Sink extends AutoCloseable {

    /** The kind this sink serves: {@code http}, {@code amqp}, ... */
    String kind();

    /**
     * Checks a new hook's fields for this kind ({@code fields}: the request's strings); returns
     * the fields to store (the kind's own, nothing else).
     *
     * @throws IllegalArgumentException with what is wrong (answered {@code 400 invalid})
     * @throws AddressGuard.Refused when the target's address may not be called ({@code 400})
     */
    Map<String, String> target(Map<String, String> fields) throws AddressGuard.Refused;

    /** Sends one delivery; never throws. */
    Outcome deliver(Call call);

    /**
     * The hook is gone (deleted on this node): connections that only it used here may close now,
     * rather than when idle. A sink that keeps nothing per target does nothing.
     */
    default void forget(String hookId) {
    }

    /** Closes connections idle past the sink's own limit (called by the maintenance pass). */
    default void closeIdle() {
    }

    /** Releases the connections this sink keeps. */
    @Override
    void close();

    /** One attempt at one delivery. */
    record Call(String hookId, long deliveryId, Map<String, String> target, String secret, String idempotencyKey,
                int attempt, String chatId, String payload) {
    }

    /** What became of an attempt. */
    sealed interface Outcome {

        /** The target took it. */
        record Done() implements Outcome {
        }

        /**
         * Worth trying again (a timeout, a refused connection, a 5xx, 408, 429, a broker's nack);
         * {@code retryAfter} the target's own wait (HTTP {@code Retry-After}), or null.
         */
        record Retry(String error, Duration retryAfter) implements Outcome {
        }

        /** Trying again would not change the answer (any other 4xx, a refused address): the dead letters. */
        record Permanent(String error) implements Outcome {
        }

        /**
         * The call was not made: this node had no room for it now (every connection it may keep
         * to targets of the kind in use, or owed to targets refused before, or its connection's
         * turn over). Tried again soon; no attempt counted, the breaker untouched (a probe not made
         * opens its breaker again, its cooldown over).
         */
        record NotMade(String reason) implements Outcome {
        }

        Outcome DONE = new Done();

        static Outcome retry(String error) {
            return new Retry(error, null);
        }

        static String describe(Throwable e) {
            Throwable root = e;
            while (root.getCause() != null && root.getCause() != root) {
                root = root.getCause();
            }
            String m = root.getMessage();
            return root.getClass().getSimpleName() + (m == null || m.isBlank() ? "" : ": " + m);
        }
    }
}
