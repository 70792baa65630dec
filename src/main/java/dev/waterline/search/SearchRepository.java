package dev.waterline.search;

import java.sql.SQLException;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.List;

import org.springframework.dao.DataAccessException;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.core.RowMapper;
import org.springframework.stereotype.Repository;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * The search's statements (V15's index, PROTOCOL.md §10). One search is one short transaction: the
 * first statement sets its limits and answers whether the query has words and the caller may read
 * the chat it names; the second finds the page.
 */
@Repository
class SearchRepository {

    /**
     * Transaction-local, so they end with the search: the statement timeout, and custom plans for
     * every execution (a generic plan, which the driver's prepared statements would get after five
     * runs, could not see the words, and one plan for every word is wrong for rare or common ones).
     * Then whether the query keeps any word once parsed (punctuation alone, or only stop words of
     * the configuration, keep none), and whether the caller is a member of the chat it names.
     * 1: timeout in ms, 2: q, 3, 4: chat id or null, 5: user id.
     */
    private static final String PREPARE = """
            SELECT set_config('statement_timeout', ?, true),
                   set_config('plan_cache_mode', 'force_custom_plan', true),
                   numnode(websearch_to_tsquery(waterline_search_config(), ?)) > 0 AS has_words,
                   ?::text IS NULL OR EXISTS (SELECT 1 FROM chat_members WHERE chat_id = ? AND user_id = ?) AS member
            """;

    /**
     * One page of matches, newest first, then the snippets of that page only (ts_headline reads a
     * whole body, so never for a candidate the LIMIT drops).
     * <p>
     * {@code readable}: the chats the caller may search, and from which seq. Today every member
     * reads a chat's whole retained history (PROTOCOL.md §11's visibility {@code "all"}, the only
     * one served), so from_seq is 0. When {@code "joined"} is served, from_seq becomes the seq of
     * the member's {@code joined} entry for such a chat; when leaving is, a chat left stops at the
     * {@code left} entry's seq (a to_seq beside from_seq) — this CTE is the one place either goes.
     * <p>
     * The text condition is the index's expression (V15), so the planner may read the index, and
     * it picks between two plans by the words' frequencies (the index expression's statistics): for
     * rare words, the index's few matches, sorted; for common ones, a walk back through
     * {@code message_history_sent_at} that stops at the page's last match. A deleted message has
     * no text left (its body is erased) and is also excluded by its mark; an edited one is found by
     * its body, which the last edit rewrote.
     * <p>
     * 1: user id, 2, 3: chat id or null; 4: q; 5..8: the cursor's sent_at (or null), sent_at, chat
     * id, seq; 9: rows wanted (a page and one more, to know there is a next); 10: q; 11: the length up
     * to which a body is its own snippet; 12, 13: ts_headline's options for a short body, a long one.
     */
    private static final String PAGE = """
            WITH readable AS (
                SELECT m.chat_id, 0::bigint AS from_seq
                FROM chat_members m
                WHERE m.user_id = ? AND (?::text IS NULL OR m.chat_id = ?)
            ),
            hits AS (
                SELECT h.chat_id, h.seq, h.message_id, h.sender_id, h.sent_at, h.body
                FROM message_history h
                JOIN readable r ON r.chat_id = h.chat_id AND h.seq > r.from_seq
                WHERE h.kind = 'text' AND h.deleted_seq IS NULL
                  AND to_tsvector(waterline_search_config(), h.body) @@ websearch_to_tsquery(waterline_search_config(), ?)
                  AND (?::timestamptz IS NULL OR (h.sent_at, h.chat_id, h.seq) < (?::timestamptz, ?::text, ?::bigint))
                ORDER BY h.sent_at DESC, h.chat_id DESC, h.seq DESC
                LIMIT ?
            )
            SELECT chat_id, seq, message_id, sender_id, sent_at,
                   ts_headline(waterline_search_config(), body, websearch_to_tsquery(waterline_search_config(), ?),
                               CASE WHEN char_length(body) <= ? THEN ? ELSE ? END) AS headline
            FROM hits
            ORDER BY sent_at DESC, chat_id DESC, seq DESC
            """;

    /** The configuration the index was built with (V15's function). */
    private static final String CONFIG = """
            SELECT waterline_search_config()::text
            """;

    /** What a search found, or why it found nothing. */
    sealed interface Outcome {
    }

    /** Up to the page's rows, and whether more match below them. */
    record Found(List<Hit> hits, boolean more) implements Outcome {
    }

    /** The query keeps no word once parsed. */
    record NoWords() implements Outcome {
    }

    /** The named chat does not exist, or the caller is no member: indistinguishable. */
    record NotMember() implements Outcome {
    }

    /** Stopped by the statement timeout. */
    record TimedOut() implements Outcome {
    }

    /** One match: its place, and ts_headline's excerpt with the request's markers. */
    record Hit(String chatId, long seq, String messageId, String senderId, Instant sentAt, String headline) {
    }

    /** What to look for, for whom, where and below which result. */
    record Query(String userId, String q, String chatId, SearchCursor before, int limit, Snippet.Markers markers) {
    }

    private static final RowMapper<Hit> HIT = (rs, i) -> new Hit(rs.getString("chat_id"), rs.getLong("seq"),
            rs.getString("message_id"), rs.getString("sender_id"), rs.getObject("sent_at", OffsetDateTime.class).toInstant(),
            rs.getString("headline"));

    /** SQLSTATE query_canceled: what the statement timeout raises. */
    private static final String CANCELED = "57014";

    private final JdbcTemplate jdbc;
    private final TransactionTemplate tx;
    private final String timeoutMillis;

    SearchRepository(JdbcTemplate jdbc, PlatformTransactionManager transactions, SearchProperties properties) {
        this.jdbc = jdbc;
        this.tx = new TransactionTemplate(transactions);
        this.timeoutMillis = Long.toString(properties.statementTimeout().toMillis());
    }

    Outcome search(Query query) {
        try {
            return tx.execute(status -> {
                boolean[] answer = new boolean[2];
                jdbc.query(PREPARE, rs -> {
                    answer[0] = rs.getBoolean("has_words");
                    answer[1] = rs.getBoolean("member");
                }, timeoutMillis, query.q(), query.chatId(), query.chatId(), query.userId());
                if (!answer[1]) {
                    return new NotMember();
                }
                if (!answer[0]) {
                    return new NoWords();
                }
                SearchCursor c = query.before();
                OffsetDateTime at = c == null ? null : OffsetDateTime.ofInstant(c.sentAt(), ZoneOffset.UTC);
                List<Hit> hits = jdbc.query(PAGE, HIT, query.userId(), query.chatId(), query.chatId(), query.q(),
                        at, at, c == null ? null : c.chatId(), c == null ? null : c.seq(), query.limit() + 1,
                        query.q(), Snippet.WHOLE_UP_TO, query.markers().optionsWhole(), query.markers().options());
                boolean more = hits.size() > query.limit();
                return new Found(more ? hits.subList(0, query.limit()) : hits, more);
            });
        }
        catch (DataAccessException e) {
            if (canceled(e)) {
                return new TimedOut();
            }
            throw e;
        }
    }

    /** The text-search configuration of the database's index, as PostgreSQL names it. */
    String databaseConfig() {
        return jdbc.queryForObject(CONFIG, String.class);
    }

    private static boolean canceled(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof SQLException sql && CANCELED.equals(sql.getSQLState())) {
                return true;
            }
        }
        return false;
    }
}
