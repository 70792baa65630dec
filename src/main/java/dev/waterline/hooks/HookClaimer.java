package dev.waterline.hooks;

import java.util.List;
import java.util.Set;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.DoubleSupplier;

/**
 * The claim step of the hook workers: each of {@code workers} claim loops owns a slice
 * ({@code id % workers}) of the deliveries and claims its due rows within the shares
 * ({@link HookShares}), handing each row claimed to the {@link HookCaller} at once.
 *
 * <p>Loop (one step, {@link #step}). While the group commit is behind (its queue past
 * {@code yield-above}) claim nothing, wait {@code poll-interval}: deliveries wait in the table,
 * sends do not. The first loop claims the probes of breakers whose cooldown ended. Then ask the
 * shares for a plan (how many more calls each hook, and each user's hooks, may have here; hooks
 * whose breaker is not closed left out), claim at most that many due rows of the slice
 * ({@code FOR UPDATE SKIP LOCKED}, marked claimed with this node's claimant id and a deadline,
 * committed) and start a call for each at once; a row the shares answer to give back (taken past a
 * cap by claims planned at once) is released unmade, no attempt counted. Claim again at once when
 * the claim took all it could or one hook's backlog filled its scan; otherwise wait
 * {@code poll-interval}, woken sooner by a commit on this node that enqueued rows of the slice
 * ({@link #wake}) and, when rows the claim looked at were cut by a quota, by the next call to end
 * ({@link #callEnded}: one such loop per call, in turn), so a backlog drains as fast as its calls
 * end, not a quota per poll. A loop with no room at all waits for any call to end.
 *
 * <p>Errors: a claim that throws has its plan's reservation given back (whatever rows it did get
 * are started first) and the exception goes to the loop runner, which counts it in
 * {@code waterline_loop_errors_total{loop="hook_claim"}} and pauses. Stopping: the owner lowers the
 * loops' running condition and {@link #wakeAll wakes} them. Invariant H6 (nothing claimed waits for
 * a permit: a hook at its limit is left out of the claim).
 */
final class HookClaimer {

    static final String CLAIM_LOOP = "hook_claim";
    /** Most probes the first loop claims in one step. */
    private static final int PROBES = 8;

    private final HookProperties properties;
    private final DeliveryQueueRepository queue;
    private final HookShares shares;
    private final HookCaller caller;
    private final HookRecorder recorder;
    private final HookMetrics metrics;
    /** The group commit's queue pressure (its fullest writer's share, 0 to 1). */
    private final DoubleSupplier pressure;
    private final Semaphore[] wake;
    /** Loops whose last claim left due rows over a quota: the next call to end wakes one, as new rows of its slice do. */
    private final AtomicBoolean[] waitingForRoom;
    private final AtomicInteger nextForRoom = new AtomicInteger();
    /** Released when a call ends: a loop with no room at all waits on it. */
    private final Semaphore room = new Semaphore(0);

    HookClaimer(HookProperties properties, DeliveryQueueRepository queue, HookShares shares, HookCaller caller, HookRecorder recorder,
                HookMetrics metrics, DoubleSupplier pressure) {
        this.properties = properties;
        this.queue = queue;
        this.shares = shares;
        this.caller = caller;
        this.recorder = recorder;
        this.metrics = metrics;
        this.pressure = pressure;
        this.wake = new Semaphore[properties.workers()];
        this.waitingForRoom = new AtomicBoolean[properties.workers()];
        for (int i = 0; i < wake.length; i++) {
            wake[i] = new Semaphore(0);
            waitingForRoom[i] = new AtomicBoolean();
        }
    }

    int slices() {
        return wake.length;
    }

    /** Wakes the loops whose slices got these delivery ids. */
    void wake(List<Long> ids) {
        for (long id : ids) {
            Semaphore s = wake[(int) Math.floorMod(id, (long) wake.length)];
            if (s.availablePermits() == 0) {
                s.release();
            }
        }
    }

    /** Wakes every loop (to stop). */
    void wakeAll() {
        for (Semaphore s : wake) {
            s.release();
        }
        room.release();
    }

    /** A call ended: a loop with no room, and one loop waiting for room for rows it had to leave (in turn), may claim. */
    void callEnded() {
        if (room.availablePermits() == 0) {
            room.release();
        }
        int from = nextForRoom.getAndIncrement();
        for (int k = 0; k < wake.length; k++) {
            int i = Math.floorMod(from + k, wake.length);
            if (waitingForRoom[i].compareAndSet(true, false)) {
                wake[i].release();
                break;
            }
        }
    }

    void step(int slice) throws InterruptedException {
        if (pressure.getAsDouble() > properties.yieldAbove()) {
            // the group commit is behind: sends first, deliveries wait (they are in the table)
            metrics.yielded();
            Thread.sleep(properties.pollInterval().toMillis());
            return;
        }
        if (slice == 0) {
            claimProbes();
        }
        HookShares.Plan plan = shares.plan(Set.copyOf(recorder.notClosed()), properties.batchSize(), System.nanoTime());
        if (!plan.claimable()) {
            // every call this node may make is out (or only the slow share has room, and it is full)
            start(plan, List.of());
            room.tryAcquire(properties.pollInterval().toMillis(), TimeUnit.MILLISECONDS);
            return;
        }
        DeliveryQueueRepository.Claims got = null;
        int givenBack;
        try {
            got = queue.claim(recorder.claimant(), properties.claimTimeout(), wake.length, slice, plan);
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

    private void claimProbes() {
        HookShares.Plan probes = shares.probes(PROBES, System.nanoTime());
        if (probes.total() > 0) {
            List<DeliveryQueueRepository.Claimed> got = List.of();
            try {
                got = queue.claimProbes(recorder.claimant(), properties.claimTimeout(), probes.total());
            }
            finally {
                start(probes, got);
            }
            got.forEach(p -> metrics.probe());
        }
    }

    /**
     * Ends {@code plan}'s reservation with the rows it claimed, starts their calls, and releases
     * unmade the rows the shares answer to give back; returns how many were given back.
     */
    private int start(HookShares.Plan plan, List<DeliveryQueueRepository.Claimed> claimed) {
        List<HookShares.Call> started = shares.settle(plan,
                claimed.stream().map(c -> new HookShares.Taken(c.hookId(), c.userId(), c.probe())).toList(), System.nanoTime());
        int givenBack = 0;
        for (int i = 0; i < claimed.size(); i++) {
            DeliveryQueueRepository.Claimed c = claimed.get(i);
            HookShares.Call call = started.get(i);
            if (call == null) {
                // taken past a cap by claims planned at once: back as it was, due now, its attempt not counted
                recorder.release(c);
                givenBack++;
                continue;
            }
            caller.start(c, call);
        }
        if (givenBack > 0) {
            metrics.givenBack(givenBack);
        }
        return givenBack;
    }
}
