package dev.waterline.hooks;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.locks.LockSupport;

import javax.sql.DataSource;

import dev.waterline.lifecycle.Loops;
import dev.waterline.lifecycle.Workers;
import dev.waterline.metrics.WaterlineMetrics;
import io.micrometer.core.instrument.Counter;
import org.springframework.context.SmartLifecycle;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Component;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

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
 * waits for a fan-out in progress, and a fan-out after it finds no hook (H2).
 */
@Component
class OfflineFanouts implements SmartLifecycle {

    static final String LOOP = "hook_fanout";
    static final int SENDERS_PER_PASS = 32;

    /**
     * 1: the sender after which to look, 2: most senders. The oldest fan-out of each sender whose id
     * sorts after the first parameter, by a loose scan of (sender_id, id): one index probe a sender.
     */
    private static final String OLDEST_PER_SENDER = """
            WITH RECURSIVE s AS (
                (SELECT sender_id, id FROM hook_offline_fanouts WHERE sender_id > ? ORDER BY sender_id, id LIMIT 1)
                UNION ALL
                SELECT n.sender_id, n.id FROM s
                CROSS JOIN LATERAL (SELECT f.sender_id, f.id FROM hook_offline_fanouts f
                                    WHERE f.sender_id > s.sender_id ORDER BY f.sender_id, f.id LIMIT 1) n)
            SELECT sender_id, id FROM s LIMIT ?
            """;

    /**
     * 1: fan-out id. Its deliveries, one per recipient, then the row itself: the deliveries and the
     * deletion commit together. The hook is read FOR KEY SHARE (its deletion waits; the recorder's
     * breaker updates, FOR NO KEY UPDATE, do not); a row another node holds is skipped.
     */
    private static final String EXPAND = """
            WITH f AS (
                SELECT * FROM hook_offline_fanouts WHERE id = ? FOR UPDATE SKIP LOCKED),
            h AS (
                SELECT h.hook_id, h.breaker FROM hooks h JOIN f ON h.hook_id = f.hook_id FOR KEY SHARE OF h),
            d AS (
                INSERT INTO hook_deliveries (hook_id, event, message_id, user_id, idempotency_key, payload, status)
                SELECT h.hook_id, 'offline', f.message_id, u.user_id, h.hook_id || ':' || f.message_id || ':' || u.user_id,
                       json_build_object('hookId', h.hook_id, 'event', 'offline', 'userId', u.user_id, 'chatId', f.chat_id,
                           'messageId', f.message_id, 'seq', f.seq)::text,
                       CASE WHEN h.breaker = 'closed' THEN 'pending' ELSE 'held' END
                FROM f JOIN h ON h.hook_id = f.hook_id
                CROSS JOIN LATERAL unnest(f.user_ids) AS u(user_id)
                ON CONFLICT (idempotency_key) WHERE status <> 'dead' DO NOTHING
                RETURNING id),
            gone AS (
                DELETE FROM hook_offline_fanouts x USING f WHERE x.id = f.id RETURNING x.id)
            SELECT (SELECT count(*) FROM gone), ARRAY(SELECT id FROM d)
            """;

    private static final String BACKLOG = """
            SELECT count(*), coalesce(extract(epoch FROM now() - min(created_at)), 0)::bigint FROM hook_offline_fanouts
            """;

    private final JdbcTemplate jdbc;
    private final TransactionTemplate tx;
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

    OfflineFanouts(DataSource dataSource, PlatformTransactionManager transactions, HookWorkers workers, HookMetrics hookMetrics,
                   Loops loops, WaterlineMetrics metrics) {
        this.jdbc = new JdbcTemplate(dataSource);
        this.jdbc.setQueryTimeout(10);
        this.tx = new TransactionTemplate(transactions);
        this.tx.setTimeout(10);
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

    /** A fan-out to expand: whose, and which. */
    private record Next(String sender, long id) {
    }

    /**
     * One pass: the next {@link #SENDERS_PER_PASS} senders' oldest fan-outs, each expanded in its own
     * transaction; returns how many it expanded (a fan-out another node held is not counted).
     * Synchronized: the loop and a test may run passes at once; two nodes' passes meet in the
     * database (SKIP LOCKED) instead.
     */
    synchronized int pass() {
        List<Next> next = new java.util.ArrayList<>(jdbc.query(OLDEST_PER_SENDER,
                (rs, i) -> new Next(rs.getString(1), rs.getLong(2)), cursor, SENDERS_PER_PASS));
        if (next.size() < SENDERS_PER_PASS && !cursor.isEmpty()) {
            // round to the start: the senders up to the cursor, but for those already found
            java.util.Set<String> found = new java.util.HashSet<>();
            next.forEach(n -> found.add(n.sender()));
            for (Next n : jdbc.query(OLDEST_PER_SENDER, (rs, i) -> new Next(rs.getString(1), rs.getLong(2)), "",
                    SENDERS_PER_PASS - next.size())) {
                if (found.add(n.sender())) {
                    next.add(n);
                }
            }
        }
        int expandedNow = 0;
        for (Next n : next) {
            cursor = n.sender();
            try {
                Expanded e = expand(n.id());
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
            jdbc.query(BACKLOG, rs -> {
                backlog = rs.getLong(1);
                oldestSeconds = rs.getLong(2);
            });
        }
        return expandedNow;
    }

    /** What expanding one fan-out did: whether it took the row (another node may hold it), and the deliveries it wrote. */
    private record Expanded(long gone, List<Long> deliveries) {
    }

    /**
     * Expands one fan-out in a transaction of its own, with {@code synchronous_commit = off}: a
     * commit a crash loses takes the deliveries and the row's deletion together, so the row is there
     * to expand again, and nothing is written twice or lost.
     */
    private Expanded expand(long id) {
        return tx.execute(s -> {
            jdbc.execute("SET LOCAL synchronous_commit = off");
            return jdbc.queryForObject(EXPAND, (rs, i) -> {
                Long[] ids = (Long[]) rs.getArray(2).getArray();
                return new Expanded(rs.getLong(1), List.of(ids));
            }, id);
        });
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
