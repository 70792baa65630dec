package dev.waterline.watermark;

import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.OptionalLong;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

import dev.waterline.metrics.WaterlineMetrics;
import dev.waterline.outbox.OutboxRepository;
import dev.waterline.session.ClientSession;
import dev.waterline.session.SessionRegistry;
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
 * this process must have rebuilt the index since it started. If not, the pass rebuilds the index
 * from a full scan of the outbox and deletes nothing. Otherwise it reads the line (the lowest pin
 * over connected clients, or the outbox head when no one holds a pin: offline recipients hold
 * nothing down), checks the marker again (a Redis that was flushed in between is caught here),
 * moves the marker on in both stores, and deletes, in bounded chunks and id order, rows below the
 * line that are older than the grace; then the age backstop deletes rows past the outbox
 * retention whatever the line.
 *
 * <p>On any error (Redis or PostgreSQL) the pass stops where it is; nothing is deleted after an
 * error, and a Redis error before the deletes means nothing is deleted at all. Stops with the
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

    private final ReclaimProperties properties;
    private final Duration outboxRetention;
    private final WatermarkIndex watermark;
    private final MarkerStore markers;
    private final OutboxRepository outbox;
    private final SessionRegistry sessions;
    private final WaterlineMetrics metrics;
    private final Clock clock;
    private final Counter reclaimedByLine;
    private final Counter reclaimedByAge;
    private final Counter rebuilds;
    private final AtomicLong floor = new AtomicLong();
    private volatile boolean primed;
    private volatile boolean running;
    private Thread thread;

    Reclaim(ReclaimProperties properties, @Value("${waterline.retention.outbox:26h}") Duration outboxRetention,
            WatermarkIndex watermark, MarkerStore markers, OutboxRepository outbox, SessionRegistry sessions,
            WaterlineMetrics metrics, Clock clock) {
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

    /** Every id below this is gone from the outbox: where the poller's scans may start. */
    public long floor() {
        return floor.get();
    }

    /** One GC pass. Returns rows deleted. */
    public long pass() {
        long expected = markers.token();
        Long held = watermark.marker();
        if (!primed || !Objects.equals(held, expected)) {
            rebuild(expected, held);
            return 0;
        }
        OptionalLong pin = watermark.lowestPin();
        long head = outbox.head();
        long line = pin.isPresent() ? Math.min(pin.getAsLong(), head) : head;
        if (!Objects.equals(watermark.marker(), expected)) {
            return 0;
        }
        long next = expected + 1;
        markers.token(next);
        watermark.marker(next);
        metrics.safeDeleteId(line);

        long deleted = 0;
        for (int i = 0; i < properties.maxChunksPerPass(); i++) {
            OutboxRepository.Deleted d = outbox.deletePrefix(line, properties.grace(), properties.chunk());
            deleted += d.rows();
            reclaimedByLine.increment(d.rows());
            floor.accumulateAndGet(d.maxId() + 1, Math::max);
            if (d.rows() < properties.chunk()) {
                break;
            }
        }
        for (int i = 0; i < properties.maxChunksPerPass(); i++) {
            OutboxRepository.Deleted d = outbox.deleteOlderThan(clock.instant().minus(outboxRetention), properties.chunk());
            deleted += d.rows();
            reclaimedByAge.increment(d.rows());
            floor.accumulateAndGet(d.maxId() + 1, Math::max);
            if (d.rows() < properties.chunk()) {
                break;
            }
        }
        return deleted;
    }

    /**
     * Rebuilds the index from the outbox: every connected client gets, as pending, every row of
     * its still in delivery (conservative: some may have been acked, and are delivered and acked
     * again); users that hold a pin but have no connection here lose it. Then the marker is set
     * in both stores and reclaim may resume.
     */
    void rebuild(long expected, Long held) {
        Map<String, List<Long>> inDelivery = outbox.inDelivery(user -> sessions.get(user) != null);
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
            long[] ids = inDelivery.getOrDefault(s.userId(), List.of()).stream().mapToLong(Long::longValue).toArray();
            connections += sessions.underUserLock(s.userId(), () -> {
                if (!sessions.isCurrent(s)) {
                    return 0;
                }
                watermark.rebuildUser(s, ids);
                return 1;
            });
        }
        long next = expected + 1;
        markers.token(next);
        watermark.marker(next);
        primed = true;
        rebuilds.increment();
        log.info("watermark index rebuilt from the outbox for " + connections + " connections ("
                + (held == null ? "Redis held no marker" : "Redis held marker " + held + ", expected " + expected) + ")");
    }

    private void loop() {
        long pause = properties.interval().toNanos();
        while (running) {
            try {
                pass();
            }
            catch (RuntimeException e) {
                log.warn("reclaim pass stopped, nothing more deleted this pass: " + e.getMessage());
            }
            LockSupport.parkNanos(pause);
        }
    }

    @Override
    public void start() {
        running = true;
        if (properties.enabled()) {
            thread = Thread.ofVirtual().name("outbox-reclaim").start(this::loop);
        }
    }

    @Override
    public void stop() {
        running = false;
        if (thread != null) {
            LockSupport.unpark(thread);
            try {
                thread.join(5000);
            }
            catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
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
