package dev.waterline.hooks;

import java.util.List;

import javax.sql.DataSource;

import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Repository;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * The statements of the offline fan-out ({@link OfflineFanouts}) on {@code hook_offline_fanouts}:
 * the next senders' oldest rows, one row expanded into its deliveries and deleted in a transaction
 * of its own, and the backlog. Every statement is bounded by a query timeout and every
 * transaction by a timeout (10 s), on a template of its own.
 */
@Repository
class OfflineFanoutRepository {

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

    /** A fan-out to expand: whose, and which. */
    record Next(String sender, long id) {
    }

    /** What expanding one fan-out did: whether it took the row (another node may hold it), and the deliveries it wrote. */
    record Expanded(long gone, List<Long> deliveries) {
    }

    /** The fan-outs waiting, and the oldest one's age. */
    record Backlog(long rows, long oldestSeconds) {
    }

    private final JdbcTemplate jdbc;
    private final TransactionTemplate tx;

    OfflineFanoutRepository(DataSource dataSource, PlatformTransactionManager transactions) {
        this.jdbc = new JdbcTemplate(dataSource);
        this.jdbc.setQueryTimeout(10);
        this.tx = new TransactionTemplate(transactions);
        this.tx.setTimeout(10);
    }

    /** The oldest fan-out of each of at most {@code most} senders whose id sorts after {@code after}, in sender order. */
    List<Next> oldestPerSender(String after, int most) {
        return jdbc.query(OLDEST_PER_SENDER, (rs, i) -> new Next(rs.getString(1), rs.getLong(2)), after, most);
    }

    /**
     * Expands one fan-out in a transaction of its own, with {@code synchronous_commit = off}: a
     * commit a crash loses takes the deliveries and the row's deletion together, so the row is there
     * to expand again, and nothing is written twice or lost.
     */
    Expanded expand(long id) {
        return tx.execute(s -> {
            jdbc.execute("SET LOCAL synchronous_commit = off");
            return jdbc.queryForObject(EXPAND, (rs, i) -> {
                Long[] ids = (Long[]) rs.getArray(2).getArray();
                return new Expanded(rs.getLong(1), List.of(ids));
            }, id);
        });
    }

    Backlog backlog() {
        return jdbc.queryForObject(BACKLOG, (rs, i) -> new Backlog(rs.getLong(1), rs.getLong(2)));
    }
}
