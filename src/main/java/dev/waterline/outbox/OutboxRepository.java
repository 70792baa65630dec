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
     * claimer holds, each claimed row leased until now + lease and its attempt counted.
     * 1: floor id (inclusive; the reclaim line, 0 for the head), 2: max rows, 3: lease in ms.
     * The scan restarts from the floor every time instead of keeping a cursor: a row whose
     * transaction commits after a higher id was seen would fall behind a cursor forever.
     */
    private static final String CLAIM_DUE = """
            UPDATE outbox o
            SET due_at = now() + (? * interval '1 millisecond'), attempts = o.attempts + 1
            FROM (SELECT id FROM outbox
                  WHERE id >= ? AND due_at <= now()
                  ORDER BY id
                  LIMIT ?
                  FOR UPDATE SKIP LOCKED) due
            WHERE o.id = due.id
            RETURNING o.id, o.recipient_id, o.chat_id, o.seq, o.message_id, o.sender_id, o.correlation_id,
                      o.body, o.sent_at, o.attempts
            """;

    /** Rows whose delivery work is over (acked, or recipient offline) are never claimed again; GC reclaims them. 1: bigint[] ids. */
    private static final String RETIRE = """
            UPDATE outbox SET due_at = 'infinity' WHERE id = ANY (?::bigint[])
            """;

    private static final String STATS = """
            SELECT count(*), COALESCE(EXTRACT(EPOCH FROM now() - min(created_at)), 0)::bigint FROM outbox
            """;

    private static final RowMapper<OutboxRow> ROW = (rs, i) -> new OutboxRow(
            rs.getLong("id"), rs.getString("recipient_id"), rs.getString("chat_id"), rs.getLong("seq"),
            rs.getString("message_id"), rs.getString("sender_id"), rs.getString("correlation_id"),
            rs.getString("body"), rs.getTimestamp("sent_at").toInstant().toString(), rs.getInt("attempts"));

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

    public void retire(long[] ids) {
        if (ids.length > 0) {
            jdbc.update(RETIRE, (Object) ids);
        }
    }

    /** Depth and age in seconds of the oldest row. */
    public long[] stats() {
        return jdbc.queryForObject(STATS, (rs, i) -> new long[] {rs.getLong(1), rs.getLong(2)});
    }
}
