package dev.waterline.hooks;

import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;

import dev.waterline.lifecycle.Loops;
import dev.waterline.lifecycle.ThrottledLog;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

/**
 * The record step of the hook workers: gathers the calls' outcomes and records them in batches
 * ({@link DeliveryQueueRepository#record}), and keeps what recording taught this node about breakers (the
 * hooks whose breaker is not closed, which the claims leave out).
 *
 * <p>Loop. Wait up to 100 ms for an outcome, take it and up to 255 more, record them in one short
 * transaction; hooks whose breaker opened or closed are handed to {@code sort}, which brings their
 * rows in line with it. The loop runs while the workers run and, once they stop, until the outcomes
 * handed to it are all recorded.
 *
 * <p>Errors: no outcome slips. A batch that fails is tried again twice (after 200 and 400 ms); one
 * that still fails is given up: counted in {@code waterline.hook.outcomes.unrecorded} (per outcome)
 * and in {@code waterline_loop_errors_total{loop="hook_record"}}, and logged (at most once a
 * second). Its rows stay claimed; their claims expire after {@code claim-timeout} and they are sent
 * again, which at-least-once allows and the idempotency key lets receivers drop. An outcome handed
 * in after the recorder stopped (a call that outlived {@code call-timeout} at shutdown) is counted
 * and logged (throttled) the same way, never dropped unsaid.
 *
 * <p>Stopping: {@link #stopAccepting()}, then the loop drains and ends; {@link #drop()} counts what
 * was still left. Invariant H4 (a claim is recorded, or counted and returned by the claim's expiry).
 */
final class HookRecorder {

    private static final Log log = LogFactory.getLog(HookRecorder.class);
    static final String RECORD_LOOP = "hook_record";
    private static final int BATCH = 256;

    private final DeliveryQueueRepository queue;
    private final HookProperties properties;
    private final HookMetrics metrics;
    private final Loops loops;
    private final Clock clock;
    private final String claimant;
    /** Hooks whose breaker opened or closed: their rows are to be brought in line with it. */
    private final Consumer<String> sort;
    private final LinkedBlockingQueue<DeliveryQueueRepository.Recorded> outcomes = new LinkedBlockingQueue<>();
    /** Hooks whose breaker this node last saw not closed: its claims leave them out. */
    private final Set<String> notClosed = ConcurrentHashMap.newKeySet();
    private final ThrottledLog lostLog = new ThrottledLog();
    private volatile boolean accepting;

    HookRecorder(DeliveryQueueRepository queue, HookProperties properties, HookMetrics metrics, Loops loops, Clock clock, String claimant,
                 Consumer<String> sort) {
        this.queue = queue;
        this.properties = properties;
        this.metrics = metrics;
        this.loops = loops;
        this.clock = clock;
        this.claimant = claimant;
        this.sort = sort;
    }

    String claimant() {
        return claimant;
    }

    /** Hooks whose breaker this node last saw not closed (a live view). */
    Set<String> notClosed() {
        return notClosed;
    }

    /** What the database says now about breakers not closed (the maintenance pass, and at start). */
    void breakersNotClosed(List<String> now) {
        notClosed.retainAll(Set.copyOf(now));
        notClosed.addAll(now);
    }

    /** Hands an outcome in to be recorded; counted and logged if the recorder has stopped. */
    void add(DeliveryQueueRepository.Recorded outcome) {
        outcomes.add(outcome);
        // stopped meanwhile: the loop may have ended before it saw this one; if it is still here, it is lost
        if (!accepting && outcomes.remove(outcome)) {
            lost(1, "a hook outcome came after the recorder stopped (a call that outlived call-timeout at shutdown)");
        }
    }

    /** A delivery claimed and not called: back as it was, due now, no attempt counted. */
    void release(DeliveryQueueRepository.Claimed c) {
        add(Verdicts.released(c, clock.instant()));
    }

    /** Starts the record loop; it runs while {@code current} holds and, once outcomes stop coming, until none is left. */
    Thread start(BooleanSupplier current) {
        accepting = true;
        return loops.start(RECORD_LOOP, "hook-record", () -> current.getAsBoolean() && (accepting || !outcomes.isEmpty()), this::step);
    }

    /** No more outcomes are expected: the loop records what it has, then ends. */
    void stopAccepting() {
        accepting = false;
    }

    /** After the loop ended: what it left (it was stopped before it could record them) is counted and logged. */
    void drop() {
        List<DeliveryQueueRepository.Recorded> left = new ArrayList<>();
        outcomes.drainTo(left);
        if (!left.isEmpty()) {
            lost(left.size(), left.size() + " hook outcomes were left unrecorded at shutdown");
        }
    }

    void step() throws InterruptedException {
        DeliveryQueueRepository.Recorded first = outcomes.poll(100, TimeUnit.MILLISECONDS);
        if (first == null) {
            return;
        }
        List<DeliveryQueueRepository.Recorded> batch = new ArrayList<>(BATCH);
        batch.add(first);
        outcomes.drainTo(batch, BATCH - 1);
        for (int attempt = 1; ; attempt++) {
            try {
                record(batch);
                return;
            }
            catch (RuntimeException e) {
                if (attempt >= 3) {
                    metrics.unrecorded(batch.size());
                    loops.failed(RECORD_LOOP, batch.size() + " hook outcomes not recorded; their claims expire and are sent again", e);
                    return;
                }
                loops.failed(RECORD_LOOP, "recording hook outcomes (will try again)", e);
                Thread.sleep(200L * attempt);
            }
        }
    }

    private void record(List<DeliveryQueueRepository.Recorded> batch) {
        DeliveryQueueRepository.Recording r = queue.record(claimant, batch, properties.breakerFailures(), properties.breakerCooldown());
        for (String h : r.opened()) {
            metrics.opened();
            notClosed.add(h);
            sort.accept(h);
        }
        for (String h : r.closed()) {
            notClosed.remove(h);
            sort.accept(h);
        }
        long now = clock.millis();
        for (DeliveryQueueRepository.Recorded x : batch) {
            if (x.verdict() == Verdict.DONE) {
                metrics.delivered(now - x.claimed().createdAtMillis());
            }
        }
    }

    private void lost(int n, String what) {
        metrics.unrecorded(n);
        long unlogged = lostLog.admit();
        if (unlogged >= 0) {
            log.warn(what + "; their claims expire after waterline.hooks.claim-timeout and they are sent again"
                    + ThrottledLog.more(unlogged));
        }
    }
}
