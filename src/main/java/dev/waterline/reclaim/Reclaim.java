package dev.waterline.reclaim;

import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.OptionalLong;
import java.util.concurrent.locks.LockSupport;

import dev.waterline.lifecycle.Loops;
import dev.waterline.lifecycle.Workers;
import dev.waterline.metrics.WaterlineMetrics;
import dev.waterline.outbox.OutboxStore;
import dev.waterline.session.ClientSession;
import dev.waterline.session.SessionRegistry;
import dev.waterline.watermark.IndexHealth;
import dev.waterline.watermark.WatermarkIndex;
import io.micrometer.core.instrument.Counter;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.context.SmartLifecycle;
import org.springframework.stereotype.Component;

/**
 * Outbox GC ("Tetris"): deletes the outbox prefix below the safe-delete line.
 *
 * <p>Loop (one virtual thread, every {@code interval}): one {@link #pass()}. A pass first asks
 * whether the Redis index can be trusted: Redis must hold the marker token PostgreSQL holds, and
 * {@link IndexHealth} must trust it under that marker (it does not from start until the first
 * rebuild, nor after a Redis error in the live path). If not, the pass rebuilds the index from a
 * full scan of the outbox and deletes nothing. Otherwise it reads the line (the lowest pin over
 * connected clients, or the outbox head when no one holds a pin: offline recipients hold nothing
 * down), moves the marker on with a compare-and-set (a Redis flushed or rolled back since the
 * first read fails it, and nothing is deleted), and deletes, in bounded chunks and id order, rows
 * below the line that are older than the grace; then the age backstop deletes rows past the
 * outbox retention whatever the line.
 *
 * <p>On any error (Redis or PostgreSQL) the pass stops where it is (logged and counted by
 * {@link Loops}, {@code reclaim}); nothing is deleted after an error, and a Redis error before the
 * deletes means nothing is deleted at all. Stops with the
 * context. Keeps I2: a row goes only when no connected client has it pending, so its recipient
 * acked it, was withdrawn, or was never connected to get it live (and recovers it from history).
 * The rotating marker closes the gap of a Redis that loses data but keeps a marker (a stale
 * replica or an older snapshot holds an older token). What it cannot see is a Redis that loses
 * writes made after the current token while keeping it, within one interval; the grace bounds
 * which rows that could touch.
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
    private final WaterlineMetrics metrics;
    private final IndexHealth health;
    private final Clock clock;
    private final Counter reclaimedByLine;
    private final Counter reclaimedByAge;
    private final Counter rebuilds;
    private volatile boolean running;
    private Thread thread;

    Reclaim(ReclaimProperties properties, @Value("${waterline.retention.outbox:26h}") Duration outboxRetention,
            WatermarkIndex watermark, MarkerStore markers, OutboxStore outbox, SessionRegistry sessions,
            WaterlineMetrics metrics, IndexHealth health, Loops loops, Clock clock) {
        this.loops = loops;
        this.health = health;
        this.properties = properties;
        this.outboxRetention = outboxRetention;
        this.watermark = watermark;
        this.markers = markers;
        this.outbox = outbox;
        this.sessions = sessions;
        this.metrics = metrics;
        this.clock = clock;
        this.reclaimedByLine = metrics.counter("waterline.outbox.reclaimed", "outbox rows deleted below the safe-delete line");
        this.reclaimedByAge = metrics.counter("waterline.outbox.reclaimed.backstop", "outbox rows deleted by the age backstop");
        this.rebuilds = metrics.counter("waterline.watermark.rebuilds", "rebuilds of the Redis index from the outbox");
    }

    /** One GC pass. Returns rows deleted. */
    public long pass() {
        long seen = health.suspicions();
        long expected = markers.token();
        Long held = watermark.marker();
        if (health.trustedMarker() != expected || !Objects.equals(held, expected)) {
            rebuild(expected, held);
            return 0;
        }
        OptionalLong pin = watermark.lowestPin();
        long head = outbox.head();
        long line = pin.isPresent() ? Math.min(pin.getAsLong(), head) : head;
        long next = expected + 1;
        // Compare-and-set: a Redis flushed or rolled back since the first read no longer holds
        // the expected marker, and then the pins just read prove nothing.
        if (!watermark.rotateMarker(expected, next)) {
            health.suspect();
            return 0;
        }
        markers.token(next);
        if (!health.trust(next, seen)) {
            return 0;
        }
        metrics.safeDeleteId(line);

        long deleted = 0;
        for (int i = 0; i < properties.maxChunksPerPass(); i++) {
            long rows = outbox.deleteBelow(line, properties.grace(), properties.chunk());
            deleted += rows;
            reclaimedByLine.increment(rows);
            if (rows < properties.chunk()) {
                break;
            }
        }
        for (int i = 0; i < properties.maxChunksPerPass(); i++) {
            long rows = outbox.deleteOlderThan(clock.instant().minus(outboxRetention), properties.chunk());
            deleted += rows;
            reclaimedByAge.increment(rows);
            if (rows < properties.chunk()) {
                break;
            }
        }
        if (deleted > 0) {
            outbox.refreshFloor();
        }
        return deleted;
    }

    /**
     * Rebuilds the index from the outbox. The index is distrusted first (the poller retires no
     * row of a connected client meanwhile) and Redis holds a sentinel marker. Every connected
     * client is then given, as owed, every row of its still in delivery (conservative: some may
     * have been acked, and are written and acked again), and loses pending or owed ids the scan
     * did not find; users that hold a pin but have no connection here lose it. Only if the
     * sentinel is still in Redis at the end (no flush meanwhile) and nothing was suspected
     * meanwhile is the index trusted again under the new marker.
     */
    void rebuild(long expected, Long held) {
        health.suspect();
        long seen = health.suspicions();
        long next = expected + 1;
        long sentinel = -next;
        watermark.marker(sentinel);
        OutboxStore.InDelivery scan = outbox.inDelivery(user -> sessions.get(user) != null);
        for (String user : watermark.pinnedUsers()) {
            sessions.underUserLock(user, () -> {
                if (sessions.get(user) == null) {
                    watermark.forgetUser(user);
                }
                return null;
            });
        }
        int connections = 0;
        for (ClientSession s : sessions.all()) {
            long[] ids = scan.byRecipient().getOrDefault(s.userId(), List.of()).stream().mapToLong(Long::longValue).toArray();
            connections += sessions.underUserLock(s.userId(), () -> {
                if (!sessions.isCurrent(s)) {
                    return 0;
                }
                watermark.rebuildUser(s, scan.highestId(), ids);
                return 1;
            });
        }
        if (!watermark.rotateMarker(sentinel, next)) {
            log.warn("Redis lost the rebuild's sentinel marker; rebuilding again on the next pass");
            return;
        }
        markers.token(next);
        rebuilds.increment();
        boolean trusted = health.trust(next, seen);
        log.info("watermark index rebuilt from the outbox for " + connections + " connections ("
                + (held == null ? "Redis held no marker" : "Redis held marker " + held + ", expected " + expected) + ")"
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
