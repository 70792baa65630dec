package dev.waterline.delivery;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import dev.waterline.lifecycle.Loops;
import dev.waterline.lifecycle.Workers;
import dev.waterline.metrics.WaterlineMetrics;
import dev.waterline.outbox.OutboxStore;
import dev.waterline.outbox.OutboxRow;
import dev.waterline.session.ClientSession;
import dev.waterline.session.SessionRegistry;
import dev.waterline.reaper.ReaperProperties;
import dev.waterline.reaper.Withdrawals;
import dev.waterline.watermark.MarkerStore;
import dev.waterline.watermark.WatermarkIndex;
import dev.waterline.presence.ClusterProperties;
import dev.waterline.presence.Location;
import dev.waterline.presence.Presence;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.context.SmartLifecycle;
import org.springframework.stereotype.Component;

/**
 * The authoritative delivery loop: whatever the fast path did not get acked is delivered here.
 *
 * <p>Loop (one virtual thread, plus the writers): while the outbound buffer is non-empty,
 * wait; otherwise claim up to {@code batch-size} due rows, oldest first from the reclaim floor,
 * with {@code FOR UPDATE SKIP LOCKED} and a lease (each claim counts an attempt). For each
 * recipient: not connected here → the rows are retired (the client recovers from history on
 * reconnect, and offline recipients hold nothing down); connected → per the watermark index, a
 * row owed to the connection (shed by the fast path, or owed after an index rebuild) is written
 * for the first time, a row pending (written, never acked) is written again, and any other row
 * is retired (acked, or from before this connection, whose client resynced history when it
 * connected). A pending row's re-sends are counted in {@code attempts}; one that has been re-sent
 * {@code max-delivery-attempts} times gets its recipient withdrawn instead of another re-send
 * (the attempts reaper, 4008). While the index is not trusted to be whole (after a Redis error or
 * loss, until the next rebuild) rows of connected recipients are left leased, not retired. If Redis does not name the connection as its
 * user's epoch, its rows are left alone and their lease brings them back. Rows sent stay leased,
 * so an unacked delivery comes back once per lease until acked or withdrawn.
 *
 * <p>On error (database or Redis unreachable) the pass is abandoned, logged and counted
 * ({@link Loops}, {@code poller}) and retried after the loop's error pause; claimed rows come back
 * when their lease ends, so nothing is lost. Stops with the
 * context. The scan starts from the outbox's floor (below it every row is deleted) on every pass
 * rather than from a cursor, so a row committed late behind a higher id is never skipped.
 */
@Component
public class OutboxPoller implements SmartLifecycle {


    record Outbound(ClientSession to, OutboxRow row) {
    }

    static final String LOOP = "poller";
    static final String WRITER_LOOP = "poller_writer";

    private final DeliveryProperties properties;
    private final Loops loops;
    private final OutboxStore outbox;
    private final SessionRegistry sessions;
    private final LiveIndex watermark;
    private final MarkerStore markers;
    private final Presence presence;
    private final Withdrawals withdrawals;
    private final ReaperProperties reapers;
    private final WaterlineMetrics metrics;
    private final BlockingQueue<Outbound> queue;
    private final List<Thread> threads = new ArrayList<>();
    private volatile boolean running;

    OutboxPoller(DeliveryProperties properties, OutboxStore outbox, SessionRegistry sessions,
                 LiveIndex watermark, MarkerStore markers, Presence presence, Withdrawals withdrawals, ReaperProperties reapers,
                 WaterlineMetrics metrics, Loops loops, ClusterProperties cluster,
                 @Value("${waterline.reclaim.interval:1s}") Duration reclaimInterval,
                 @Value("${spring.data.redis.timeout:2s}") Duration redisTimeout) {
        // A write that failed is known for one Redis command timeout later; the node then stops
        // vouching for the index within its trust's life (three heartbeats), and the leader's word
        // to the pollers lives three reclaim passes after its last renewal, which may come a pass
        // late: a row written unrecorded must not fall due for a poller before all that has run out.
        Duration window = redisTimeout.plus(cluster.trustTtl()).plus(reclaimInterval.multipliedBy(4));
        if (presence.clustered() && properties.lease().compareTo(window) <= 0) {
            throw new IllegalArgumentException("waterline.delivery.lease (" + properties.lease() + ") must be longer than"
                    + " spring.data.redis.timeout, three waterline.cluster.heartbeat-interval and four waterline.reclaim.interval"
                    + " together (" + window + ")");
        }
        this.loops = loops;
        this.markers = markers;
        this.presence = presence;
        this.withdrawals = withdrawals;
        this.reapers = reapers;
        this.properties = properties;
        this.outbox = outbox;
        this.sessions = sessions;
        this.watermark = watermark;
        this.metrics = metrics;
        this.queue = new ArrayBlockingQueue<>(properties.queueSize());
        metrics.gauge("waterline.poller.queue.depth", "frames the poller has queued for writing", queue::size);
    }

    /** One claim-and-dispatch pass. Returns the number of rows claimed, or -1 when its queue was still busy (no fetch). */
    int pollOnce() {
        if (!queue.isEmpty()) {
            return -1;
        }
        int room = Math.min(properties.batchSize(), queue.remainingCapacity());
        List<OutboxRow> rows = outbox.claimDue(room, properties.lease());
        if (rows.isEmpty()) {
            return 0;
        }
        // PostgreSQL's marker, read now: a Redis that lost or rolled back data since no longer
        // holds it, and then no row's absence from the index proves anything (status.lua)
        MarkerStore.Marker marker = markers.read();
        Map<String, List<OutboxRow>> byRecipient = new LinkedHashMap<>();
        for (OutboxRow r : rows) {
            byRecipient.computeIfAbsent(r.recipientId(), k -> new ArrayList<>()).add(r);
        }
        List<String> notHere = new ArrayList<>();
        for (String user : byRecipient.keySet()) {
            if (sessions.get(user) == null) {
                notHere.add(user);
            }
        }
        // In the cluster "connected nowhere" is Redis's word, sound only while the index is whole:
        // read with the same checks as the status of a row (null: judge none of them this pass)
        Map<String, String[]> located = presence.clustered() && !notHere.isEmpty() ? watermark.locateIfWhole(notHere, marker) : Map.of();
        Map<String, Location> elsewhere = new LinkedHashMap<>();
        if (located != null) {
            located.forEach((user, where) -> {
                if (where[0].equals(presence.nodeId())) {
                    watermark.forgetGhost(user);   // placed here, but no connection here is its
                }
                else {
                    elsewhere.put(user, new Location(user, where[0], where[1]));
                }
            });
        }
        List<Long> retired = new ArrayList<>();
        Map<String, List<OutboxRow>> forward = new LinkedHashMap<>();
        for (var e : byRecipient.entrySet()) {
            List<OutboxRow> mine = e.getValue();
            ClientSession to = sessions.get(e.getKey());
            Location there = to == null ? elsewhere.get(e.getKey()) : null;
            if (to == null && there == null && located == null) {
                continue;   // the index is not known to be whole: the lease brings the rows back
            }
            if (to == null && there == null) {
                // connected nowhere: the client recovers from history on reconnect, and an
                // offline recipient holds nothing down
                mine.forEach(r -> retired.add(r.id()));
                continue;
            }
            String sessionId = to != null ? to.sessionId() : there.sessionId();
            int[] status = watermark.status(e.getKey(), sessionId, to != null, marker, mine.stream().mapToLong(OutboxRow::id).toArray());
            if (status == null) {
                continue; // not known to be whole: the lease brings the rows back
            }
            if (status.length == 0) {
                // Redis names another connection, or none: the rows come back with their lease, by
                // then judged for the connection it names (one here superseded on another node is
                // closed now)
                if (to != null) {
                    watermark.notTheEpoch(to);
                }
                continue;
            }
            List<OutboxRow> owed = new ArrayList<>();
            List<OutboxRow> again = new ArrayList<>();
            boolean overAttempts = false;
            for (int i = 0; i < mine.size(); i++) {
                OutboxRow row = mine.get(i);
                switch (status[i]) {
                    case WatermarkIndex.OWED -> owed.add(row);
                    case WatermarkIndex.PENDING -> {
                        again.add(row);
                        overAttempts |= row.attempts() >= reapers.maxDeliveryAttempts();
                    }
                    default -> retired.add(row.id());
                }
            }
            String reason = "withdrawn: a delivery was re-sent " + reapers.maxDeliveryAttempts() + " times without an ack";
            if (overAttempts) {
                if (to != null) {
                    withdrawals.withdraw(to, "attempts", 4008, reason);
                }
                else {
                    withdrawals.withdrawElsewhere(there, "attempts", 4008, reason);
                }
                continue;
            }
            outbox.countResends(again.stream().mapToLong(OutboxRow::id).toArray());
            if (to == null) {
                // the node that holds the connection records and writes them (its poller's writers)
                List<OutboxRow> there2 = forward.computeIfAbsent(there.node(), k -> new ArrayList<>());
                there2.addAll(again);
                there2.addAll(owed);
                continue;
            }
            List<OutboxRow> writes = new ArrayList<>(again);
            if (!owed.isEmpty() && watermark.deliver(to, owed.stream().mapToLong(OutboxRow::id).toArray())) {
                writes.addAll(owed);
            }
            writes.forEach(row -> queue.offer(new Outbound(to, row)));
        }
        outbox.retire(retired.stream().mapToLong(Long::longValue).toArray());
        forward.forEach((node, list) -> {
            if (!list.isEmpty()) {
                presence.deliver(node, list, true);
            }
        });
        return rows.size();
    }

    /**
     * Rows another node's poller judged owed to, or pending for, a connection of this node: recorded
     * as pending for it and written by this poller's writers (counted as poller deliveries). A
     * recipient no longer connected here, or a connection no longer its user's epoch, gets nothing:
     * whoever holds the user now resynced at connect.
     */
    void arrived(List<OutboxRow> rows) {
        Map<ClientSession, List<OutboxRow>> byRecipient = new LinkedHashMap<>();
        java.util.Set<String> ghosts = new java.util.HashSet<>();
        for (OutboxRow r : rows) {
            ClientSession to = sessions.get(r.recipientId());
            if (to != null) {
                byRecipient.computeIfAbsent(to, k -> new ArrayList<>()).add(r);
            }
            else {
                ghosts.add(r.recipientId());
            }
        }
        ghosts.forEach(watermark::forgetGhost);
        for (var e : byRecipient.entrySet()) {
            if (watermark.deliver(e.getKey(), e.getValue().stream().mapToLong(OutboxRow::id).toArray())) {
                e.getValue().forEach(row -> queue.offer(new Outbound(e.getKey(), row)));
            }
        }
    }

    /**
     * Polls back to back while there are due rows; after a poll that claimed nothing the pause
     * doubles, from the poll interval up to a quarter of the lease (at most 1 s), and drops back
     * once a poll finds work. A claim walks the outbox from the floor (every row not yet due is
     * read on the way), so an idle poller at the base interval cost the database most of a
     * full scan ten times a second; the back-off adds at most a quarter lease to a re-delivery
     * that has already waited a whole lease.
     */
    private final class Poll {
        private final long base = properties.pollInterval().toNanos();
        private final long cap = Math.max(base, Math.min(properties.lease().toNanos() / 4, Duration.ofSeconds(1).toNanos()));
        private long pause = base;

        void step() {
            int claimed;
            try {
                claimed = pollOnce();
            }
            catch (RuntimeException e) {
                // a pass that failed (database or Redis): its claimed rows come back with their lease
                pause = base;
                throw e;
            }
            if (claimed == 0) {
                LockSupport.parkNanos(pause);
                pause = Math.min(cap, pause * 2);
            }
            else {
                pause = base;
                if (claimed < 0) {
                    LockSupport.parkNanos(pause);
                }
            }
        }
    }

    private void writeOne() throws InterruptedException {
        Outbound o = queue.poll(200, TimeUnit.MILLISECONDS);
        if (o != null && o.to().isOpen()) {
            OutboxRow row = o.row();
            if (o.to().send(FramesOut.message(row), () -> metrics.deliveryLatency(false, System.currentTimeMillis() - row.committedAtMillis()))) {
                metrics.delivered(false, 1);
            }
        }
    }

    @Override
    public void start() {
        running = true;
        Poll poll = new Poll();
        threads.add(loops.start(LOOP, "outbox-poller", () -> running, poll::step));
        for (int i = 0; i < properties.concurrency(); i++) {
            threads.add(loops.start(WRITER_LOOP, "poller-writer-" + i, () -> running, this::writeOne));
        }
    }

    @Override
    public void stop() {
        running = false;
        Workers.stop(threads, Duration.ofSeconds(2));
        threads.clear();
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
