package dev.waterline.chat;

import java.sql.Array;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.core.RowMapper;
import org.springframework.stereotype.Repository;
import org.springframework.transaction.annotation.Transactional;

/** Reads and writes chats and their members. */
@Repository
public class ChatRepository {

    private static final String INSERT_CHAT = """
            INSERT INTO chats (chat_id, title) VALUES (?, ?)
            """;

    /** 1: chat id, 2: text[] of user ids. */
    private static final String INSERT_MEMBERS = """
            INSERT INTO chat_members (chat_id, user_id)
            SELECT ?, u FROM unnest(?::text[]) AS u
            ON CONFLICT DO NOTHING
            """;

    /*
     * The chat list's fields (PROTOCOL.md §10) for chat c and the membership me of the reader, read
     * with a few index probes per chat and never through a chat's history (V14):
     *   rd: the reader's read position: the later of their read receipt (0 without one) and their
     *       last own text or stream entry (chat_members.own_seq: sending is reading), so the
     *       reader's own entries all lie at or below it.
     *   rp: the chat's count of text and stream entries up to rd, from the first history row at or
     *       after rd (one probe of the key): the row at rd itself, or, when retention took it, the
     *       first row it kept, less that row if it counts, so that what retention took is not
     *       counted. No row at all: nothing past rd is kept, and nothing is unread.
     *   unread: the chat's count less rp, less the deleted messages past rd (the partial index
     *       message_history_deleted: deletes are rare, and only deleted rows are read).
     *   lm: the last text or stream entry as it stands (an edit rewrote its body, a delete emptied
     *       it), by the key; absent when retention took it. Its body is cut to 200 code points here
     *       and to 200 UTF-16 code units by Chat.preview.
     */

    private static final String LIST_COLUMNS = """
                   c.countable - COALESCE(rp.before, c.countable)
                     - (SELECT count(*) FROM message_history d
                        WHERE d.chat_id = c.chat_id AND d.seq > rd.seq AND d.deleted_seq IS NOT NULL) AS unread,
                   lm.message_id AS lm_message_id, lm.seq AS lm_seq, lm.sender_id AS lm_sender_id, lm.kind AS lm_kind,
                   left(lm.body, 200) AS lm_body, lm.sent_at AS lm_sent_at, lm.edited_at AS lm_edited_at,
                   lm.deleted_seq IS NOT NULL AS lm_deleted,
                   (SELECT array_agg(m.user_id ORDER BY m.user_id COLLATE "C") FROM chat_members m WHERE m.chat_id = c.chat_id) AS members
            """;

    private static final String LIST_JOINS = """
            CROSS JOIN LATERAL (
                SELECT GREATEST(me.own_seq,
                                (SELECT r.seq FROM read_receipts r WHERE r.chat_id = c.chat_id AND r.user_id = me.user_id)) AS seq) rd
            LEFT JOIN LATERAL (
                SELECT h.countable - CASE WHEN h.seq > rd.seq AND h.kind IN ('text', 'stream') THEN 1 ELSE 0 END AS before
                FROM message_history h
                WHERE h.chat_id = c.chat_id AND h.seq >= rd.seq
                ORDER BY h.seq
                LIMIT 1) rp ON true
            LEFT JOIN message_history lm ON lm.chat_id = c.chat_id AND lm.seq = c.last_message_seq
            """;

    /** 1: user id, 2: chat id. No row: no such chat, or the user is no member of it. */
    private static final String CHAT_FOR_MEMBER = """
            SELECT c.chat_id, c.title, c.last_seq,
            """ + LIST_COLUMNS + """
            FROM chats c
            JOIN chat_members me ON me.chat_id = c.chat_id AND me.user_id = ?
            """ + LIST_JOINS + """
            WHERE c.chat_id = ?
            """;

    /**
     * One page of a user's chats, in chat id order (ids are ULIDs: creation order), after a
     * cursor. The page stops early once the member ids and titles of the chats before a chat pass
     * a byte budget (counted as stored: text that JSON escapes takes up to six times as much on
     * the wire), so that a page of large chats stays small; the members are aggregated only for the
     * chats that make the page, and so are the chat list's fields (LIST_COLUMNS), whose last
     * message counts as 1000 bytes (200 code units of text take at most 600 bytes stored, the rest
     * is its ids and field names). {@code total} tells how many chats the limit admitted, so the
     * caller knows whether the budget cut the page. 1: user id, 2: cursor (exclusive; '' for the
     * first page), 3: chats wanted (one more than the page, to know whether more follow), 4: byte
     * budget. Reads chat_members_by_user (user_id, chat_id) as one range.
     */
    private static final String CHATS_OF_USER = """
            WITH page AS (
                SELECT me.chat_id, me.user_id, me.own_seq,
                       (SELECT sum(octet_length(m.user_id) + 3) FROM chat_members m WHERE m.chat_id = me.chat_id)
                       + (SELECT COALESCE(octet_length(c.title), 0) + 64
                                 + CASE WHEN c.last_message_seq IS NULL THEN 0 ELSE 1000 END
                          FROM chats c WHERE c.chat_id = me.chat_id) AS bytes
                FROM chat_members me
                WHERE me.user_id = ? AND me.chat_id > ?
                ORDER BY me.chat_id
                LIMIT ?),
            budget AS (
                SELECT chat_id, user_id, own_seq, sum(bytes) OVER (ORDER BY chat_id) - bytes AS before, count(*) OVER () AS total
                FROM page)
            SELECT c.chat_id, c.title, c.last_seq, me.total,
            """ + LIST_COLUMNS + """
            FROM budget me
            JOIN chats c ON c.chat_id = me.chat_id
            """ + LIST_JOINS + """
            WHERE me.before < ?
            ORDER BY c.chat_id
            """;

    /**
     * Raises the chat count of each user joining a chat, refusing any at the quota: a user at
     * the quota, or one another user adds who is at the share others may fill, returns no row, and
     * the caller rolls back. Rows are upserted in user id order, so concurrent creations take the
     * count rows' locks in one order and never deadlock. 1: text[] user ids (distinct), 2: int[]
     * whether each was added by someone else (1) or joins by their own doing (0), pairwise, 3: the
     * quota, 4: the share others may fill.
     */
    private static final String COUNT_JOINS = """
            INSERT INTO user_chat_counts AS u (user_id, chats, added)
            SELECT j.user_id, 1, j.added FROM unnest(?::text[], ?::int[]) AS j(user_id, added) ORDER BY j.user_id
            ON CONFLICT (user_id) DO UPDATE SET chats = u.chats + 1, added = u.added + EXCLUDED.added
              WHERE u.chats < ? AND (EXCLUDED.added = 0 OR u.added < ?)
            RETURNING u.user_id
            """;

    private static final String IS_MEMBER = """
            SELECT EXISTS (SELECT 1 FROM chat_members WHERE chat_id = ? AND user_id = ?)
            """;

    /** Serialises concurrent additions to one chat so that the member cap holds. */
    private static final String LOCK_CHAT = """
            SELECT chat_id FROM chats WHERE chat_id = ? FOR UPDATE
            """;

    private static final String COUNT_MEMBERS = """
            SELECT count(*) FROM chat_members WHERE chat_id = ?
            """;

    private static final String READ_SEQS = """
            SELECT user_id, seq FROM read_receipts WHERE chat_id = ? ORDER BY user_id
            """;

    private static final RowMapper<Chat> CHAT = (rs, i) -> new Chat(
            rs.getString("chat_id"), rs.getString("title"), members(rs), rs.getLong("last_seq"), rs.getLong("unread"),
            lastMessage(rs), null);

    private final JdbcTemplate jdbc;

    ChatRepository(JdbcTemplate jdbc) {
        this.jdbc = jdbc;
    }

    /** The membership quotas: all of a user's chats, and the share of them others may add the user to. */
    public record Quota(int maxChats, int maxAddedByOthers) {
    }

    /**
     * Creates a chat with these (distinct) members, {@code creator} among them; throws
     * {@link OverQuota} if one of them is at the quota (the others: at the share others may fill).
     */
    @Transactional
    void create(String chatId, String title, String creator, List<String> members, Quota quota) {
        countJoins(creator, members, quota);
        jdbc.update(INSERT_CHAT, chatId, title);
        jdbc.update(INSERT_MEMBERS, chatId, members.toArray(String[]::new));
    }

    /** Counts {@code users} joining a chat; each but {@code byThemselves} is added by someone else. */
    private void countJoins(String byThemselves, List<String> users, Quota quota) {
        int[] added = users.stream().mapToInt(u -> u.equals(byThemselves) ? 0 : 1).toArray();
        List<String> counted = jdbc.queryForList(COUNT_JOINS, String.class, users.toArray(String[]::new), added, quota.maxChats(),
                quota.maxAddedByOthers());
        if (counted.size() != users.size()) {
            throw new OverQuota();
        }
    }

    /** The chat if it exists and {@code userId} is a member; empty otherwise (the two are one case). */
    public Optional<Chat> findForMember(String chatId, String userId) {
        return jdbc.query(CHAT_FOR_MEMBER, CHAT, userId, chatId).stream().findFirst();
    }

    /** A page of a user's chats: the chats, and whether more follow it. */
    record Page(List<Chat> chats, boolean more) {
    }

    Page chatsOf(String userId, String after, int limit, long byteBudget) {
        List<Chat> rows = new java.util.ArrayList<>();
        long[] total = {0};
        jdbc.query(CHATS_OF_USER, rs -> {
            total[0] = rs.getLong("total");
            rows.add(CHAT.mapRow(rs, rows.size()));
        }, userId, after == null ? "" : after, limit + 1, byteBudget);
        List<Chat> page = rows.size() > limit ? rows.subList(0, limit) : rows;
        return new Page(List.copyOf(page), total[0] > page.size());
    }

    public boolean isMember(String chatId, String userId) {
        return Boolean.TRUE.equals(jdbc.queryForObject(IS_MEMBER, Boolean.class, chatId, userId));
    }

    /**
     * Adds a member under the chat row's lock. Returns false when the chat is absent or the
     * caller is no member; throws {@link TooManyMembers} past the cap, {@link OverQuota} when the
     * new member is at the membership quota.
     */
    @Transactional
    public boolean addMember(String chatId, String caller, String userId, int maxMembers, Quota quota) {
        if (jdbc.queryForList(LOCK_CHAT, String.class, chatId).isEmpty() || !isMember(chatId, caller)) {
            return false;
        }
        if (!isMember(chatId, userId)) {
            Long count = jdbc.queryForObject(COUNT_MEMBERS, Long.class, chatId);
            if (count != null && count >= maxMembers) {
                throw new TooManyMembers();
            }
            countJoins(caller, List.of(userId), quota);
            jdbc.update(INSERT_MEMBERS, chatId, new String[] {userId});
        }
        return true;
    }

    Map<String, Long> readSeqs(String chatId) {
        Map<String, Long> out = new LinkedHashMap<>();
        jdbc.query(READ_SEQS, rs -> {
            out.put(rs.getString(1), rs.getLong(2));
        }, chatId);
        return out;
    }

    private static Chat.LastMessage lastMessage(ResultSet rs) throws SQLException {
        String messageId = rs.getString("lm_message_id");
        if (messageId == null) {
            return null;
        }
        Timestamp edited = rs.getTimestamp("lm_edited_at");
        return new Chat.LastMessage(messageId, rs.getLong("lm_seq"), rs.getString("lm_sender_id"), rs.getString("lm_kind"),
                Chat.preview(rs.getString("lm_body"), Chat.PREVIEW_LENGTH), rs.getTimestamp("lm_sent_at").toInstant().toString(),
                edited == null ? null : edited.toInstant().toString(), rs.getBoolean("lm_deleted"));
    }

    private static List<String> members(ResultSet rs) throws SQLException {
        Array a = rs.getArray("members");
        return a == null ? List.of() : List.of((String[]) a.getArray());
    }

    public static final class TooManyMembers extends RuntimeException {
        TooManyMembers() {
            super(null, null, false, false);
        }
    }

    /** A user would belong to more chats than {@code max-chats-per-user}. */
    public static final class OverQuota extends RuntimeException {
        OverQuota() {
            super(null, null, false, false);
        }
    }
}
