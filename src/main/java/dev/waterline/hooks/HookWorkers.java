package dev.waterline.hooks;

import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import com.github.f4b6a3.ulid.UlidCreator;
import dev.waterline.ingest.Ingest;
import dev.waterline.lifecycle.Loops;
import dev.waterline.lifecycle.Workers;
import dev.waterline.presence.Presence;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.context.SmartLifecycle;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.stereotype.Component;

/**
 * The hook workers of this node: claim, call, record, as three steps with no transaction open
 * during the call (PROTOCOL.md §7, docs/ARCHITECTURE.md "Hooks").
 *
 * <p>Loops. Each of {@code workers} claim loops owns a slice ({@code id % workers}): it asks
 * {@link HookShares} for a plan (how many more calls each hook, and each user's hooks, may have
 * here), claims at most that many due deliveries of its slice ({@code FOR UPDATE SKIP LOCKED},
 * marked claimed with this node's claimant id and a deadline, committed), and starts a call on a
 * virtual thread for each at once (a row the shares answer to give back, taken past a cap by claims
 * planned at once, is released unmade: no attempt counted). Then it claims again at once when the
 * claim took all it could or one hook's backlog filled its scan; otherwise it waits
 * {@code poll-interval}, woken sooner by a commit on this node that enqueued rows of its slice
 * and, when rows it looked at were cut by a quota, by the next call to end (one such loop per
 * call, in turn), so a backlog drains as fast as its calls end, not a quota per poll. The first
 * loop also claims the probes of breakers whose cooldown ended.
 * While the group commit is behind (its queue past {@code yield-above}) no loop claims: deliveries
 * wait in the table, sends do not. The record loop gathers outcomes and records them in batches
 * ({@link DeliveryQueue#record}).
 *
 * <p>Fair shares (H6, {@link HookShares}). Nothing claimed waits for a permit: a hook (or the
 * node) at its limit is left out of the claim, so its backlog waits in the table, not in this
 * node's memory behind a slow call. A hook's limit adapts: one call at first, then 2, one more with
 * each call that ends within {@code slow-call} (doubling with each round of calls), up to
 * {@code per-hook-concurrency}; a call slower than that, or still out past it, sends the hook back
 * to the slow ones. Hooks judged slow or not judged yet share at most {@code slow-share} of
 * {@code max-in-flight}, fast hooks the rest, each hook an equal part of its pool, and one user's
 * hooks together at most {@code user-share}: one user's slow targets, or targets that turn slow,
 * delay their own deliveries, nobody else's. Why limits on claims rather than permits on calls,
 * and what it costs (the claim carries per-hook and per-user quotas), is in docs/ARCHITECTURE.md,
 * "Hooks".
 *
 * <p>Errors. A claim that fails is counted in {@code waterline_loop_errors_total{loop="hook_claim"}}
 * and retried after the loops' pause; its plan's reservation is given back. A sink never throws (one
 * that does is counted, and the attempt is a retry). A batch of outcomes that cannot be recorded
 * after three tries is given up (counted): those rows stay claimed, their claims expire after
 * {@code claim-timeout} and they are sent again, which at-least-once allows and the idempotency key
 * lets receivers drop.
 *
 * <p>Stopping. The claim loops stop first; calls in flight get {@code call-timeout} to end; the
 * record loop records what they answered, then stops. Whatever is still claimed returns after
 * {@code claim-timeout}. Invariants: H3 (no transaction open during a call), H4 (a claim never
 * lost: recorded, or returned by the maintenance pass), H5 (one probe per cooldown), H6 (a slow
 * target slows nobody else's calls).
 */
@Component
class HookWorkers implements SmartLifecycle {

    private static final Log log = LogFactory.getLog(HookWorkers.class);
    static final String CLAIM_LOOP = "hook_claim";
    static final String RECORD_LOOP = "hook_record";
    static final String MAINTENANCE_LOOP = "hook_maintenance";

    private final HookProperties properties;
    private final DeliveryQueue queue;
    private final Sinks sinks;
    private final HookMetrics metrics;
    private final Loops loops;
    private final Clock clock;
    private final OfflineChats offlineChats;
    /** The group commit, for its queue pressure: a provider, since ingest's own participants lead back here. */
    private final ObjectProvider<Ingest> ingestProvider;
    private Ingest ingest;
    private final String claimant;
    private final Semaphore[] wake;
    /** Loops whose last claim left due rows over a quota: the next call to end wakes one, as new rows of its slice do. */
    private final AtomicBoolean[] waitingForRoom;
    private final AtomicInteger nextForRoom = new AtomicInteger();
    /** Released when a call ends: a loop with no room at all waits on it. */
    private final Semaphore room = new Semaphore(0);
    /** Each hook's share of this node's calls, and the calls out. */
    private final HookShares shares;
    /** Hooks whose breaker this node last saw not closed: its claims leave them out. */
    private final Set<String> notClosed = ConcurrentHashMap.newKeySet();
    /** Hooks whose rows are being brought in line with their breaker, chunk by chunk; true: asked again meanwhile. */
    private final Map<String, Boolean> sorting = new ConcurrentHashMap<>();
    /**
     * Hooks deleted on this node within {@code claim-timeout} (when, in nanoseconds): a call of one
     * that ends after the deletion (claimed just before it) lets the sinks forget the hook again, so
     * no connection it opened outlives it.
     */
    private final Map<String, Long> deleted = new ConcurrentHashMap<>();
    private final LinkedBlockingQueue<DeliveryQueue.Recorded> outcomes = new LinkedBlockingQueue<>();
    private final List<Thread> threads = new ArrayList<>();
    private Thread recorder;
    private List<Thread> previous = List.of();
    private ExecutorService calls;
    private volatile boolean running;
    private volatile boolean recording;
    /** Which start this is: a loop of an earlier run that outlived its stop never runs again. */
    private volatile int generation;

    HookWorkers(HookProperties properties, DeliveryQueue queue, Sinks sinks, HookMetrics metrics, Loops loops, Clock clock,
                Presence presence, OfflineChats offlineChats, ObjectProvider<Ingest> ingest) {
        this.ingestProvider = ingest;
        this.properties = properties;
        this.queue = queue;
        this.sinks = sinks;
        this.metrics = metrics;
        this.loops = loops;
        this.clock = clock;
        this.offlineChats = offlineChats;
        this.claimant = presence.nodeId() + "/" + UlidCreator.getMonotonicUlid();
        this.shares = new HookShares(HookShares.Limits.of(properties));
        this.wake = new Semaphore[properties.workers()];
        this.waitingForRoom = new AtomicBoolean[properties.workers()];
        for (int i = 0; i < wake.length; i++) {
            wake[i] = new Semaphore(0);
            waitingForRoom[i] = new AtomicBoolean();
        }
        loops.declare(MAINTENANCE_LOOP);
        metrics.inFlight();
    }

    /** After a commit on this node: wakes the workers whose slices got these delivery ids. */
    void wake(List<Long> ids) {
        if (!running) {
            return;
        }
        for (long id : ids) {
            Semaphore s = wake[(int) Math.floorMod(id, (long) wake.length)];
            if (s.availablePermits() == 0) {
                s.release();
            }
        }
    }

    private void claimStep(int slice) throws InterruptedException {
        if (ingest.pressure() > properties.yieldAbove()) {
            // the group commit is behind: sends first, deliveries wait (they are in the table)
            metrics.yielded();
            Thread.sleep(properties.pollInterval().toMillis());
            return;
        }
        if (slice == 0) {
            HookShares.Plan probes = shares.probes(8, System.nanoTime());
            if (probes.total() > 0) {
                List<DeliveryQueue.Claimed> got = List.of();
                try {
                    got = queue.claimProbes(claimant, properties.claimTimeout(), probes.total());
                }
                finally {
                    start(probes, got);
                }
                got.forEach(p -> metrics.probe());
            }
        }
        HookShares.Plan plan = shares.plan(Set.copyOf(notClosed), properties.batchSize(), System.nanoTime());
        if (!plan.claimable()) {
            // every call this node may make is out (or only the slow share has room, and it is full)
            start(plan, List.of());
            room.tryAcquire(properties.pollInterval().toMillis(), TimeUnit.MILLISECONDS);
            return;
        }
        DeliveryQueue.Claims got = null;
        int givenBack = 0;
        try {
            got = queue.claim(claimant, properties.claimTimeout(), wake.length, slice, plan);
        }
        finally {
            givenBack = start(plan, got == null ? List.of() : got.rows());
        }
        int took = got.rows().size() - givenBack;
        if (took >= plan.total() || got.scanFull()) {
            return;   // more may be due: claim again at once
        }
        // rows due but over a quota can go once a call ends: that wakes this loop too, not only new rows
        waitingForRoom[slice].set(got.cut() > 0 || givenBack > 0);
        wake[slice].tryAcquire(properties.pollInterval().toMillis(), TimeUnit.MILLISECONDS);
        waitingForRoom[slice].set(false);
        wake[slice].drainPermits();
    }

    /**
     * Ends {@code plan}'s reservation with the rows it claimed, starts their calls, and releases
     * unmade the rows the shares answer to give back; returns how many were given back.
     */
    private int start(HookShares.Plan plan, List<DeliveryQueue.Claimed> claimed) {
        List<HookShares.Call> started = shares.settle(plan,
                claimed.stream().map(c -> new HookShares.Taken(c.hookId(), c.userId(), c.probe())).toList(), System.nanoTime());
        int givenBack = 0;
        for (int i = 0; i < claimed.size(); i++) {
            DeliveryQueue.Claimed c = claimed.get(i);
            HookShares.Call call = started.get(i);
            if (call == null) {
                // taken past a cap by claims planned at once: back as it was, due now, its attempt not counted
                outcomes.add(new DeliveryQueue.Recorded(c, DeliveryQueue.Verdict.RELEASE, clock.instant(), null, null));
                givenBack++;
                continue;
            }
            metrics.inFlight().incrementAndGet();
            try {
                calls.execute(() -> call(c, call));
            }
            catch (RuntimeException rejected) {
                // the executor is shutting down: the claim expires and another worker sends it
                finished(call, false);
                loops.failed(CLAIM_LOOP, "a claimed hook delivery could not be started (stopping)", rejected);
            }
        }
        if (givenBack > 0) {
            metrics.givenBack(givenBack);
        }
        return givenBack;
    }

    private void call(DeliveryQueue.Claimed c, HookShares.Call started) {
        boolean judged = true;
        try {
            Sink sink = sinks.of(c.kind());
            Sink.Outcome outcome = sink == null ? new Sink.Outcome.Permanent("no sink for the kind " + c.kind())
                    : sink.deliver(new Sink.Call(c.hookId(), c.id(), c.target(), c.secret(), c.idempotencyKey(), c.attempt(),
                            c.chatId(), c.payload()));
            // a call not made, or cut short by shutdown, says nothing about how fast the target is
            judged = !(outcome instanceof Sink.Outcome.NotMade) && (running || !(outcome instanceof Sink.Outcome.Retry));
            if (!running && outcome instanceof Sink.Outcome.Retry) {
                // cut short by shutdown: says nothing about the target, and costs the delivery no attempt
                outcomes.add(new DeliveryQueue.Recorded(c, DeliveryQueue.Verdict.RELEASE, clock.instant(), null, null));
            }
            else {
                outcomes.add(recorded(c, outcome));
            }
        }
        catch (RuntimeException | Error e) {
            // a sink must not throw; if one does, the attempt is a retry like any failure
            loops.failed(CLAIM_LOOP, "a hook sink threw instead of answering an outcome", e);
            outcomes.add(recorded(c, Sink.Outcome.retry(Sink.Outcome.describe(e))));
        }
        finally {
            finished(started, judged);
            if (deleted.containsKey(c.hookId())) {
                loops.pass(MAINTENANCE_LOOP, () -> sinks.forget(c.hookId()));
            }
        }
    }

    /** A call ended; {@code judged}: its time says how fast its hook's target is. */
    private void finished(HookShares.Call call, boolean judged) {
        shares.finished(call, judged, System.nanoTime());
        metrics.inFlight().decrementAndGet();
        if (room.availablePermits() == 0) {
            room.release();
        }
        // and one loop waiting for room for rows it had to leave, in turn
        int from = nextForRoom.getAndIncrement();
        for (int k = 0; k < wake.length; k++) {
            int i = Math.floorMod(from + k, wake.length);
            if (waitingForRoom[i].compareAndSet(true, false)) {
                wake[i].release();
                break;
            }
        }
    }

    /** An outcome as it will be recorded: done, retried (when), dead (why), or given back (a call not made). */
    DeliveryQueue.Recorded recorded(DeliveryQueue.Claimed c, Sink.Outcome outcome) {
        String error;
        switch (outcome) {
            case Sink.Outcome.Done d -> {
                metrics.attempt(c.kind(), "ok");
                return new DeliveryQueue.Recorded(c, DeliveryQueue.Verdict.DONE, null, null, true);
            }
            case Sink.Outcome.Permanent p -> {
                metrics.attempt(c.kind(), "dead");
                return new DeliveryQueue.Recorded(c, DeliveryQueue.Verdict.DEAD, null, clip(p.error()), true);
            }
            case Sink.Outcome.NotMade n -> {
                // no room on this node (a bound of the sink's, counted there), which a call ends within
                // call-timeout: says nothing about the target, so its last error stays the target's
                Duration soon = Backoff.delay(1, null, properties.callTimeout(), properties.backoffMax());
                return new DeliveryQueue.Recorded(c, DeliveryQueue.Verdict.RELEASE, clock.instant().plus(soon), null, null);
            }
            case Sink.Outcome.Retry r -> {
                error = r.error();
                if (c.attempt() >= properties.maxAttempts()) {
                    metrics.attempt(c.kind(), "dead");
                    return new DeliveryQueue.Recorded(c, DeliveryQueue.Verdict.DEAD, null,
                            clip("gave up after " + c.attempt() + " attempts; the last: " + error), false);
                }
                metrics.attempt(c.kind(), "retry");
                Duration delay = Backoff.delay(c.attempt(), r.retryAfter(), properties.backoffBase(), properties.backoffMax());
                return new DeliveryQueue.Recorded(c, DeliveryQueue.Verdict.RETRY, clock.instant().plus(delay), clip(error), false);
            }
        }
    }

    private static String clip(String error) {
        return error == null ? null : error.length() <= 500 ? error : error.substring(0, 500);
    }

    private void recordStep() throws InterruptedException {
        DeliveryQueue.Recorded first = outcomes.poll(100, TimeUnit.MILLISECONDS);
        if (first == null) {
            return;
        }
        List<DeliveryQueue.Recorded> batch = new ArrayList<>(256);
        batch.add(first);
        outcomes.drainTo(batch, 255);
        for (int attempt = 1; ; attempt++) {
            try {
                DeliveryQueue.Recording r = queue.record(claimant, batch, properties.breakerFailures(), properties.breakerCooldown());
                for (String h : r.opened()) {
                    metrics.opened();
                    notClosed.add(h);
                    sort(h);
                }
                for (String h : r.closed()) {
                    notClosed.remove(h);
                    sort(h);
                }
                long now = clock.millis();
                for (DeliveryQueue.Recorded x : batch) {
                    if (x.verdict() == DeliveryQueue.Verdict.DONE) {
                        metrics.delivered(now - x.claimed().createdAtMillis());
                    }
                }
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

    /**
     * Brings a hook's rows in line with its breaker after it opened or closed (held, or released),
     * chunk by chunk, each chunk a transaction of its own, on a virtual thread; one at a time per
     * hook, and once more if it was asked again meanwhile. It goes on until a chunk moves nothing
     * (a short chunk says nothing: rows claimed or done meanwhile are skipped). What a failure
     * leaves, the maintenance pass finds and sorts again.
     */
    void sort(String hookId) {
        if (sorting.putIfAbsent(hookId, false) != null) {
            sorting.put(hookId, true);
            return;
        }
        Thread.ofVirtual().name("hook-sort").start(() -> {
            try {
                do {
                    sorting.put(hookId, false);
                    while (queue.alignChunk(hookId) > 0) {
                        // next chunk
                    }
                } while (Boolean.TRUE.equals(sorting.get(hookId)));
            }
            catch (RuntimeException e) {
                loops.failed(MAINTENANCE_LOOP, "bringing a hook's deliveries in line with its breaker", e);
            }
            finally {
                sorting.remove(hookId);
            }
        });
    }

    /**
     * After a hook's deletion (or when the maintenance pass finds its leftovers): the sinks let go
     * of connections only it used, and what it left behind is deleted, chunk by chunk on a virtual
     * thread.
     */
    void purge(String hookId) {
        deleted.put(hookId, System.nanoTime());
        loops.pass(MAINTENANCE_LOOP, () -> sinks.forget(hookId));
        Thread.ofVirtual().name("hook-purge").start(() -> loops.pass(MAINTENANCE_LOOP, () -> {
            while (queue.purgeChunk(hookId) > 0) {
                // next chunk, until one finds nothing (a short chunk says nothing: rows done meanwhile)
            }
        }));
    }

    /**
     * Expired claims and probes back, rows of breakers that changed sorted, the breakers not closed
     * read again, the gauges read, the offline chats refreshed, hooks idle here long forgotten by
     * the shares, idle target connections closed. Runs on every node, workers or not
     * (its statements run on one node at a time).
     */
    @Scheduled(fixedDelayString = "${waterline.hooks.maintenance-interval:5s}", initialDelayString = "${waterline.hooks.maintenance-interval:5s}")
    void maintain() {
        // each part on its own: one that fails leaves the others to do their share
        loops.pass(MAINTENANCE_LOOP, () -> {
            Set<String> now = new HashSet<>(queue.notClosed());
            notClosed.retainAll(now);
            notClosed.addAll(now);
        });
        loops.pass(MAINTENANCE_LOOP, () -> {
            DeliveryQueue.Maintained m = queue.maintain();
            if (m != null) {
                if (m.expiredClaims() > 0) {
                    metrics.expired(m.expiredClaims());
                    log.warn(m.expiredClaims() + " hook deliveries claimed past waterline.hooks.claim-timeout went back to pending");
                }
                m.toSort().forEach(this::sort);
                queue.orphans().forEach(this::purge);
            }
        });
        loops.pass(MAINTENANCE_LOOP, offlineChats::refresh);
        loops.pass(MAINTENANCE_LOOP, () -> {
            long[] b = queue.backlog();
            metrics.backlog(b[0], b[1], b[2]);
        });
        loops.pass(MAINTENANCE_LOOP, () -> {
            long now = System.nanoTime();
            deleted.values().removeIf(at -> now - at > properties.claimTimeout().toNanos());
            shares.forgetIdle(now);
            metrics.slowInFlight(shares.load(now).slowCalls());
        });
        loops.pass(MAINTENANCE_LOOP, sinks::closeIdle);
    }

    @Override
    public void start() {
        ingest = ingestProvider.getObject();
        queue.checkIsolation();
        offlineChats.refresh();
        notClosed.clear();
        notClosed.addAll(queue.notClosed());
        // a context stopped and started again: a loop of the last run still inside a transaction
        // must end before new loops take its slice
        Workers.joinUntil(previous, System.nanoTime() + TimeUnit.SECONDS.toNanos(35));
        if (!properties.enabled()) {
            log.info("waterline.hooks.enabled=false: this node delivers no hook (others may)");
            return;
        }
        int run = ++generation;
        running = true;
        recording = true;
        calls = Executors.newThreadPerTaskExecutor(Thread.ofVirtual().name("hook-call-", 0).factory());
        recorder = loops.start(RECORD_LOOP, "hook-record", () -> run == generation && (recording || !outcomes.isEmpty()),
                this::recordStep);
        for (int i = 0; i < wake.length; i++) {
            int slice = i;
            threads.add(loops.start(CLAIM_LOOP, "hook-claim-" + i, () -> running && run == generation, () -> claimStep(slice)));
        }
    }

    @Override
    public void stop() {
        if (!running) {
            return;
        }
        running = false;
        for (Semaphore s : wake) {
            s.release();
        }
        room.release();
        Workers.joinUntil(threads, System.nanoTime() + properties.pollInterval().plusSeconds(12).toNanos());
        calls.shutdown();
        try {
            if (!calls.awaitTermination(properties.callTimeout().toMillis() + 1_000, TimeUnit.MILLISECONDS)) {
                log.warn("hook calls still out at shutdown after waterline.hooks.call-timeout; their claims expire and are sent again");
                calls.shutdownNow();
            }
        }
        catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        recording = false;
        Workers.joinUntil(List.of(recorder), System.nanoTime() + TimeUnit.SECONDS.toNanos(35));
        List<Thread> all = new ArrayList<>(threads);
        all.add(recorder);
        previous = all;
        threads.clear();
    }

    @Override
    public boolean isRunning() {
        return running;
    }
}
