package dev.waterline.delivery;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import io.micrometer.core.instrument.Counter;

import dev.waterline.lifecycle.Loops;
import dev.waterline.lifecycle.Workers;
import dev.waterline.metrics.WaterlineMetrics;
import dev.waterline.outbox.OutboxRow;
import dev.waterline.presence.ClusterProperties;
import dev.waterline.presence.Location;
import dev.waterline.presence.NodeBus;
import dev.waterline.presence.Presence;
import dev.waterline.session.ClientSession;
import dev.waterline.session.SessionRegistry;
import dev.waterline.watermark.WatermarkIndex;
import org.springframework.context.SmartLifecycle;
import org.springframework.stereotype.Component;

/**
 * Pushes freshly committed rows to connected recipients: those connected here through its own
 * workers, those connected to other nodes by handing the rows to those nodes.
 *
 * <p>Loop: {@code concurrency} virtual threads each take a row, drain up to 63 more, group them
 * by recipient, record them as pending in the watermark index (one script call for the whole
 * batch) and write the frames. A row that does not fit the bounded queue is shed: recorded as owed and
 * left to the poller. The fast path takes no lease and writes nothing to PostgreSQL. On a Redis error the frames are still
 * written (live delivery goes on; the poller may deliver them again, which clients dedupe). Stops
 * with the context: workers finish their current batch and exit; what is queued is left to the
 * poller of the next run, since it is all in the outbox. Every failure is logged and counted by
 * {@link Loops} ({@code fast_path}).
 *
 * <p>Across nodes: rows whose recipients are not connected here go to a bounded
 * routing queue, which one router loop ({@code route}) drains: it asks presence where those
 * recipients are connected, records each row as owed to its recipient's connection there (one
 * script call), and hands the rows to their nodes, which record and write them as their own fast
 * path does (one node: presence places nobody elsewhere, and the router hands nothing over).
 * Owed before handed over: a hand-over that is lost (a node's inbox full, a publish
 * that never arrived) leaves the row owed, and the poller delivers it when it falls due. When the
 * routing queue is full the committing thread routes itself (back-pressure, never a silent drop);
 * a Redis error in routing is a suspicion (the rows may be owed to no one: every node rebuilds,
 * and nothing is retired meanwhile). The routing queue is drained before the fast path stops.
 */
@Component
public class FastPath implements SmartLifecycle {

    private static final int DRAIN = 64;

    static final String LOOP = "fast_path";
    static final String ROUTE_LOOP = "route";
    private static final int ROUTE_BATCH = 2048;

    private final DeliveryProperties properties;
    private final Loops loops;
    private final SessionRegistry sessions;
    private final LiveIndex watermark;
    private final WaterlineMetrics metrics;
    private final BlockingQueue<OutboxRow> queue;
    private final Presence presence;
    private final NodeBus bus;
    private final BlockingQueue<OutboxRow> routing;
    private final Counter shed;
    private final Counter routed;
    private final List<Thread> workers = new ArrayList<>();
    private volatile boolean running;

    FastPath(DeliveryProperties properties, SessionRegistry sessions, LiveIndex watermark, WaterlineMetrics metrics,
             Loops loops, Presence presence, NodeBus bus, ClusterProperties cluster) {
        this.loops = loops;
        this.presence = presence;
        this.bus = bus;
        this.routing = new ArrayBlockingQueue<>(Math.max(1, cluster.routeQueueSize()));
        metrics.gauge("waterline.route.queue.depth", "rows waiting to be handed to the nodes that hold their recipients", routing::size);
        this.routed = metrics.counter("waterline.routed",
                "rows handed to another node, which holds their recipient (recorded as owed first)");
        this.properties = properties;
        this.sessions = sessions;
        this.watermark = watermark;
        this.metrics = metrics;
        this.queue = new ArrayBlockingQueue<>(properties.fastQueueSize());
        metrics.gauge("waterline.fast.queue.depth", "rows waiting for the fast path", queue::size);
        this.shed = metrics.counter("waterline.fast.shed", "rows the fast path left to the poller (full queue)");
    }

    /**
     * Offers committed rows. Rows of connected recipients that fit the queue are pushed by the
     * workers; the others (queue full, or the fast path off) are shed to the poller, but first
     * recorded as owed to their connection, so that they hold the line down and the poller
     * delivers them when they fall due. Rows of recipients not connected here go to the router,
     * which hands them to the node that holds their recipient, if any: an offline recipient holds
     * nothing down and resyncs history when it connects.
     */
    public void offer(List<OutboxRow> rows) {
        boolean othersMayHold = presence.othersMayHold();
        Map<ClientSession, List<OutboxRow>> shedding = null;
        List<OutboxRow> remote = null;
        for (OutboxRow row : rows) {
            ClientSession to = sessions.get(row.recipientId());
            if (to == null) {
                if (othersMayHold) {
                    if (remote == null) {
                        remote = new ArrayList<>();
                    }
                    remote.add(row);
                }
                continue;
            }
            if (properties.fastPath() && queue.offer(row)) {
                continue;
            }
            if (shedding == null) {
                shedding = new LinkedHashMap<>();
            }
            shedding.computeIfAbsent(to, k -> new ArrayList<>()).add(row);
        }
        if (shedding != null) {
            shed(shedding);
        }
        if (remote != null) {
            toOtherNodes(remote);
        }
    }

    /**
     * Records rows as owed to their connections here and leaves them to the poller. A connection
     * that is no longer its user's epoch (the cluster: another node's newer connection holds the
     * user, and this one has just been closed) takes nothing: its rows go where Redis says the
     * user is now.
     */
    private void shed(Map<ClientSession, List<OutboxRow>> shedding) {
        for (var e : shedding.entrySet()) {
            shed.increment(e.getValue().size());
            try {
                if (!watermark.owe(e.getKey(), ids(e.getValue()))) {
                    toOtherNodes(e.getValue());
                }
            }
            catch (RuntimeException redisDown) {
                loops.failed(LOOP, redisDown);
                watermark.suspect();
            }
        }
    }

    /** Rows for recipients not connected here go to the router (or, with its queue full, are routed now). */
    private void toOtherNodes(List<OutboxRow> rows) {
        if (!presence.othersMayHold()) {
            return;   // one node: nobody elsewhere to hand them to, and the router would find no one
        }
        List<OutboxRow> overflow = null;
        for (OutboxRow row : rows) {
            if (!routing.offer(row)) {
                if (overflow == null) {
                    overflow = new ArrayList<>();
                }
                overflow.add(row);
            }
        }
        if (overflow != null) {
            routeNow(overflow);
        }
    }

    /**
     * Rows handed over by another node (the fast path there found their recipients connected
     * here): queued for the workers like rows committed here, or owed when the queue is full. A
     * recipient not connected here is skipped (whoever holds it now resynced at connect), and a
     * ghost epoch Redis still places here for it removed.
     */
    void arrived(List<OutboxRow> rows) {
        Map<ClientSession, List<OutboxRow>> shedding = null;
        java.util.Set<String> ghosts = null;
        for (OutboxRow row : rows) {
            ClientSession to = sessions.get(row.recipientId());
            if (to == null) {
                // Redis placed the user here when the rows were routed, but no connection here is
                // its: a ghost epoch, which would hold the line with what is owed to it
                if (ghosts == null) {
                    ghosts = new java.util.HashSet<>();
                }
                ghosts.add(row.recipientId());
                continue;
            }
            if (properties.fastPath() && queue.offer(row)) {
                continue;
            }
            if (shedding == null) {
                shedding = new LinkedHashMap<>();
            }
            shedding.computeIfAbsent(to, k -> new ArrayList<>()).add(row);
        }
        if (ghosts != null) {
            ghosts.forEach(watermark::forgetGhost);
        }
        if (shedding != null) {
            shed(shedding);
        }
    }

    /** One step of the router: what is queued for other nodes, routed in one go. */
    private void routeOne(List<OutboxRow> batch) throws InterruptedException {
        try {
            OutboxRow first = routing.poll(200, TimeUnit.MILLISECONDS);
            if (first == null) {
                return;
            }
            batch.add(first);
            routing.drainTo(batch, ROUTE_BATCH - 1);
            routeNow(batch);
        }
        finally {
            batch.clear();
        }
    }

    /**
     * Where the recipients are connected, the rows owed to those connections, and handed to their
     * nodes. A recipient connected nowhere (or here by now: it connected after the rows were
     * committed, and resynced) gets nothing. On a Redis error the rows may be owed to no one: the
     * failure is a suspicion, so every node rebuilds its part (marking them owed) before any poller
     * retires a row.
     */
    private void routeNow(List<OutboxRow> rows) {
        try {
            Map<String, List<OutboxRow>> byUser = new LinkedHashMap<>();
            for (OutboxRow r : rows) {
                byUser.computeIfAbsent(r.recipientId(), k -> new ArrayList<>()).add(r);
            }
            Map<String, Location> where = presence.elsewhere(byUser.keySet());
            if (where.isEmpty()) {
                return;
            }
            List<Location> targets = new ArrayList<>(where.values());
            List<WatermarkIndex.Group> groups = new ArrayList<>(targets.size());
            for (Location l : targets) {
                groups.add(WatermarkIndex.Group.remote(l.userId(), l.sessionId(), ids(byUser.get(l.userId()))));
            }
            long[] owed = watermark.oweAll(groups);
            Map<String, List<OutboxRow>> byNode = new LinkedHashMap<>();
            for (int i = 0; i < targets.size(); i++) {
                if (owed[i] >= 0) {
                    byNode.computeIfAbsent(targets.get(i).node(), k -> new ArrayList<>()).addAll(byUser.get(targets.get(i).userId()));
                }
            }
            for (var e : byNode.entrySet()) {
                bus.deliver(e.getKey(), e.getValue(), false);
                routed.increment(e.getValue().size());
            }
        }
        catch (RuntimeException e) {
            watermark.suspect();
            loops.failed(ROUTE_LOOP, rows.size() + " rows for other nodes' clients may be owed to no one; every node rebuilds", e);
        }
    }

    private static long[] ids(List<OutboxRow> rows) {
        return rows.stream().mapToLong(OutboxRow::id).toArray();
    }

    /** One step of a worker: one batch taken and written. A failure leaves the batch to the poller. */
    private void workOne(List<OutboxRow> batch) throws InterruptedException {
        try {
            OutboxRow first = queue.poll(200, TimeUnit.MILLISECONDS);
            if (first == null) {
                return;
            }
            batch.add(first);
            queue.drainTo(batch, DRAIN - 1);
            deliver(batch);
        }
        finally {
            batch.clear();
        }
    }

    private void deliver(List<OutboxRow> batch) {
        Map<ClientSession, List<OutboxRow>> byRecipient = new LinkedHashMap<>();
        List<OutboxRow> gone = null;
        for (OutboxRow r : batch) {
            ClientSession to = sessions.get(r.recipientId());
            if (to != null) {
                byRecipient.computeIfAbsent(to, k -> new ArrayList<>()).add(r);
            }
            else {
                // queued while the recipient was here, gone since (perhaps to another node, its
                // connection here superseded while another batch of this worker pool delivered)
                if (gone == null) {
                    gone = new ArrayList<>();
                }
                gone.add(r);
            }
        }
        if (gone != null) {
            toOtherNodes(gone);
        }
        if (byRecipient.isEmpty()) {
            return;
        }
        List<WatermarkIndex.Group> groups = new ArrayList<>(byRecipient.size());
        for (var e : byRecipient.entrySet()) {
            groups.add(WatermarkIndex.Group.of(e.getKey(), ids(e.getValue())));
        }
        boolean[] recorded;
        try {
            recorded = watermark.deliver(groups);
        }
        catch (RuntimeException redisDown) {
            // written unrecorded (live delivery goes on); the index is distrusted until rebuilt
            loops.failed(LOOP, redisDown);
            watermark.suspect();
            recorded = null;
        }
        int i = 0;
        List<OutboxRow> elsewhere = null;
        for (var e : byRecipient.entrySet()) {
            if (recorded != null && !recorded[i++]) {
                // Redis names another connection for this user (its connection on another node
                // superseded this one, whose close has not come) or none: the rows go where Redis
                // says the user is now, as any row of another node's client, never dropped
                if (elsewhere == null) {
                    elsewhere = new ArrayList<>();
                }
                elsewhere.addAll(e.getValue());
                continue;
            }
            ClientSession to = e.getKey();
            int written = 0;
            for (OutboxRow row : e.getValue()) {
                if (to.send(FramesOut.message(row), () -> metrics.deliveryLatency(true, System.currentTimeMillis() - row.committedAtMillis()))) {
                    written++;
                }
            }
            metrics.delivered(true, written);
        }
        if (elsewhere != null) {
            toOtherNodes(elsewhere);
        }
    }

    @Override
    public void start() {
        running = true;
        for (int i = 0; i < properties.concurrency(); i++) {
            List<OutboxRow> batch = new ArrayList<>(DRAIN);
            workers.add(loops.start(LOOP, "fast-path-" + i, () -> running, () -> workOne(batch)));
        }
        List<OutboxRow> batch = new ArrayList<>(ROUTE_BATCH);
        workers.add(loops.start(ROUTE_LOOP, "router", () -> running || !routing.isEmpty(), () -> routeOne(batch)));
    }

    /** Workers finish their batch; the router first hands over what is queued for other nodes. */
    @Override
    public void stop() {
        running = false;
        Workers.stop(workers, Duration.ofSeconds(2));
        workers.clear();
        List<OutboxRow> left = new ArrayList<>();
        routing.drainTo(left);
        if (!left.isEmpty()) {
            routeNow(left);
        }
    }

    @Override
    public boolean isRunning() {
        return running;
    }

    @Override
    public int getPhase() {
        return Integer.MAX_VALUE - 200;
    }
}
