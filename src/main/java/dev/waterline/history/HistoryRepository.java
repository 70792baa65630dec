package dev.waterline.history;

import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import dev.waterline.sql.Statements;

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
            SELECT h.message_id, h.correlation_id, h.chat_id, h.seq, h.sender_id, h.body, h.sent_at, h.kind, h.stream_id,
                   h.reply_to, h.target_id, h.emoji, h.reaction_on, h.edited_at, h.deleted_seq, h.admitted
            FROM chat_members m
            LEFT JOIN LATERAL (
                SELECT * FROM (
                    SELECT lim.*,
                           sum(octet_length(lim.body) + 160) OVER (ORDER BY lim.seq) - (octet_length(lim.body) + 160) AS before,
                           count(*) OVER () AS admitted
                    FROM (SELECT message_id, correlation_id, chat_id, seq, sender_id, body, sent_at, kind, stream_id,
                                 reply_to, target_id, emoji, reaction_on, edited_at, deleted_seq
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

    /** 1: user id, 2: chat id, 3: message id. One entry, for a member of its chat only. */
    private static final String ONE_FOR_MEMBER = """
            SELECT h.message_id, h.correlation_id, h.chat_id, h.seq, h.sender_id, h.body, h.sent_at, h.kind, h.stream_id,
                   h.reply_to, h.target_id, h.emoji, h.reaction_on, h.edited_at, h.deleted_seq
            FROM message_history h
            JOIN chat_members m ON m.chat_id = h.chat_id AND m.user_id = ?
            WHERE h.chat_id = ? AND h.message_id = ?
            """;

    /**
     * The current state of a page's text entries, in one round trip whatever the page's size: the
     * reactions counted per (message, emoji), with whether the reader is among them, in the order
     * each emoji was first put on (message_reactions' key: chat, message); and the files, in their
     * order (attachments_of_message). 1: reader, 2: chat id, 3: bigint[] seqs; 4: chat id, 5: bigint[] seqs.
     */
    private static final String STATE_OF_TEXTS = """
            SELECT target_seq, emoji, count(*), bool_or(user_id = ?)
            FROM message_reactions WHERE chat_id = ? AND target_seq = ANY (?::bigint[])
            GROUP BY target_seq, emoji ORDER BY target_seq, min(entry_seq);
            SELECT message_seq, attachment_id, content_type, size, name, sha256
            FROM attachments WHERE chat_id = ? AND message_seq = ANY (?::bigint[])
            ORDER BY message_seq, position
            """;

    /** 1: cut-off time, 2: chunk size. Deletes the oldest rows first, a chunk at a time. */
    private static final String PURGE_OLDER_THAN = """
            DELETE FROM message_history
            WHERE ctid = ANY (ARRAY(SELECT ctid FROM message_history WHERE sent_at < ? ORDER BY sent_at LIMIT ?))
            """;

    private static final RowMapper<HistoryMessage> MESSAGE = (rs, i) -> {
        boolean text = "text".equals(rs.getString("kind"));
        java.sql.Timestamp edited = rs.getTimestamp("edited_at");
        Object on = rs.getObject("reaction_on");
        return new HistoryMessage(
                rs.getString("message_id"), rs.getString("correlation_id"), rs.getString("chat_id"), rs.getLong("seq"),
                rs.getString("sender_id"), rs.getString("body"), rs.getTimestamp("sent_at").toInstant().toString(),
                rs.getString("kind"), rs.getString("stream_id"), rs.getString("reply_to"), rs.getString("target_id"),
                rs.getString("emoji"), on == null ? null : (Boolean) on, edited == null ? null : edited.toInstant().toString(),
                text ? rs.getObject("deleted_seq") != null : null, null, null, null, null);
    };

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
        return member[0] ? Optional.of(new Rows(current(chatId, userId, out), admitted[0])) : Optional.empty();
    }

    /** Entry {@code messageId} of {@code chatId} in its current state, or empty when it is not there or {@code userId} is no member. */
    Optional<HistoryMessage> oneForMember(String chatId, String userId, String messageId) {
        List<HistoryMessage> found = jdbc.query(ONE_FOR_MEMBER, MESSAGE, userId, chatId, messageId);
        return found.isEmpty() ? Optional.empty() : Optional.of(current(chatId, userId, found).getFirst());
    }

    /** {@code page} with each text entry's reactions and files, read for the whole page at once. */
    private List<HistoryMessage> current(String chatId, String reader, List<HistoryMessage> page) {
        long[] texts = page.stream().filter(m -> "text".equals(m.kind())).mapToLong(HistoryMessage::seq).toArray();
        if (texts.length == 0) {
            return page;
        }
        Map<Long, Map<String, Long>> counts = new HashMap<>();
        Map<Long, List<String>> mine = new HashMap<>();
        Map<Long, List<HistoryMessage.Attachment>> files = new HashMap<>();
        Statements.run(jdbc, STATE_OF_TEXTS, List.of(
                rs -> {
                    long seq = rs.getLong(1);
                    counts.computeIfAbsent(seq, k -> new LinkedHashMap<>()).put(rs.getString(2), rs.getLong(3));
                    if (rs.getBoolean(4)) {
                        mine.computeIfAbsent(seq, k -> new ArrayList<>()).add(rs.getString(2));
                    }
                },
                rs -> files.computeIfAbsent(rs.getLong(1), k -> new ArrayList<>()).add(new HistoryMessage.Attachment(
                        rs.getString(2), rs.getString(3), rs.getLong(4), rs.getString(5), rs.getString(6)))),
                reader, chatId, texts, chatId, texts);
        List<HistoryMessage> out = new ArrayList<>(page.size());
        for (HistoryMessage m : page) {
            out.add(!"text".equals(m.kind()) ? m : m.decorated(counts.getOrDefault(m.seq(), Map.of()),
                    mine.getOrDefault(m.seq(), List.of()), files.getOrDefault(m.seq(), List.of())));
        }
        return out;
    }

    int purgeOlderThan(Instant cutoff, int chunk) {
        return jdbc.update(PURGE_OLDER_THAN, Timestamp.from(cutoff), chunk);
    }
}
