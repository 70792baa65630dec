package dev.waterline.history;

import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.util.List;

import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.core.RowMapper;
import org.springframework.stereotype.Repository;

/** Pages a chat's history by seq. */
@Repository
class HistoryRepository {

    /** 1: chat id, 2: the client's last messageId. Scoped to the chat: another chat's id does not resolve. */
    private static final String SEQ_OF_MESSAGE = """
            SELECT seq FROM message_history WHERE chat_id = ? AND message_id = ?
            """;

    /** 1: chat id, 2: exclusive lower seq, 3: rows wanted (one more than the page, to know hasMore). */
    private static final String PAGE_AFTER_SEQ = """
            SELECT message_id, correlation_id, chat_id, seq, sender_id, body, sent_at
            FROM message_history
            WHERE chat_id = ? AND seq > ?
            ORDER BY seq
            LIMIT ?
            """;

    /** 1: cut-off time, 2: chunk size. Deletes the oldest rows first, a chunk at a time. */
    private static final String PURGE_OLDER_THAN = """
            DELETE FROM message_history
            WHERE ctid = ANY (ARRAY(SELECT ctid FROM message_history WHERE sent_at < ? ORDER BY sent_at LIMIT ?))
            """;

    private static final RowMapper<HistoryMessage> MESSAGE = (rs, i) -> new HistoryMessage(
            rs.getString("message_id"), rs.getString("correlation_id"), rs.getString("chat_id"), rs.getLong("seq"),
            rs.getString("sender_id"), rs.getString("body"), rs.getTimestamp("sent_at").toInstant().toString());

    private final JdbcTemplate jdbc;

    HistoryRepository(JdbcTemplate jdbc) {
        this.jdbc = jdbc;
    }

    /** The seq a messageId has in this chat, or 0 (the beginning) when it cannot be resolved. */
    long seqOf(String chatId, String messageId) {
        if (messageId == null || messageId.isEmpty()) {
            return 0;
        }
        return jdbc.queryForList(SEQ_OF_MESSAGE, Long.class, chatId, messageId).stream().findFirst().orElse(0L);
    }

    List<HistoryMessage> after(String chatId, long seq, int rows) {
        return jdbc.query(PAGE_AFTER_SEQ, MESSAGE, chatId, seq, rows);
    }

    int purgeOlderThan(Instant cutoff, int chunk) {
        return jdbc.update(PURGE_OLDER_THAN, Timestamp.from(cutoff), chunk);
    }
}
