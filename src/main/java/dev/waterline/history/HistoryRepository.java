package dev.waterline.history;

import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.core.RowMapper;
import org.springframework.stereotype.Repository;

/** Pages a chat's history by seq. */
@Repository
class HistoryRepository {

    /**
     * One page in one round trip: the membership check, {@code since} resolved to its seq (scoped
     * to the chat, so another chat's id does not resolve; unresolvable means 0, the beginning) and
     * the rows after it, as many as the limit admits but stopping at the first row whose
     * predecessors' bodies (plus ~160 bytes each for ids and field names) already fill the byte
     * budget (the first row always comes). {@code admitted} tells how many rows the limit
     * admitted, so the caller knows whether the budget cut the page. 1: the client's last
     * messageId (or null), 2: rows wanted (one more than the page, to know hasMore), 3: byte
     * budget, 4: chat id, 5: user id. No row at all: not a member; one row of nulls: a member,
     * nothing after {@code since}.
     */
    private static final String PAGE_FOR_MEMBER = """
            SELECT h.message_id, h.correlation_id, h.chat_id, h.seq, h.sender_id, h.body, h.sent_at, h.kind, h.stream_id, h.admitted
            FROM chat_members m
            LEFT JOIN LATERAL (
                SELECT * FROM (
                    SELECT lim.*,
                           sum(octet_length(lim.body) + 160) OVER (ORDER BY lim.seq) - (octet_length(lim.body) + 160) AS before,
                           count(*) OVER () AS admitted
                    FROM (SELECT message_id, correlation_id, chat_id, seq, sender_id, body, sent_at, kind, stream_id
                          FROM message_history
                          WHERE chat_id = m.chat_id
                            AND seq > COALESCE((SELECT seq FROM message_history WHERE chat_id = m.chat_id AND message_id = ?), 0)
                          ORDER BY seq
                          LIMIT ?) lim
                ) w
                WHERE w.before < ?
            ) h ON true
            WHERE m.chat_id = ? AND m.user_id = ?
            ORDER BY h.seq
            """;

    /** 1: cut-off time, 2: chunk size. Deletes the oldest rows first, a chunk at a time. */
    private static final String PURGE_OLDER_THAN = """
            DELETE FROM message_history
            WHERE ctid = ANY (ARRAY(SELECT ctid FROM message_history WHERE sent_at < ? ORDER BY sent_at LIMIT ?))
            """;

    private static final RowMapper<HistoryMessage> MESSAGE = (rs, i) -> new HistoryMessage(
            rs.getString("message_id"), rs.getString("correlation_id"), rs.getString("chat_id"), rs.getLong("seq"),
            rs.getString("sender_id"), rs.getString("body"), rs.getTimestamp("sent_at").toInstant().toString(),
            rs.getString("kind"), rs.getString("stream_id"));

    private final JdbcTemplate jdbc;

    HistoryRepository(JdbcTemplate jdbc) {
        this.jdbc = jdbc;
    }

    /** Messages of a page, and how many the limit admitted before the byte budget cut it. */
    record Rows(List<HistoryMessage> messages, long admitted) {
    }

    /**
     * Up to {@code rows} messages after {@code since} (from the beginning when it is null or does
     * not resolve in this chat), fewer if their bodies pass {@code byteBudget}, or empty when
     * {@code userId} is no member of the chat.
     */
    Optional<Rows> pageForMember(String chatId, String userId, String since, int rows, long byteBudget) {
        List<HistoryMessage> out = new ArrayList<>();
        boolean[] member = {false};
        long[] admitted = {0};
        jdbc.query(PAGE_FOR_MEMBER, rs -> {
            member[0] = true;
            if (rs.getString("message_id") != null) {
                admitted[0] = rs.getLong("admitted");
                out.add(MESSAGE.mapRow(rs, out.size()));
            }
        }, since == null || since.isEmpty() ? null : since, rows, byteBudget, chatId, userId);
        return member[0] ? Optional.of(new Rows(out, admitted[0])) : Optional.empty();
    }

    int purgeOlderThan(Instant cutoff, int chunk) {
        return jdbc.update(PURGE_OLDER_THAN, Timestamp.from(cutoff), chunk);
    }
}
