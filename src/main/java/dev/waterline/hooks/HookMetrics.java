package dev.waterline.hooks;

import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

import dev.waterline.metrics.WaterlineMetrics;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Timer;
import org.springframework.stereotype.Component;

/**
 * The series of hooks (PROTOCOL.md §5: {@code waterline_hook_deliveries_total{kind,outcome}},
 * {@code waterline_hook_backlog}, {@code waterline_hook_oldest_age_seconds}, and more), registered
 * at start so that zeros show. No label carries a hook, chat or user id.
 */
@Component
class HookMetrics {

    static final String[] KINDS = {"http", "amqp", "mqtt", "nats", "kafka", "redis"};

    private final Map<String, Counter> attempts = new HashMap<>();
    private final Counter enqueued;
    private final Counter replayed;
    private final Counter expired;
    private final Counter opened;
    private final Counter probes;
    private final Counter presenceUnknown;
    private final Counter recordsLost;
    private final Counter yielded;
    private final Counter givenBack;
    private final Counter deadExpired;
    private final Timer delivery;
    private final AtomicLong backlog = new AtomicLong();
    private final AtomicLong oldestAge = new AtomicLong();
    private final AtomicLong dead = new AtomicLong();
    private final AtomicLong inFlight = new AtomicLong();
    private final AtomicLong slowInFlight = new AtomicLong();

    HookMetrics(WaterlineMetrics metrics) {
        for (String kind : KINDS) {
            for (Verdict verdict : Verdict.values()) {
                if (verdict.label() != null) {
                    attempts.put(kind + "/" + verdict.label(), metrics.counter("waterline.hook.deliveries",
                            "hook attempts by result: ok (done), retry (to be tried again), dead (to the dead letters)",
                            "kind", kind, "outcome", verdict.label()));
                }
            }
        }
        enqueued = metrics.counter("waterline.hook.enqueued", "hook deliveries inserted with their messages");
        replayed = metrics.counter("waterline.hook.replayed", "dead letters put back to be delivered");
        expired = metrics.counter("waterline.hook.claims.expired",
                "claims returned to pending past waterline.hooks.claim-timeout (a node or worker that stopped)");
        opened = metrics.counter("waterline.hook.breaker.opened", "times a hook's circuit breaker opened");
        probes = metrics.counter("waterline.hook.breaker.probes", "half-open probes sent (one per cooldown, cluster-wide)");
        presenceUnknown = metrics.counter("waterline.hook.offline.presence.failed",
                "batches whose offline recipients were worked out without the cluster's presence (it failed)");
        recordsLost = metrics.counter("waterline.hook.outcomes.unrecorded",
                "attempt outcomes that could not be recorded (their claims expire and are sent again)");
        yielded = metrics.counter("waterline.hook.claims.yielded",
                "claim passes skipped because the group commit was behind (waterline.hooks.yield-above)");
        givenBack = metrics.counter("waterline.hook.claims.given.back",
                "claimed deliveries released unmade because claims planned at once took a hook or a user past its share");
        deadExpired = metrics.counter("waterline.hook.dead.expired",
                "dead letters deleted because they were older than waterline.hooks.dead-retention");
        delivery = metrics.latencyTimer("waterline.hook.delivery", "commit of the message → its hook delivery confirmed by the target");
        metrics.gauge("waterline.hook.backlog", "hook deliveries not yet done (pending, held or claimed; dead letters apart), counted up to 100,000", backlog::get);
        metrics.gauge("waterline.hook.oldest.age.seconds", "age of the oldest hook delivery not yet done", oldestAge::get);
        metrics.gauge("waterline.hook.dead", "hook deliveries in the dead letters, counted up to 100,000", dead::get);
        metrics.gauge("waterline.hook.in.flight", "hook deliveries this node holds claimed", inFlight::get);
        metrics.gauge("waterline.hook.in.flight.slow",
                "of those, calls of hooks judged slow or not judged yet (held to waterline.hooks.slow-share); read by the maintenance pass",
                slowInFlight::get);
    }

    /** An attempt made, by its verdict ({@link Verdict#RELEASE} is no attempt: not counted here). */
    void attempt(String kind, Verdict verdict) {
        Counter c = verdict.label() == null ? null : attempts.get(kind + "/" + verdict.label());
        if (c != null) {
            c.increment();
        }
    }

    void enqueued(int n) {
        enqueued.increment(n);
    }

    void replayed(int n) {
        replayed.increment(n);
    }

    void expired(int n) {
        expired.increment(n);
    }

    void opened() {
        opened.increment();
    }

    void probe() {
        probes.increment();
    }

    void presenceUnknown() {
        presenceUnknown.increment();
    }

    void unrecorded(int n) {
        recordsLost.increment(n);
    }

    void yielded() {
        yielded.increment();
    }

    void givenBack(int n) {
        givenBack.increment(n);
    }

    void deadExpired(int n) {
        deadExpired.increment(n);
    }

    void delivered(long millisSinceCreated) {
        delivery.record(java.time.Duration.ofMillis(Math.max(0, millisSinceCreated)));
    }

    void backlog(long rows, long oldestSeconds, long deadRows) {
        backlog.set(rows);
        oldestAge.set(oldestSeconds);
        dead.set(deadRows);
    }

    AtomicLong inFlight() {
        return inFlight;
    }

    void slowInFlight(long calls) {
        slowInFlight.set(calls);
    }
}
