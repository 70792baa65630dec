package dev.waterline.hooks;

import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import dev.waterline.lifecycle.Loops;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

/**
 * The call step of the hook workers: each claimed delivery's call on a virtual thread of its own,
 * holding no transaction (H3); its outcome judged ({@link Verdicts}), counted in
 * {@code waterline_hook_deliveries_total{kind,outcome}} and handed to the {@link HookRecorder}.
 *
 * <p>Every call started ends in exactly one outcome handed to the recorder: a sink that throws
 * instead of answering (counted in {@code waterline_loop_errors_total{loop="hook_claim"}}) makes a
 * retry, and a call that cannot be started (the executor is stopping) is released unmade. Then the
 * call's end is told to the shares ({@code judged}: whether its time says how fast the target is)
 * and to the claim loops ({@code callEnded}: a loop waiting for room may claim again).
 *
 * <p>Stopping: {@link #stop} lets the calls out end within {@code call-timeout} (a call cut short
 * by shutdown is released, its attempt not counted); one still out after that is interrupted, and
 * its outcome, if it comes, is counted by the recorder as unrecorded.
 */
final class HookCaller {

    private static final Log log = LogFactory.getLog(HookCaller.class);
    static final String CALL_LOOP = HookClaimer.CLAIM_LOOP;

    private final Sinks sinks;
    private final HookShares shares;
    private final HookRecorder recorder;
    private final HookMetrics metrics;
    private final Loops loops;
    private final Clock clock;
    private final Verdicts.Rules rules;
    /** A call ended: the claim loops may have room again. */
    private final Runnable callEnded;
    /**
     * Hooks deleted on this node within {@code claim-timeout} (when, in nanoseconds): a call of one
     * that ends after the deletion (claimed just before it) lets the sinks forget the hook again, so
     * no connection it opened outlives it.
     */
    private final Map<String, Long> deleted = new ConcurrentHashMap<>();
    private volatile ExecutorService calls;
    private volatile boolean stopping;

    HookCaller(Sinks sinks, HookShares shares, HookRecorder recorder, HookMetrics metrics, Loops loops, Clock clock,
               Verdicts.Rules rules, Runnable callEnded) {
        this.sinks = sinks;
        this.shares = shares;
        this.recorder = recorder;
        this.metrics = metrics;
        this.loops = loops;
        this.clock = clock;
        this.rules = rules;
        this.callEnded = callEnded;
    }

    void open() {
        stopping = false;
        calls = Executors.newThreadPerTaskExecutor(Thread.ofVirtual().name("hook-call-", 0).factory());
    }

    /** Starts {@code c}'s call, which the shares let go as {@code call}; one that cannot start is released unmade. */
    void start(DeliveryQueueRepository.Claimed c, HookShares.Call call) {
        metrics.inFlight().incrementAndGet();
        try {
            calls.execute(() -> call(c, call));
        }
        catch (RuntimeException rejected) {
            // the executor is stopping: the call is not made, the row goes back as it was
            recorder.release(c);
            ended(call, false);
            loops.failed(CALL_LOOP, "a claimed hook delivery could not be started (stopping); released unmade", rejected);
        }
    }

    private void call(DeliveryQueueRepository.Claimed c, HookShares.Call started) {
        boolean judged = true;
        DeliveryQueueRepository.Recorded recorded;
        try {
            Sink sink = sinks.of(c.kind());
            Sink.Outcome outcome = sink == null ? new Sink.Outcome.Permanent("no sink for the kind " + c.kind())
                    : sink.deliver(new Sink.Call(c.hookId(), c.id(), c.target(), c.secret(), c.idempotencyKey(), c.attempt(),
                            c.chatId(), c.payload()));
            boolean cutShort = stopping;
            judged = Verdicts.judgesTarget(outcome, cutShort);
            recorded = Verdicts.judge(c, outcome, cutShort, clock.instant(), rules);
        }
        catch (RuntimeException | Error e) {
            // a sink must not throw; if one does, the attempt is a retry like any failure
            loops.failed(CALL_LOOP, "a hook sink threw instead of answering an outcome", e);
            recorded = Verdicts.judge(c, Sink.Outcome.retry(Sink.Outcome.describe(e)), false, clock.instant(), rules);
        }
        try {
            if (recorded.verdict().label() != null) {
                metrics.attempt(c.kind(), recorded.verdict());
            }
            recorder.add(recorded);
        }
        finally {
            ended(started, judged);
            if (deleted.containsKey(c.hookId())) {
                loops.pass(HookMaintenance.MAINTENANCE_LOOP, () -> sinks.forget(c.hookId()));
            }
        }
    }

    /** A call ended; {@code judged}: its time says how fast its hook's target is. */
    private void ended(HookShares.Call call, boolean judged) {
        shares.finished(call, judged, System.nanoTime());
        metrics.inFlight().decrementAndGet();
        callEnded.run();
    }

    /** A hook deleted on this node: calls of it that end later let the sinks forget it again. */
    void deleted(String hookId) {
        deleted.put(hookId, System.nanoTime());
    }

    /** Forgets deletions older than {@code claimTimeout}: no call of them can still be out. */
    void forgetDeletedBefore(long nowNanos, Duration claimTimeout) {
        deleted.values().removeIf(at -> nowNanos - at > claimTimeout.toNanos());
    }

    /** The workers are stopping: a call that ends cut short from now on is released, its attempt not counted. */
    void stopping() {
        stopping = true;
    }

    /** Lets the calls out end within {@code call-timeout} (cut short, they are released), then interrupts the rest. */
    void stop(Duration callTimeout) {
        stopping = true;
        ExecutorService c = calls;
        if (c == null) {
            return;
        }
        c.shutdown();
        try {
            if (!c.awaitTermination(callTimeout.toMillis() + 1_000, TimeUnit.MILLISECONDS)) {
                log.warn("hook calls still out at shutdown after waterline.hooks.call-timeout; their claims expire and are sent again");
                c.shutdownNow();
            }
        }
        catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
