package dev.waterline.hooks;

import java.time.Duration;

import dev.waterline.lifecycle.Loops;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.context.SmartLifecycle;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.stereotype.Component;

/**
 * The hooks' maintenance pass, every {@code maintenance-interval} on every node, workers or not:
 * the breakers not closed read again; expired claims and probes back, rows of breakers that
 * changed sorted, a deleted hook's leftovers found (a bounded walk, {@link DeliveryQueueRepository#orphans})
 * and purged (these on one node at a time, under the maintenance lock); the offline chats
 * refreshed; the gauges read (capped probes, {@link DeliveryQueueRepository#backlog}); hooks idle here long
 * forgotten by the shares; idle target connections closed; and dead letters older than
 * {@code dead-retention} deleted, at most {@value #DEAD_CHUNKS} chunks of
 * {@link DeliveryQueueRepository#CHUNK} rows a pass ({@code SKIP LOCKED}: nodes doing it at once take
 * different rows), counted in {@code waterline.hook.dead.expired}.
 *
 * <p>Errors: each part runs on its own ({@link Loops#pass}): one that fails is counted in
 * {@code waterline_loop_errors_total{loop="hook_maintenance"}} and logged (throttled), and leaves
 * the others to do their share; what it did not do, the next pass does. It stops with the
 * scheduler. At start (before the workers' first claim can matter) the offline chats are read.
 */
@Component
class HookMaintenance implements SmartLifecycle {

    private static final Log log = LogFactory.getLog(HookMaintenance.class);
    static final String MAINTENANCE_LOOP = "hook_maintenance";
    /** Most chunks of dead letters one pass deletes: an old backlog of them goes over several passes. */
    static final int DEAD_CHUNKS = 10;
    /** Most hooks with deliveries one pass looks at for orphans; the walk goes on from there at the next pass. */
    static final int ORPHAN_WALK = 1_000;

    private final HookProperties properties;
    private final DeliveryQueueRepository queue;
    private final OfflineChats offlineChats;
    private final Sinks sinks;
    private final HookMetrics metrics;
    private final Loops loops;
    private final HookWorkers workers;
    private volatile boolean running;
    /** Where the walk for orphans goes on from ('' from the start); read and written by the scheduler's one thread. */
    private String orphansAfter = "";

    HookMaintenance(HookProperties properties, DeliveryQueueRepository queue, OfflineChats offlineChats, Sinks sinks, HookMetrics metrics,
                    Loops loops, HookWorkers workers) {
        this.properties = properties;
        this.queue = queue;
        this.offlineChats = offlineChats;
        this.sinks = sinks;
        this.metrics = metrics;
        this.loops = loops;
        this.workers = workers;
        loops.declare(MAINTENANCE_LOOP);
    }

    @Scheduled(fixedDelayString = "${waterline.hooks.maintenance-interval:5s}", initialDelayString = "${waterline.hooks.maintenance-interval:5s}")
    void maintain() {
        loops.pass(MAINTENANCE_LOOP, () -> workers.breakersNotClosed(queue.notClosed()));
        loops.pass(MAINTENANCE_LOOP, () -> {
            DeliveryQueueRepository.Maintained m = queue.maintain();
            if (m != null) {
                if (m.expiredClaims() > 0) {
                    metrics.expired(m.expiredClaims());
                    log.warn(m.expiredClaims() + " hook deliveries claimed past waterline.hooks.claim-timeout went back to pending");
                }
                m.toSort().forEach(workers::sort);
                DeliveryQueueRepository.Walk walk = queue.orphans(orphansAfter, ORPHAN_WALK);
                orphansAfter = walk.next();
                walk.orphans().forEach(workers::purge);
            }
        });
        loops.pass(MAINTENANCE_LOOP, offlineChats::refresh);
        loops.pass(MAINTENANCE_LOOP, () -> {
            DeliveryQueueRepository.Backlog b = queue.backlog();
            metrics.backlog(b.rows(), b.oldestSeconds(), b.dead());
        });
        loops.pass(MAINTENANCE_LOOP, () -> metrics.slowInFlight(workers.forgetIdle()));
        loops.pass(MAINTENANCE_LOOP, sinks::closeIdle);
        loops.pass(MAINTENANCE_LOOP, this::ageOutDeadLetters);
    }

    /** Deletes dead letters older than {@code dead-retention}, a bounded number of chunks; answers how many went. */
    int ageOutDeadLetters() {
        Duration retention = properties.deadRetention();
        int gone = 0;
        for (int i = 0; i < DEAD_CHUNKS; i++) {
            int n = queue.deleteDeadChunk(retention);
            gone += n;
            if (n < DeliveryQueueRepository.CHUNK) {
                break;
            }
        }
        if (gone > 0) {
            metrics.deadExpired(gone);
        }
        return gone;
    }

    @Override
    public void start() {
        offlineChats.refresh();
        running = true;
    }

    @Override
    public void stop() {
        running = false;
    }

    @Override
    public boolean isRunning() {
        return running;
    }
}
