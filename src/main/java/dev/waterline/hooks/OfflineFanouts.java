package dev.waterline.hooks;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.locks.LockSupport;

import dev.waterline.lifecycle.Loops;
import dev.waterline.lifecycle.Workers;
import dev.waterline.metrics.WaterlineMetrics;
import io.micrometer.core.instrument.Counter;
import org.springframework.context.SmartLifecycle;
import org.springframework.stereotype.Component;

/**
 * The offline event's fan-out: each row of {@code hook_offline_fanouts} (one per offline hook and
 * message, inserted by the message's group commit, {@link HookParticipant}) becomes one delivery per
 * recipient it names, in a transaction of its own, off the message path.
 *
 * <p>Loop (one per node): find the oldest fan-out of each of the next {@link #SENDERS_PER_PASS}
 * senders with one waiting, after the last sender the previous pass served and round to the start
 * (a skip over the {@code (sender_id, id)} index, one probe a sender); then, for each, in its own
 * transaction: lock it ({@code SKIP LOCKED}: another node may have it), insert its deliveries (held
 * when the hook's breaker is not closed, nothing when the hook is gone, none twice: the idempotency
 * key), delete it; wake the workers whose slices got rows. A pass that expanded anything runs again
 * at once; one that expanded nothing (nothing waiting, or all of it held by another node) waits
 * for a wake (a commit that fanned out) or a second. Senders are served in turn, a fan-out each a
 * pass, wherever their ids sort, so one sender's flood of offline nudges waits behind itself, never
 * in front of another sender's: the fan-out's work is counted against the sender whose messages
 * made it.
 *
 * <p>Errors: a fan-out that fails is counted ({@code waterline_loop_errors_total{loop="hook_fanout"}})
 * and logged (throttled), and the pass goes on with the next sender; its row stays for the next
 * pass (a row that fails every time holds up its own sender only); a fan-out row is deleted only in
 * the transaction that inserted its deliveries, so none is lost and none is done twice (H1). Stops
 * with the context; what is left waits in the table for any node. The hook's row is read
 * {@code FOR KEY SHARE}, so a deletion of the hook (which purges its deliveries after it commits)
 * waits for a fan-out in progress, and a fan-out after it finds no hook (H2). The statements are
 * {@link OfflineFanoutRepository}'s.
 */
@Component
class OfflineFanouts implements SmartLifecycle {

    static final String LOOP = "hook_fanout";
    static final int SENDERS_PER_PASS = 32;

    private final OfflineFanoutRepository store;
    private final HookWorkers workers;
    private final HookMetrics hookMetrics;
    private final Loops loops;
    private final Counter expanded;
    private final Counter done;
    /** The last sender a pass served: the next pass starts after it. */
    private String cursor = "";
    private static final long BACKLOG_EVERY_NANOS = Duration.ofSeconds(5).toNanos();
    private long backlogReadAt;
    private volatile long backlog;
    private volatile long oldestSeconds;
    private volatile boolean running;
    private volatile boolean wanted;
    private volatile Thread thread;

    OfflineFanouts(OfflineFanoutRepository store, HookWorkers workers, HookMetrics hookMetrics, Loops loops, WaterlineMetrics metrics) {
        this.store = store;
        this.workers = workers;
        this.hookMetrics = hookMetrics;
        this.loops = loops;
        this.expanded = metrics.counter("waterline.hook.offline.fanned.out",
                "offline deliveries written by the fan-out (one per hook and recipient without a live session)");
        this.done = metrics.counter("waterline.hook.offline.fanouts.done", "offline fan-outs expanded (one per offline hook and message)");
        metrics.gauge("waterline.hook.offline.fanouts", "offline fan-outs waiting (one per offline hook and message)", () -> backlog);
        metrics.gauge("waterline.hook.offline.fanout.oldest.age.seconds", "age of the oldest offline fan-out waiting",
                () -> oldestSeconds);
    }

    /** A commit wrote fan-outs: a pass soon. */
    void wake() {
        wanted = true;
        Thread t = thread;
        if (t != null) {
            LockSupport.unpark(t);
        }
    }

    /**
     * One pass: the next {@link #SENDERS_PER_PASS} senders' oldest fan-outs, each expanded in its own
     * transaction; returns how many it expanded (a fan-out another node held is not counted).
     * Synchronized: the loop and a test may run passes at once; two nodes' passes meet in the
     * database (SKIP LOCKED) instead.
     */
    synchronized int pass() {
        List<OfflineFanoutRepository.Next> next = new java.util.ArrayList<>(store.oldestPerSender(cursor, SENDERS_PER_PASS));
        if (next.size() < SENDERS_PER_PASS && !cursor.isEmpty()) {
            // round to the start: the senders up to the cursor, but for those already found
            java.util.Set<String> found = new java.util.HashSet<>();
            next.forEach(n -> found.add(n.sender()));
            for (OfflineFanoutRepository.Next n : store.oldestPerSender("", SENDERS_PER_PASS - next.size())) {
                if (found.add(n.sender())) {
                    next.add(n);
                }
            }
        }
        int expandedNow = 0;
        for (OfflineFanoutRepository.Next n : next) {
            cursor = n.sender();
            try {
                OfflineFanoutRepository.Expanded e = store.expand(n.id());
                if (e.gone() > 0) {
                    expandedNow++;
                    done.increment();
                }
                if (!e.deliveries().isEmpty()) {
                    expanded.increment(e.deliveries().size());
                    hookMetrics.enqueued(e.deliveries().size());
                    workers.wake(e.deliveries());
                }
            }
            catch (RuntimeException failed) {
                loops.failed(LOOP, "an offline fan-out could not be expanded (it stays for the next pass)", failed);
            }
        }
        if (next.isEmpty() || System.nanoTime() - backlogReadAt > BACKLOG_EVERY_NANOS) {
            backlogReadAt = System.nanoTime();
            OfflineFanoutRepository.Backlog b = store.backlog();
            backlog = b.rows();
            oldestSeconds = b.oldestSeconds();
        }
        return expandedNow;
    }

    @Override
    public void start() {
        running = true;
        thread = loops.start(LOOP, "hook-fanout", () -> running, () -> {
            if (!wanted) {
                LockSupport.parkNanos(Duration.ofSeconds(1).toNanos());
            }
            wanted = false;
            if (running && pass() > 0) {
                wanted = true;
            }
        });
    }

    @Override
    public void stop() {
        running = false;
        Thread t = thread;
        if (t != null) {
            LockSupport.unpark(t);
            Workers.stop(t, Duration.ofSeconds(12));
        }
    }

    @Override
    public boolean isRunning() {
        return running;
    }

}
