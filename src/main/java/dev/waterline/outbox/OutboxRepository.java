package dev.waterline.outbox;

import java.time.Duration;
import java.util.List;

import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.core.RowMapper;
import org.springframework.stereotype.Repository;

/** The poller's claims on the outbox and the retirement of finished rows. */
@Repository
public class OutboxRepository {

    /**
     * Claims the oldest due rows: a linear scan by id from {@code floor}, skipping rows another
     * claimer holds, each claimed row leased until now + lease.
     * 1: floor id (inclusive; the reclaim line, 0 for the head), 2: max rows, 3: lease in ms.
     * The scan restarts from the floor every time instead of keeping a cursor: a row whose
     * transaction commits after a higher id was seen would fall behind a cursor forever.
     */
    private static final String CLAIM_DUE = """
            UPDATE outbox o
            SET due_at = now() + (? * interval '1 millisecond')
            FROM (SELECT id FROM outbox
                  WHERE id >= ? AND due_at <= now()
                  ORDER BY id
                  LIMIT ?
                  FOR UPDATE SKIP LOCKED) due
            WHERE o.id = due.id
            RETURNING o.id, o.recipient_id, o.chat_id, o.seq, o.message_id, o.sender_id, o.correlation_id,
                      o.body, o.sent_at, o.created_at, o.attempts
            """;

    /** Rows whose delivery work is over (acked, or recipient offline) are never claimed again; GC reclaims them. 1: bigint[] ids. */
    private static final String RETIRE = """
            UPDATE outbox SET due_at = 'infinity' WHERE id = ANY (?::bigint[])
            """;

    /**
     * The reclaim: deletes the oldest rows below the safe-delete line that are older than the
     * grace, one chunk at a time, in id order. 1: line (exclusive), 2: grace in ms, 3: chunk.
     * Returns how many rows went and the highest id deleted.
     */
    private static final String DELETE_PREFIX = """
            WITH doomed AS (
                SELECT id FROM outbox
                WHERE id < ? AND created_at < now() - (? * interval '1 millisecond')
                ORDER BY id
                LIMIT ?),
            gone AS (DELETE FROM outbox o USING doomed WHERE o.id = doomed.id RETURNING o.id)
            SELECT count(*), COALESCE(max(id), 0) FROM gone
            """;

    /**
     * The age backstop: the oldest rows past the outbox retention, whatever the line. Looks only
     * at the chunk of lowest ids (ids follow insert time), so a pass with nothing that old reads
     * one chunk of the primary key instead of the whole outbox. 1: chunk, 2: cut-off.
     */
    private static final String DELETE_OLDER_THAN = """
            WITH doomed AS (SELECT id FROM (SELECT id, created_at FROM outbox ORDER BY id LIMIT ?) head
                            WHERE created_at < ?),
            gone AS (DELETE FROM outbox o USING doomed WHERE o.id = doomed.id RETURNING o.id)
            SELECT count(*), COALESCE(max(id), 0) FROM gone
            """;

    /** One past the newest row: the safe-delete line when no connected client holds a pin. */
    private static final String HEAD = """
            SELECT COALESCE(max(id), 0) + 1 FROM outbox
            """;

    /** The oldest row still present, or the head when the outbox is empty. */
    private static final String LOWEST = """
            SELECT COALESCE(min(id), (SELECT COALESCE(max(id), 0) + 1 FROM outbox)) FROM outbox
            """;

    /** Every row still in delivery (not retired), for rebuilding the index: a full linear scan. */
    private static final String IN_DELIVERY = """
            SELECT recipient_id, id FROM outbox WHERE due_at <> 'infinity' ORDER BY id
            """;

    /** Counts one more re-send of each row. 1: bigint[] ids. */
    private static final String COUNT_RESEND = """
            UPDATE outbox SET attempts = attempts + 1 WHERE id = ANY (?::bigint[])
            """;

    /**
     * Depth and the oldest row's age without reading the table: three probes of the primary key
     * (the lowest id, its created_at, the highest id). Depth is the span of ids from the oldest
     * row to the newest: exact while the ids are dense, which they are but for the ids of inserts
     * that rolled back (then it is an upper bound by that many). The count(*) and min(created_at)
     * this replaces read the whole outbox every second.
     */
    private static final String STATS = """
            SELECT COALESCE(hi.id - lo.id + 1, 0),
                   COALESCE(EXTRACT(EPOCH FROM now() - lo.created_at), 0)::bigint
            FROM (SELECT 1) one
            LEFT JOIN LATERAL (SELECT id, created_at FROM outbox ORDER BY id LIMIT 1) lo ON true
            LEFT JOIN LATERAL (SELECT id FROM outbox ORDER BY id DESC LIMIT 1) hi ON true
            """;

    private static final RowMapper<OutboxRow> ROW = (rs, i) -> {
        java.time.Instant sentAt = rs.getTimestamp("sent_at").toInstant();
        return new OutboxRow(
                rs.getLong("id"), rs.getString("recipient_id"), rs.getString("chat_id"), rs.getLong("seq"),
                rs.getString("message_id"), rs.getString("sender_id"), rs.getString("correlation_id"),
                rs.getString("body"), sentAt.toString(), rs.getTimestamp("created_at").getTime(), rs.getInt("attempts"));
    };

    private final JdbcTemplate jdbc;

    OutboxRepository(JdbcTemplate jdbc) {
        this.jdbc = jdbc;
    }

    /** Claims up to {@code max} due rows at or above {@code floor}, oldest first. */
    public List<OutboxRow> claimDue(long floor, int max, Duration lease) {
        List<OutboxRow> rows = jdbc.query(CLAIM_DUE, ROW, lease.toMillis(), floor, max);
        rows.sort((a, b) -> Long.compare(a.id(), b.id()));
        return rows;
    }

    /** Counts a re-send of each of these rows (the attempts reaper reads the count). */
    public void countResends(long[] ids) {
        if (ids.length > 0) {
            jdbc.update(COUNT_RESEND, (Object) ids);
        }
    }

    public void retire(long[] ids) {
        if (ids.length > 0) {
            jdbc.update(RETIRE, (Object) ids);
        }
    }

    /** Result of one delete: rows deleted and the highest id among them (0 when none). */
    public record Deleted(long rows, long maxId) {
    }

    public Deleted deletePrefix(long line, Duration grace, int chunk) {
        return jdbc.queryForObject(DELETE_PREFIX, (rs, i) -> new Deleted(rs.getLong(1), rs.getLong(2)),
                line, grace.toMillis(), chunk);
    }

    public Deleted deleteOlderThan(java.time.Instant cutoff, int chunk) {
        return jdbc.queryForObject(DELETE_OLDER_THAN, (rs, i) -> new Deleted(rs.getLong(1), rs.getLong(2)),
                chunk, java.sql.Timestamp.from(cutoff));
    }

    /** The lowest id still in the outbox (the head when it is empty): no row lies below it. */
    public long lowest() {
        Long lowest = jdbc.queryForObject(LOWEST, Long.class);
        return lowest == null ? 0 : lowest;
    }

    public long head() {
        Long head = jdbc.queryForObject(HEAD, Long.class);
        return head == null ? 1 : head;
    }

    /** Rows still in delivery for some users, and the highest id the scan saw (0 when none). */
    public record InDelivery(java.util.Map<String, List<Long>> byRecipient, long highestId) {
    }

    /** Rows still in delivery, by recipient, for the users {@code wanted} accepts. */
    public InDelivery inDelivery(java.util.function.Predicate<String> wanted) {
        java.util.Map<String, List<Long>> out = new java.util.HashMap<>();
        long[] highest = {0};
        jdbc.query(IN_DELIVERY, rs -> {
            String user = rs.getString(1);
            long id = rs.getLong(2);
            highest[0] = Math.max(highest[0], id);
            if (wanted.test(user)) {
                out.computeIfAbsent(user, k -> new java.util.ArrayList<>()).add(id);
            }
        });
        return new InDelivery(out, highest[0]);
    }

    /** Depth and age in seconds of the oldest row. */
    public long[] stats() {
        return jdbc.queryForObject(STATS, (rs, i) -> new long[] {rs.getLong(1), rs.getLong(2)});
    }
}
