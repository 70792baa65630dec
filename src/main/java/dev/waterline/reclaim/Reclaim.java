package dev.waterline.reclaim;

import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.locks.LockSupport;

import dev.waterline.lifecycle.Loops;
import dev.waterline.lifecycle.Workers;
import dev.waterline.metrics.WaterlineMetrics;
import dev.waterline.outbox.OutboxStore;
import dev.waterline.session.ClientSession;
import dev.waterline.session.SessionRegistry;
import dev.waterline.presence.ClusterProperties;
import dev.waterline.presence.Presence;
import dev.waterline.watermark.IndexHealth;
import dev.waterline.watermark.MarkerStore;
import dev.waterline.watermark.WatermarkIndex;
import io.micrometer.core.instrument.Counter;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.context.SmartLifecycle;
import org.springframework.stereotype.Component;

/**
 * Outbox GC ("Tetris"): deletes the outbox prefix below the safe-delete line, and keeps this
 * node's part of the Redis index whole.
 *
 * <p>Loop (one virtual thread on every node, every {@code interval}): one {@link #pass()}: on the
 * node that holds the lease ({@link Leadership}: always, in the single-node mode) the leader's part,
 * then on every node its own part.
 *
 * <p><b>The leader's part.</b> PostgreSQL holds the marker token and the index's generation, and so
 * does Redis. If Redis holds others (it lost or rolled back data, or never had them), or a node
 * was declared dead (presence sweeps nodes whose heartbeats stopped: their connections are
 * withdrawn, never acked; what they committed but did not hand over is in the outbox), or a node
 * asked for it (it suspects it missed a write), the leader starts a new generation: PostgreSQL
 * first, then Redis, then it forgets pins of users on no live node. Every node then rebuilds its
 * part, and nothing is deleted until every live node trusts the index under the new generation.
 * Otherwise, if every live node trusts it, the leader reads the line (the lowest pin over every
 * connected client, or the outbox head when no one holds a pin: offline recipients hold nothing
 * down), moves the marker on with a compare-and-set (a Redis flushed or rolled back since the
 * first read fails it, and nothing is deleted), asks once more whether every node trusts the index
 * (a suspicion may have arisen while the pins were read), renews its word to the pollers that
 * every node does (the cluster: {@code wl:alltrusted}), and deletes, in bounded chunks and id
 * order, rows below the line that are older than the grace; then the age backstop deletes rows
 * past the outbox retention whatever the line. Every write to PostgreSQL is fenced by the lease's
 * epoch: a leader that lost its lease writes nothing.
 *
 * <p><b>Every node's part.</b> When this node does not trust its part under the current
 * generation: if it suspects it missed a write since it last asked, it asks the leader for a new
 * generation (what it missed may concern any node's clients) and waits for it; otherwise it
 * rebuilds its part from a full scan of the outbox ({@link #rebuild}) and trusts it.
 *
 * <p>On any error (Redis or PostgreSQL) the pass stops where it is (logged and counted by
 * {@link Loops}, {@code reclaim}); nothing is deleted after an error, and a Redis error before the
 * deletes means nothing is deleted at all. Stops with the context (resigning the lease). Keeps I2:
 * a row goes only when no connected client anywhere has it pending or owed, so its recipient acked
 * it, was withdrawn, or was never connected to get it live (and recovers it from history). What
 * the marker cannot see is a Redis that loses writes made after the current token while keeping
 * it, within one interval; the grace bounds which rows that could touch.
 */
@Component
public class Reclaim implements SmartLifecycle {

    private static final Log log = LogFactory.getLog(Reclaim.class);

    static final String LOOP = "reclaim";

    private final ReclaimProperties properties;
    private final Loops loops;
    private final Duration outboxRetention;
    private final WatermarkIndex watermark;
    private final MarkerStore markers;
    private final OutboxStore outbox;
    private final SessionRegistry sessions;
    private final Presence presence;
    private final ClusterProperties cluster;
    /** The generation this node last saw as leader, and when it first saw it ({@link System#nanoTime()}). */
    private long generationSeen = -1;
    private long generationSeenAt;
    private final Leadership leadership;
    private final WaterlineMetrics metrics;
    private final IndexHealth health;
    private final Clock clock;
    private final Counter reclaimedByLine;
    private final Counter reclaimedByAge;
    private final Counter rebuilds;
    private final Counter generations;
    /** This node asked for a new generation above this one, and waits for it before it rebuilds. */
    private long awaitingAbove = -1;
    private volatile boolean running;
    private Thread thread;

    Reclaim(ReclaimProperties properties, @Value("${waterline.retention.outbox:26h}") Duration outboxRetention,
            WatermarkIndex watermark, MarkerStore markers, OutboxStore outbox, SessionRegistry sessions, Presence presence,
            ClusterProperties cluster, Leadership leadership, WaterlineMetrics metrics, IndexHealth health, Loops loops, Clock clock) {
        this.loops = loops;
        this.health = health;
        this.properties = properties;
        this.outboxRetention = outboxRetention;
        this.watermark = watermark;
        this.markers = markers;
        this.outbox = outbox;
        this.sessions = sessions;
        this.presence = presence;
        this.cluster = cluster;
        this.leadership = leadership;
        this.metrics = metrics;
        this.clock = clock;
        this.reclaimedByLine = metrics.counter("waterline.outbox.reclaimed", "outbox rows deleted below the safe-delete line");
        this.reclaimedByAge = metrics.counter("waterline.outbox.reclaimed.backstop", "outbox rows deleted by the age backstop");
        this.rebuilds = metrics.counter("waterline.watermark.rebuilds", "rebuilds of this node's part of the Redis index from the outbox");
        if (presence.clustered() && cluster.trustTtl().compareTo(properties.grace()) >= 0) {
            // a node's trust outlives its last renewal by trust-ttl: a row it wrote unrecorded
            // just before it lost trust must still be inside the grace when that trust runs out
            throw new IllegalArgumentException("three waterline.cluster.heartbeat-interval (" + cluster.trustTtl()
                    + ") must be shorter than waterline.reclaim.grace (" + properties.grace() + ")");
        }
        this.generations = metrics.counter("waterline.watermark.generations",
                "new generations of the index this node started as the reclaim leader (every node then rebuilds its part)");
    }

    /** One pass: the leader's part where this node leads, then this node's own. Returns rows deleted. */
    public long pass() {
        // Redis first: a leader cut off from Redis must not keep its lease (renewed here every
        // pass) while it can do none of the leader's work; it lets the lease run out instead
        watermark.generation();
        long epoch = leadership.lead();
        long deleted = epoch >= 0 ? lead(epoch) : 0;
        keep();
        if (epoch < 0) {
            outbox.refreshFloor();   // the leader deletes; claims here start past what it deleted
        }
        return deleted;
    }

    /** The leader's part of a pass (see the class note). */
    private long lead(long epoch) {
        MarkerStore.Marker m = markers.read();
        Long heldToken = watermark.marker();
        Long heldGeneration = watermark.generation();
        int dead = presence.sweepDeadNodes();
        String why = null;
        if (!Objects.equals(heldToken, m.token()) || !Objects.equals(heldGeneration, m.generation())) {
            why = heldToken == null ? "Redis holds no marker" : "Redis holds marker " + heldToken + " of generation "
                    + heldGeneration + ", PostgreSQL " + m.token() + " of " + m.generation();
        }
        else if (dead > 0) {
            why = dead + " node(s) declared dead";
        }
        else if (watermark.newGenerationRequested()) {
            why = "a node suspects it missed a write";
        }
        if (why != null) {
            if (heldToken != null && heldToken > m.token()) {
                // Redis is ahead of PostgreSQL: the database was restored to an earlier point, and
                // its outbox hands out ids Redis's acked sets may already name. Those sets are the
                // one record whose stale entry would skip a row rather than repeat it: gone before
                // any node rebuilds under the new generation.
                long forgotten = watermark.forgetAcked();
                log.warn("Redis holds marker " + heldToken + ", ahead of PostgreSQL's " + m.token()
                        + " (a database restored without flushing Redis?): " + forgotten + " acked sets dropped");
            }
            newGeneration(epoch, m, why);
            return 0;
        }
        if (!everyNodeTrusts(m.generation())) {
            if (presence.clustered()) {
                watermark.notAllTrusted();
            }
            return 0;
        }
        OptionalLong pin = watermark.lowestPin();
        long head = outbox.head();
        long line = pin.isPresent() ? Math.min(pin.getAsLong(), head) : head;
        long next = m.token() + 1;
        // Compare-and-set: a Redis flushed or rolled back since the first read no longer holds
        // the expected marker, and then the pins just read prove nothing.
        if (!watermark.rotateMarker(m.token(), next)) {
            health.suspect();
            return 0;
        }
        if (leadership.fenced(epoch, () -> {
            markers.token(next);
            return true;
        }).isEmpty() || !everyNodeTrusts(m.generation())) {
            return 0;
        }
        if (presence.clustered()) {
            // three passes: a leader that stops renewing it (it died, or found a node untrusted
            // and could not say so) leaves the pollers without it soon after
            watermark.allTrusted(m.generation(), properties.interval().multipliedBy(3));
        }
        metrics.safeDeleteId(line);

        long deleted = 0;
        for (int i = 0; i < properties.maxChunksPerPass(); i++) {
            Optional<Long> rows = leadership.fenced(epoch, () -> outbox.deleteBelow(line, properties.grace(), properties.chunk()));
            if (rows.isEmpty()) {
                return deleted;   // the lease is gone
            }
            deleted += rows.get();
            reclaimedByLine.increment(rows.get());
            if (rows.get() < properties.chunk()) {
                break;
            }
        }
        for (int i = 0; i < properties.maxChunksPerPass(); i++) {
            Optional<Long> rows = leadership.fenced(epoch,
                    () -> outbox.deleteOlderThan(clock.instant().minus(outboxRetention), properties.chunk()));
            if (rows.isEmpty()) {
                return deleted;
            }
            deleted += rows.get();
            reclaimedByAge.increment(rows.get());
            if (rows.get() < properties.chunk()) {
                break;
            }
        }
        if (deleted > 0) {
            outbox.refreshFloor();
        }
        return deleted;
    }

    /**
     * This node trusts its part under {@code generation}, and (the cluster) so does every node in
     * {@code wl:nodes}, and the generation has stood for a trust's life (three heartbeats): after
     * a Redis that lost its data, {@code wl:nodes} is empty until the nodes beat again, and a node
     * that has not rejoined yet must not be taken for one that is not there.
     */
    private boolean everyNodeTrusts(long generation) {
        if (health.trustedGeneration() != generation) {
            return false;
        }
        if (!presence.clustered()) {
            return true;
        }
        if (generation != generationSeen) {
            generationSeen = generation;
            generationSeenAt = System.nanoTime();
        }
        return System.nanoTime() - generationSeenAt >= cluster.trustTtl().toNanos() && presence.untrustedNodes(generation).isEmpty();
    }

    /** Starts a new generation of the index: PostgreSQL first (fenced), then Redis. */
    private void newGeneration(long epoch, MarkerStore.Marker m, String why) {
        MarkerStore.Marker next = new MarkerStore.Marker(m.token() + 1, m.generation() + 1);
        if (leadership.fenced(epoch, () -> {
            markers.write(next);
            return true;
        }).isEmpty()) {
            return;
        }
        watermark.newGeneration(next.token(), next.generation());
        long orphans = presence.clustered() ? watermark.forgetOrphans() : 0;
        generations.increment();
        log.info("generation " + next.generation() + " of the watermark index (" + why + "): every node rebuilds its part"
                + (orphans > 0 ? "; " + orphans + " pinned users on no live node forgotten" : ""));
    }

    /** This node's part of a pass (see the class note). */
    private void keep() {
        MarkerStore.Marker m = markers.read();
        Long held = watermark.generation();
        if (held == null || held != m.generation() || health.trustedGeneration() == m.generation()) {
            return;   // the leader has yet to give Redis the generation, or this node trusts it already
        }
        long seen = health.suspicions();
        if (health.newGenerationWanted()) {
            watermark.requestNewGeneration(presence.nodeId());
            health.asked(seen);
            awaitingAbove = m.generation();
            return;
        }
        if (m.generation() > awaitingAbove) {
            rebuild(m.generation());
        }
    }

    /**
     * Rebuilds this node's part of the index from the outbox. Every connection here is given, as
     * owed, every row of its still in delivery but those its user acked whose retirement the
     * poller has not reached (Redis's acked set; where Redis lost that too, conservative: such a
     * row is written and acked again), and loses pending or owed ids the scan did not find; users that
     * hold a pin but have no connection here lose it (in the cluster: only those Redis places on
     * this node, and every user it places on this node). In the cluster a connection Redis no
     * longer names (another node's newer one superseded it: 4009; it was withdrawn, declared dead
     * or lost with Redis's data: 1012) is closed, never named again: its client reconnects and
     * resyncs. Only if Redis still holds {@code generation} at the end (no flush meanwhile) and no
     * suspicion arose meanwhile is this node's part trusted under it.
     */
    void rebuild(long generation) {
        long seen = health.suspicions();
        boolean clustered = presence.clustered();
        String node = presence.nodeId();
        OutboxStore.InDelivery scan = outbox.inDelivery(user -> sessions.get(user) != null);
        java.util.Set<String> leftovers = new java.util.HashSet<>(watermark.pinnedUsers());
        if (clustered) {
            // and every user Redis places on this node, pinned or not: an epoch left without its
            // connection (a connect whose answer was lost) would take what is owed to it
            leftovers.addAll(watermark.nodeUsers(node));
        }
        for (String user : leftovers) {
            sessions.underUserLock(user, () -> {
                if (sessions.get(user) == null) {
                    watermark.forgetUser(user, clustered ? node : null);
                }
                return null;
            });
        }
        int connections = 0;
        int superseded = 0;
        for (ClientSession s : sessions.all()) {
            long[] ids = scan.byRecipient().getOrDefault(s.userId(), List.of()).stream().mapToLong(Long::longValue).toArray();
            int kept = sessions.underUserLock(s.userId(), () -> {
                if (!sessions.isCurrent(s)) {
                    return 0;
                }
                int r = watermark.rebuildUser(s, node, clustered, scan.highestId(), ids);
                if (r < 0) {
                    sessions.unregister(s);
                }
                return r;
            });
            if (kept == WatermarkIndex.SUPERSEDED) {
                superseded++;
                s.close(4009, "superseded by a newer connection on another node");
            }
            else if (kept == WatermarkIndex.GONE) {
                superseded++;
                s.close(1012, "this connection left live delivery; reconnect and resync");
            }
            connections += Math.max(kept, 0);
        }
        if (!Objects.equals(watermark.generation(), generation)) {
            log.warn("Redis lost generation " + generation + " of the index during the rebuild; rebuilding again on the next pass");
            return;
        }
        rebuilds.increment();
        boolean trusted = health.trust(generation, seen);
        log.info("this node's part of the watermark index rebuilt under generation " + generation + " for " + connections
                + " connections" + (superseded > 0 ? " (" + superseded + " no longer in live delivery, closed)" : "")
                + (trusted ? "" : "; a suspicion arose meanwhile, rebuilding again on the next pass"));
    }

    /** One pass, then the interval. A pass that fails stops where it is (nothing more deleted) and is counted. */
    private void step() {
        try {
            pass();
        }
        finally {
            LockSupport.parkNanos(properties.interval().toNanos());
        }
    }

    @Override
    public void start() {
        running = true;
        if (properties.enabled()) {
            thread = loops.start(LOOP, "outbox-reclaim", () -> running, this::step);
        }
    }

    @Override
    public void stop() {
        running = false;
        Workers.stop(thread, Duration.ofSeconds(5));
        loops.pass(LOOP, leadership::resign);
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
