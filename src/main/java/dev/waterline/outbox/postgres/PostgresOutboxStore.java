package dev.waterline.outbox.postgres;

import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Predicate;

import dev.waterline.commit.ChatMessage;
import dev.waterline.commit.EntryFields;
import dev.waterline.commit.Transaction;
import dev.waterline.outbox.OutboxRow;
import dev.waterline.outbox.OutboxStore;
import dev.waterline.sql.SqlTransaction;
import dev.waterline.sql.Statement;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.core.RowMapper;
import org.springframework.stereotype.Repository;

/**
 * {@link OutboxStore} on PostgreSQL's {@code outbox} table (V1, V3): the rows are appended in the
 * group commit's transaction, claimed by the pollers with {@code FOR UPDATE SKIP LOCKED}, and
 * deleted by reclaim in id order. No index but the primary key: every statement here reads the
 * table in id order.
 */
@Repository
class PostgresOutboxStore implements OutboxStore {

    /**
     * The row's age is measured from this insert, moments before commit (clock_timestamp, not the
     * transaction's start), since the reclaim grace covers a row's way from commit to first pin.
     * 1: sent_at, 2: first due time in ms from now (the fast path's window: one lease),
     * 3..11: pairwise arrays of recipient, chat id, seq, message id, sender, correlation id, body,
     * kind, the entry's frame fields (EntryFields; null for a plain text message).
     */
    private static final String APPEND = """
            INSERT INTO outbox (recipient_id, chat_id, seq, message_id, sender_id, correlation_id, body, sent_at,
                                created_at, due_at, kind, extra)
            SELECT recipient_id, chat_id, seq, message_id, sender_id, correlation_id, body, ?,
                   clock_timestamp(), clock_timestamp() + (? * interval '1 millisecond'), kind, extra
            FROM unnest(?::text[], ?::text[], ?::bigint[], ?::text[], ?::text[], ?::text[], ?::text[], ?::text[], ?::text[])
                 AS o(recipient_id, chat_id, seq, message_id, sender_id, correlation_id, body, kind, extra)
            RETURNING id, recipient_id, message_id
            """;

    /**
     * 1: text[] message ids. A scan of the outbox (it has no index but its id, on purpose: every
     * message would pay for one, and a delete is rare); the table holds only what is in delivery or
     * waiting for reclaim. The rows are locked in id order, the order reclaim deletes in, so the two
     * never wait on each other crosswise.
     */
    private static final String ERASE = """
            UPDATE outbox o SET body = '', extra = CASE WHEN o.kind = 'text' THEN NULL ELSE o.extra END
            FROM (SELECT id FROM outbox
                  WHERE message_id = ANY (?::text[]) AND (body <> '' OR (kind = 'text' AND extra IS NOT NULL))
                  ORDER BY id FOR UPDATE) doomed
            WHERE o.id = doomed.id
            """;

    /**
     * Claims the oldest due rows: a linear scan by id from {@code floor}, skipping rows another
     * claimer holds, each claimed row leased until now + lease.
     * 1: lease in ms, 2: floor id (inclusive: no row lies below it), 3: max rows.
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
                      o.body, o.sent_at, o.created_at, o.attempts, o.kind, o.stream_id, o.extra
            """;

    /** Rows whose delivery work is over (acked, or recipient offline) are never claimed again; GC reclaims them. 1: bigint[] ids. */
    private static final String RETIRE = """
            UPDATE outbox SET due_at = 'infinity' WHERE id = ANY (?::bigint[])
            """;

    /**
     * The reclaim: deletes the oldest rows below the safe-delete line that are older than the
     * grace, one chunk at a time, in id order. 1: line (exclusive), 2: grace in ms, 3: chunk.
     * Returns how many rows went.
     */
    private static final String DELETE_PREFIX = """
            WITH doomed AS (
                SELECT id FROM outbox
                WHERE id < ? AND created_at < now() - (? * interval '1 millisecond')
                ORDER BY id
                LIMIT ?),
            gone AS (DELETE FROM outbox o USING doomed WHERE o.id = doomed.id RETURNING o.id)
            SELECT count(*) FROM gone
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
            SELECT count(*) FROM gone
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
        Instant sentAt = rs.getTimestamp("sent_at").toInstant();
        ChatMessage message = new ChatMessage(rs.getString("chat_id"), rs.getLong("seq"), rs.getString("message_id"),
                rs.getString("sender_id"), rs.getString("correlation_id"), rs.getString("body"), rs.getString("kind"),
                fields(rs.getString("extra"), rs.getString("stream_id")));
        return new OutboxRow(rs.getLong("id"), rs.getString("recipient_id"), message, sentAt.toString(),
                rs.getTimestamp("created_at").getTime(), rs.getInt("attempts"));
    };

    @Override
    public void erase(List<String> messageIds, Transaction tx) {
        tx.unwrap(SqlTransaction.class).add(Statement.of(ERASE, null, (Object) messageIds.toArray(String[]::new)));
    }

    /** A row's frame fields; a row written before the chat log's entries (V13) names only its stream. */
    private static String fields(String extra, String streamId) {
        return extra != null || streamId == null ? extra : EntryFields.stream(streamId);
    }

    private final JdbcTemplate jdbc;
    /** No row lies below this id: where claims start. */
    private final AtomicLong floor = new AtomicLong();

    PostgresOutboxStore(JdbcTemplate jdbc) {
        this.jdbc = jdbc;
    }

    @Override
    public Append append(List<Delivery> deliveries, Instant sentAt, Duration firstDue) {
        int n = deliveries.size();
        String[] recipient = new String[n], chat = new String[n], message = new String[n], sender = new String[n],
                correlation = new String[n], body = new String[n], kind = new String[n], stream = new String[n];
        long[] seq = new long[n];
        Map<String, Integer> index = new HashMap<>(n * 2);
        for (int i = 0; i < n; i++) {
            Delivery d = deliveries.get(i);
            ChatMessage m = d.message();
            recipient[i] = d.recipientId();
            chat[i] = m.chatId();
            seq[i] = m.seq();
            message[i] = m.messageId();
            sender[i] = m.senderId();
            correlation[i] = m.correlationId();
            body[i] = m.body();
            kind[i] = m.kind();
            stream[i] = m.fields();
            index.put(key(m.messageId(), d.recipientId()), i);
        }
        long[] ids = new long[n];
        int[] returned = {0};
        String sentAtText = sentAt.toString();
        // RETURNING promises no order: each row is matched back to its delivery by (message, recipient)
        Statement insert = Statement.of(APPEND, rs -> {
            ids[index.get(key(rs.getString(3), rs.getString(2)))] = rs.getLong(1);
            returned[0]++;
        }, Timestamp.from(sentAt), firstDue.toMillis(), recipient, chat, seq, message, sender, correlation, body, kind,
                stream);
        return new Append() {
            @Override
            public void joinCommit(Transaction tx) {
                tx.unwrap(SqlTransaction.class).add(insert);
            }

            @Override
            public List<OutboxRow> rows(long committedAtMillis) {
                if (returned[0] != n) {
                    throw new IllegalStateException("the outbox insert returned " + returned[0] + " rows for " + n + " deliveries");
                }
                List<OutboxRow> rows = new ArrayList<>(n);
                for (int i = 0; i < n; i++) {
                    Delivery d = deliveries.get(i);
                    rows.add(new OutboxRow(ids[i], d.recipientId(), d.message(), sentAtText, committedAtMillis, 0));
                }
                return rows;
            }
        };
    }

    private static String key(String messageId, String recipient) {
        return messageId + '\u0000' + recipient;
    }

    @Override
    public List<OutboxRow> claimDue(int max, Duration lease) {
        List<OutboxRow> rows = jdbc.query(CLAIM_DUE, ROW, lease.toMillis(), floor.get(), max);
        rows.sort((a, b) -> Long.compare(a.id(), b.id()));
        return rows;
    }

    @Override
    public void countResends(long[] ids) {
        if (ids.length > 0) {
            jdbc.update(COUNT_RESEND, (Object) ids);
        }
    }

    @Override
    public void retire(long[] ids) {
        if (ids.length > 0) {
            jdbc.update(RETIRE, (Object) ids);
        }
    }

    @Override
    public long deleteBelow(long line, Duration grace, int chunk) {
        Long deleted = jdbc.queryForObject(DELETE_PREFIX, Long.class, line, grace.toMillis(), chunk);
        return deleted == null ? 0 : deleted;
    }

    @Override
    public long deleteOlderThan(Instant cutoff, int chunk) {
        Long deleted = jdbc.queryForObject(DELETE_OLDER_THAN, Long.class, chunk, Timestamp.from(cutoff));
        return deleted == null ? 0 : deleted;
    }

    /**
     * The oldest row left, not the highest id deleted: a young row may sit below that. A row not
     * yet committed could still appear below it only from a transaction open longer than the
     * grace (ingest's last milliseconds), and such a row would only miss its poller re-sends (it is
     * in history, and pinned if its recipient is connected).
     */
    @Override
    public void refreshFloor() {
        Long lowest = jdbc.queryForObject(LOWEST, Long.class);
        floor.set(lowest == null ? 0 : lowest);
    }

    @Override
    public long head() {
        Long head = jdbc.queryForObject(HEAD, Long.class);
        return head == null ? 1 : head;
    }

    @Override
    public InDelivery inDelivery(Predicate<String> wanted) {
        Map<String, List<Long>> out = new HashMap<>();
        long[] highest = {0};
        jdbc.query(IN_DELIVERY, rs -> {
            String user = rs.getString(1);
            long id = rs.getLong(2);
            highest[0] = Math.max(highest[0], id);
            if (wanted.test(user)) {
                out.computeIfAbsent(user, k -> new ArrayList<>()).add(id);
            }
        });
        return new InDelivery(out, highest[0]);
    }

    @Override
    public Stats stats() {
        return jdbc.queryForObject(STATS, (rs, i) -> new Stats(rs.getLong(1), rs.getLong(2)));
    }
}
