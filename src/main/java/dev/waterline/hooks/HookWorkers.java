package dev.waterline.hooks;

import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

import com.github.f4b6a3.ulid.UlidCreator;
import dev.waterline.ingest.Ingest;
import dev.waterline.lifecycle.Loops;
import dev.waterline.lifecycle.Workers;
import dev.waterline.presence.Presence;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.context.SmartLifecycle;
import org.springframework.stereotype.Component;

/**
 * The hook workers of this node: claim, call, record, as three steps with no transaction open
 * during the call (PROTOCOL.md §7, docs/ARCHITECTURE.md "Hooks"), each a class of its own:
 * {@link HookClaimer} (the claim loops, within the fair shares of {@link HookShares}),
 * {@link HookCaller} (each call on a virtual thread, its outcome judged by {@link Verdicts}) and
 * {@link HookRecorder} (the record loop). This class wires them and runs their lifecycle, and
 * brings a hook's rows in line with its breaker ({@link #sort}) or deletes what a deleted hook left
 * ({@link #purge}); the periodic pass is {@link HookMaintenance}'s.
 *
 * <p>Starting: the isolation level checked, the breakers not closed read, then the record loop and
 * {@code workers} claim loops started (none when {@code waterline.hooks.enabled} is false).
 *
 * <p>Stopping. The claim loops stop first; calls in flight get {@code call-timeout} to end (one cut
 * short is released, its attempt not counted); the record loop records what they answered, then
 * stops, and what is left unrecorded is counted. Whatever is still claimed returns after
 * {@code claim-timeout}. A context stopped and started again waits for the loops of its last run.
 * Invariants: H3 (no transaction open during a call), H4 (a claim never lost: recorded, or counted
 * and returned by the maintenance pass), H5 (one probe per cooldown), H6 (a slow target slows
 * nobody else's calls).
 */
@Component
class HookWorkers implements SmartLifecycle {

    private static final Log log = LogFactory.getLog(HookWorkers.class);

    private final HookProperties properties;
    private final DeliveryQueueRepository queue;
    private final Sinks sinks;
    private final Loops loops;
    /** The group commit, for its queue pressure: a provider, since ingest's own participants lead back here. */
    private final ObjectProvider<Ingest> ingestProvider;
    private volatile Ingest ingest;
    /** Each hook's share of this node's calls, and the calls out. */
    private final HookShares shares;
    private final HookRecorder recorder;
    private final HookCaller caller;
    private final HookClaimer claimer;
    /** Hooks whose rows are being brought in line with their breaker, chunk by chunk; true: asked again meanwhile. */
    private final Map<String, Boolean> sorting = new ConcurrentHashMap<>();
    private final List<Thread> threads = new ArrayList<>();
    private Thread recordThread;
    private List<Thread> previous = List.of();
    private volatile boolean running;
    /** Which start this is: a loop of an earlier run that outlived its stop never runs again. */
    private volatile int generation;

    HookWorkers(HookProperties properties, DeliveryQueueRepository queue, Sinks sinks, HookMetrics metrics, Loops loops, Clock clock,
                Presence presence, ObjectProvider<Ingest> ingest) {
        this.ingestProvider = ingest;
        this.properties = properties;
        this.queue = queue;
        this.sinks = sinks;
        this.loops = loops;
        String claimant = presence.nodeId() + "/" + UlidCreator.getMonotonicUlid();
        this.shares = new HookShares(HookShares.Limits.of(properties));
        this.recorder = new HookRecorder(queue, properties, metrics, loops, clock, claimant, this::sort);
        // the claimer is made after the caller, which tells it of each call's end
        this.caller = new HookCaller(sinks, shares, recorder, metrics, loops, clock, Verdicts.Rules.of(properties), this::callEnded);
        this.claimer = new HookClaimer(properties, queue, shares, caller, recorder, metrics, () -> ingest().pressure());
        metrics.inFlight();
    }

    private Ingest ingest() {
        Ingest i = ingest;
        if (i == null) {
            i = ingestProvider.getObject();
            ingest = i;
        }
        return i;
    }

    private void callEnded() {
        claimer.callEnded();
    }

    /** After a commit on this node: wakes the workers whose slices got these delivery ids. */
    void wake(List<Long> ids) {
        if (running) {
            claimer.wake(ids);
        }
    }

    /** What the database says now about breakers not closed. */
    void breakersNotClosed(List<String> now) {
        recorder.breakersNotClosed(now);
    }

    /** Forgets what is idle: hooks deleted longer than {@code claim-timeout} ago, hooks with no calls here for long; answers the slow calls out. */
    long forgetIdle() {
        long now = System.nanoTime();
        caller.forgetDeletedBefore(now, properties.claimTimeout());
        shares.forgetIdle(now);
        return shares.load(now).slowCalls();
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
                loops.failed(HookMaintenance.MAINTENANCE_LOOP, "bringing a hook's deliveries in line with its breaker", e);
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
        caller.deleted(hookId);
        loops.pass(HookMaintenance.MAINTENANCE_LOOP, () -> sinks.forget(hookId));
        Thread.ofVirtual().name("hook-purge").start(() -> loops.pass(HookMaintenance.MAINTENANCE_LOOP, () -> {
            while (queue.purgeChunk(hookId) > 0) {
                // next chunk, until one finds nothing (a short chunk says nothing: rows done meanwhile)
            }
        }));
    }

    @Override
    public void start() {
        ingest = ingestProvider.getObject();
        queue.checkIsolation();
        recorder.breakersNotClosed(queue.notClosed());
        // a context stopped and started again: a loop of the last run still inside a transaction
        // must end before new loops take its slice
        Workers.joinUntil(previous, System.nanoTime() + TimeUnit.SECONDS.toNanos(35));
        if (!properties.enabled()) {
            log.info("waterline.hooks.enabled=false: this node delivers no hook (others may)");
            return;
        }
        int run = ++generation;
        running = true;
        caller.open();
        recordThread = recorder.start(() -> run == generation);
        for (int i = 0; i < claimer.slices(); i++) {
            int slice = i;
            threads.add(loops.start(HookClaimer.CLAIM_LOOP, "hook-claim-" + i, () -> running && run == generation,
                    () -> claimer.step(slice)));
        }
    }

    @Override
    public void stop() {
        if (!running) {
            return;
        }
        running = false;
        caller.stopping();
        claimer.wakeAll();
        Workers.joinUntil(threads, System.nanoTime() + properties.pollInterval().plusSeconds(12).toNanos());
        caller.stop(properties.callTimeout());
        recorder.stopAccepting();
        Workers.joinUntil(List.of(recordThread), System.nanoTime() + TimeUnit.SECONDS.toNanos(35));
        if (!recordThread.isAlive()) {
            recorder.drop();
        }
        List<Thread> all = new ArrayList<>(threads);
        all.add(recordThread);
        previous = all;
        threads.clear();
    }

    @Override
    public boolean isRunning() {
        return running;
    }
}
