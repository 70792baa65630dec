package dev.waterline.presence.redis;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.locks.LockSupport;

import dev.waterline.lifecycle.Loops;
import dev.waterline.lifecycle.Workers;
import dev.waterline.metrics.WaterlineMetrics;
import dev.waterline.presence.ClusterProperties;
import dev.waterline.presence.Location;
import dev.waterline.presence.Presence;
import dev.waterline.presence.UsersWithdrawn;
import dev.waterline.redis.RedisKeys;
import dev.waterline.session.ClientSession;
import dev.waterline.session.SessionRegistry;
import dev.waterline.watermark.IndexHealth;
import dev.waterline.watermark.MarkerStore;
import dev.waterline.watermark.WatermarkIndex;
import io.micrometer.core.instrument.Counter;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.context.SmartLifecycle;
import org.springframework.core.io.ClassPathResource;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.data.redis.core.script.RedisScript;
import org.springframework.stereotype.Component;

/**
 * The cluster: who is connected where is what the watermark index's scripts record in Redis
 * ({@code wl:node:{user}} with {@code wl:sess:{user}}); this adapter reads it and adds the nodes:
 * their heartbeats, their death, and their trust in the index. What travels between the nodes is
 * {@link RedisNodeBus}'s.
 *
 * <p><b>Heartbeat</b> (one loop of {@link Loops}, every {@code heartbeat-interval}):
 * {@code heartbeat.lua} puts this node in {@code wl:nodes} at Redis's clock and renews its word
 * that it trusts its part of the index ({@code wl:trust:<node>}, which lives three intervals), or
 * withdraws it while it does not. A node declared dead meanwhile finds its tombstone: it closes
 * every connection it holds (1012: its clients reconnect and resync), suspects its part of the
 * index, removes the tombstone and joins again. On a Redis error the beat is counted and tried
 * again; a node whose beats have not reached Redis for four fifths of {@code node-timeout}
 * closes every connection it holds (the others are about to declare it dead and withdraw them),
 * so that its clients reconnect to a node that can serve them. Every start is a new node id
 * ({@link ClusterProperties#nodeId}), so no process ever takes over another's heartbeats,
 * channel or users.
 *
 * <p>Joins after the bus subscribed to this node's channel. Stops after delivery: this node's
 * users leave live delivery in one sweep (never an ack), and the node leaves {@code wl:nodes}, so
 * that no one waits for its heartbeats to stop.
 */
@Component
@ConditionalOnProperty(name = "waterline.cluster.enabled", havingValue = "true")
class RedisPresence implements Presence, SmartLifecycle {

    private static final Log log = LogFactory.getLog(RedisPresence.class);

    static final String HEARTBEAT_LOOP = "heartbeat";
    /** How long a dead node's tombstone is kept: longer than any pause a node could wake from. */
    private static final long TOMBSTONE_SECONDS = Duration.ofDays(1).toSeconds();

    @SuppressWarnings("rawtypes")
    private static final RedisScript<List> HEARTBEAT = RedisScript.of(lua("heartbeat"), List.class);
    @SuppressWarnings("rawtypes")
    private static final RedisScript<List> SWEEP_NODES = RedisScript.of(lua("sweep_nodes"), List.class);
    @SuppressWarnings("rawtypes")
    private static final RedisScript<List> TRUSTED = RedisScript.of(lua("trusted"), List.class);

    private final StringRedisTemplate redis;
    private final ApplicationEventPublisher events;
    private final ClusterProperties properties;
    private final SessionRegistry sessions;
    private final WatermarkIndex watermark;
    private final IndexHealth health;
    private final Loops loops;
    private final String node;
    private final Counter fences;
    private volatile int liveNodes = 1;
    /** The generation this node last saw as the reclaim leader, and when it first saw it ({@link System#nanoTime()}). */
    private long generationSeen = -1;
    private long generationSeenAt;
    /** When a heartbeat last reached Redis ({@link System#nanoTime()}). */
    private volatile long lastBeat = System.nanoTime();
    /** This node closed its connections for want of heartbeats, and has not beaten since. */
    private volatile boolean cutOff;
    private volatile boolean running;
    private final List<Thread> threads = new ArrayList<>();

    RedisPresence(StringRedisTemplate redis, ClusterProperties properties, SessionRegistry sessions, WatermarkIndex watermark,
                  IndexHealth health, Loops loops, WaterlineMetrics metrics, ApplicationEventPublisher events) {
        this.redis = redis;
        this.events = events;
        this.properties = properties;
        this.sessions = sessions;
        this.watermark = watermark;
        this.health = health;
        this.loops = loops;
        this.node = properties.nodeId();
        metrics.gauge("waterline.cluster.nodes", "live nodes this node sees (itself included)", () -> liveNodes);
        this.fences = metrics.counter("waterline.cluster.fenced",
                "times this node found it had been declared dead and closed every connection it held");
    }

    static String lua(String name) {
        try (var in = new ClassPathResource("presence/" + name + ".lua").getInputStream()) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        catch (IOException e) {
            throw new UncheckedIOException("missing presence script " + name, e);
        }
    }

    static String trustKey(String node) {
        return "wl:trust:" + node;
    }

    static String tombstone(String node) {
        return "wl:dead:" + node;
    }

    @Override
    public String nodeId() {
        return node;
    }

    @Override
    public Map<String, Location> elsewhere(Collection<String> users) {
        if (users.isEmpty()) {
            return Map.of();
        }
        Map<String, Location> out = new HashMap<>();
        watermark.locate(users).forEach((user, where) -> {
            if (!where.node().equals(node)) {
                out.put(user, new Location(user, where.node(), where.sessionId()));
            }
        });
        return out;
    }

    @Override
    public Optional<Map<String, Location>> locateIfWhole(Collection<String> users, MarkerStore.Marker marker) {
        if (users.isEmpty()) {
            return Optional.of(Map.of());
        }
        return watermark.locateIfWhole(users, marker.token(), marker.generation(), true).map(located -> {
            Map<String, Location> out = new HashMap<>();
            located.forEach((user, where) -> out.put(user, new Location(user, where.node(), where.sessionId())));
            return out;
        });
    }

    @Override
    public boolean othersMayHold() {
        return true;   // a node may join at any time
    }

    @Override
    public int liveNodes() {
        return liveNodes;
    }

    @Override
    public int sweepDeadNodes() {
        Set<String> nodes = redis.opsForZSet().range(RedisKeys.NODES, 0, -1);
        if (nodes == null || nodes.isEmpty()) {
            return 0;
        }
        List<String> keys = new ArrayList<>(1 + 2 * nodes.size());
        keys.add(RedisKeys.NODES);
        List<String> args = new ArrayList<>(2 + nodes.size());
        args.add(Long.toString(properties.nodeTimeout().toMillis()));
        args.add(Long.toString(TOMBSTONE_SECONDS));
        for (String n : nodes) {
            keys.add(tombstone(n));
            keys.add(trustKey(n));
            args.add(n);
        }
        List<?> dead = redis.execute(SWEEP_NODES, keys, args.toArray());
        if (dead == null || dead.isEmpty()) {
            return 0;
        }
        for (Object d : dead) {
            long users = withdraw(String.valueOf(d));
            log.warn("node " + d + " missed its heartbeats for " + properties.nodeTimeout().toSeconds()
                    + " s: declared dead, its " + users + " connections withdrawn from live delivery (they reconnect and resync)");
        }
        return dead.size();
    }

    @Override
    public long forgetOrphans() {
        return watermark.forgetOrphans();
    }

    @Override
    public synchronized boolean othersTrust(long generation) {
        if (generation != generationSeen) {
            generationSeen = generation;
            generationSeenAt = System.nanoTime();
        }
        return System.nanoTime() - generationSeenAt >= properties.trustTtl().toNanos() && untrustedNodes(generation).isEmpty();
    }

    /** The live nodes that do not say they trust their part of the index under {@code generation} (this node's own word included). */
    List<String> untrustedNodes(long generation) {
        List<?> r = null;
        // a node that joined between the read and the script: read again (trusted.lua answers {-1})
        for (int i = 0; i < 16 && (r == null || r.isEmpty() || ((Number) r.getFirst()).intValue() < 0); i++) {
            Set<String> nodes = redis.opsForZSet().range(RedisKeys.NODES, 0, -1);
            List<String> keys = new ArrayList<>();
            keys.add(RedisKeys.NODES);
            List<String> args = new ArrayList<>();
            args.add(Long.toString(generation));
            for (String n : nodes == null ? Set.<String>of() : nodes) {
                keys.add(trustKey(n));
                args.add(n);
            }
            r = redis.execute(TRUSTED, keys, args.toArray());
        }
        if (r == null || r.isEmpty() || ((Number) r.getFirst()).intValue() < 0) {
            throw new IllegalStateException("trusted.lua answered " + r);
        }
        List<String> untrusted = new ArrayList<>();
        for (int i = 1; i < r.size(); i++) {
            untrusted.add(String.valueOf(r.get(i)));
        }
        if (((Number) r.getFirst()).intValue() == 0) {
            untrusted.add(node);   // not even this node is in wl:nodes yet
        }
        return untrusted;
    }

    @Override
    public void vouch(long generation, Duration ttl) {
        watermark.allTrusted(generation, ttl);
    }

    @Override
    public void withdrawVouch() {
        watermark.notAllTrusted();
    }

    /** The node's departure (see {@link #stop}) withdraws every user it held, in one sweep. */
    @Override
    public void leftUnrecorded() {
        // nothing per connection
    }

    @Override
    public boolean registrationRequired() {
        return true;
    }

    /**
     * One step of the heartbeat loop. A node whose heartbeats have not reached Redis for most of
     * the node timeout will be declared dead by the others, who withdraw its clients: it closes
     * every connection it holds first (1012), so that they reconnect to a node that can serve them
     * rather than stay on one that can neither register nor hand over their deliveries. A Redis
     * that no node can reach thus closes every connection of the cluster; they come back as Redis
     * does (a new connection is refused, 1011, while it cannot be registered).
     */
    private void beatStep() {
        LockSupport.parkNanos(properties.heartbeatInterval().toNanos());
        // half the node timeout: a beat that fails can take a Redis command timeout, and the
        // check comes once a beat; the others declare this node dead only after the whole timeout
        if (!cutOff && System.nanoTime() - lastBeat > properties.nodeTimeout().toNanos() / 2) {
            cutOff = true;
            int closed = closeEverything("this server lost touch with the cluster; reconnect");
            log.warn("no heartbeat of this node (" + node + ") reached Redis for " + properties.nodeTimeout().dividedBy(2)
                    + ": closed its " + closed + " connections (1012) before the cluster declares it dead");
        }
        try {
            beat();
        }
        catch (RuntimeException e) {
            // counted and logged, and no back-off: the next beat is one interval away, as ever
            loops.failed(HEARTBEAT_LOOP, e);
        }
    }

    /** One heartbeat; on finding this node declared dead, the fence (see the class note). */
    void beat() {
        long trusted = health.trustedGeneration();
        List<?> r = redis.execute(HEARTBEAT, List.of(RedisKeys.NODES, tombstone(node), trustKey(node), RedisKeys.GENERATION),
                node, trusted >= 0 ? Long.toString(trusted) : "", Long.toString(properties.trustTtl().toMillis()),
                Long.toString(properties.nodeTimeout().toMillis()));
        if (r == null || r.size() != 2) {
            throw new IllegalStateException("heartbeat.lua answered " + r);
        }
        if (((Number) r.get(0)).intValue() < 0) {
            fence();
            return;
        }
        liveNodes = ((Number) r.get(1)).intValue();
        lastBeat = System.nanoTime();
        cutOff = false;
    }

    /**
     * This node was declared dead (its heartbeats stopped reaching Redis for longer than the node
     * timeout: a pause, a partition) and its connections were withdrawn. Every one it still holds
     * is closed, before the node joins again, so that none of them can come back to live delivery
     * with what it missed meanwhile.
     */
    private void fence() {
        fences.increment();
        int closed = closeEverything("this server was cut off from the cluster; reconnect");
        redis.delete(tombstone(node));
        lastBeat = System.nanoTime();   // Redis answered: no need to close again for want of beats
        cutOff = false;
        log.warn("this node (" + node + ") had been declared dead by the cluster: closed its " + closed
                + " connections (1012), joining again");
    }

    /** Closes every connection this node holds (1012) and distrusts its part of the index; returns how many. */
    private int closeEverything(String reason) {
        int closed = 0;
        for (ClientSession s : sessions.all()) {
            boolean mine = sessions.underUserLock(s.userId(), () -> sessions.unregister(s));
            if (mine) {
                closed++;
            }
            s.close(1012, reason);
        }
        health.suspect();
        return closed;
    }

    @Override
    public void start() {
        running = true;
        // the bus subscribed before: nothing is handed to a node that is not listening yet
        loops.pass(HEARTBEAT_LOOP, this::beat);
        threads.add(loops.start(HEARTBEAT_LOOP, "heartbeat", () -> running, this::beatStep));
    }

    /** Leaves the cluster: this node's users leave live delivery (never an ack), then the node itself. */
    @Override
    public void stop() {
        running = false;
        Workers.stop(threads, Duration.ofSeconds(2));
        threads.clear();
        loops.pass(HEARTBEAT_LOOP, () -> {
            withdraw(node);
            redis.opsForZSet().remove(RedisKeys.NODES, node);
            redis.delete(trustKey(node));
        });
    }

    /**
     * Withdraws every user whose epoch is on {@code node} from live delivery, and says who they
     * were ({@link UsersWithdrawn}: presence takes them offline, unless they are back elsewhere).
     * Returns how many the index took.
     */
    private long withdraw(String node) {
        Set<String> users = watermark.nodeUsers(node);
        long taken = 0;
        long chunk;
        while ((chunk = watermark.withdrawNode(node, 500)) > 0) {
            taken += chunk;
        }
        if (!users.isEmpty()) {
            events.publishEvent(new UsersWithdrawn(node, Set.copyOf(users)));
        }
        return taken;
    }

    @Override
    public boolean isRunning() {
        return running;
    }

    /** Starts before delivery and the gateway, stops after them. */
    @Override
    public int getPhase() {
        return Integer.MAX_VALUE - 250;
    }
}
