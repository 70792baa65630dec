package dev.waterline.chat;

import java.sql.Array;
import java.sql.ResultSet;
import java.sql.SQLException;
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

    private static final String CHAT_FOR_MEMBER = """
            SELECT c.chat_id, c.title, c.last_seq,
                   (SELECT array_agg(m.user_id ORDER BY m.user_id COLLATE "C") FROM chat_members m WHERE m.chat_id = c.chat_id) AS members
            FROM chats c
            WHERE c.chat_id = ?
              AND EXISTS (SELECT 1 FROM chat_members me WHERE me.chat_id = c.chat_id AND me.user_id = ?)
            """;

    private static final String CHATS_OF_USER = """
            SELECT c.chat_id, c.title, c.last_seq,
                   (SELECT array_agg(m.user_id ORDER BY m.user_id COLLATE "C") FROM chat_members m WHERE m.chat_id = c.chat_id) AS members
            FROM chat_members me
            JOIN chats c ON c.chat_id = me.chat_id
            WHERE me.user_id = ?
            ORDER BY c.created_at, c.chat_id
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
            rs.getString("chat_id"), rs.getString("title"), members(rs), rs.getLong("last_seq"), null);

    private final JdbcTemplate jdbc;

    ChatRepository(JdbcTemplate jdbc) {
        this.jdbc = jdbc;
    }

    @Transactional
    void create(String chatId, String title, List<String> members) {
        jdbc.update(INSERT_CHAT, chatId, title);
        jdbc.update(INSERT_MEMBERS, chatId, members.toArray(String[]::new));
    }

    /** The chat if it exists and {@code userId} is a member; empty otherwise (the two are one case). */
    public Optional<Chat> findForMember(String chatId, String userId) {
        return jdbc.query(CHAT_FOR_MEMBER, CHAT, chatId, userId).stream().findFirst();
    }

    List<Chat> chatsOf(String userId) {
        return jdbc.query(CHATS_OF_USER, CHAT, userId);
    }

    public boolean isMember(String chatId, String userId) {
        return Boolean.TRUE.equals(jdbc.queryForObject(IS_MEMBER, Boolean.class, chatId, userId));
    }

    /**
     * Adds a member under the chat row's lock. Returns false when the chat is absent or the
     * caller is no member; throws {@link TooManyMembers} past the cap.
     */
    @Transactional
    boolean addMember(String chatId, String caller, String userId, int maxMembers) {
        if (jdbc.queryForList(LOCK_CHAT, String.class, chatId).isEmpty() || !isMember(chatId, caller)) {
            return false;
        }
        if (!isMember(chatId, userId)) {
            Long count = jdbc.queryForObject(COUNT_MEMBERS, Long.class, chatId);
            if (count != null && count >= maxMembers) {
                throw new TooManyMembers();
            }
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

    private static List<String> members(ResultSet rs) throws SQLException {
        Array a = rs.getArray("members");
        return a == null ? List.of() : List.of((String[]) a.getArray());
    }

    static final class TooManyMembers extends RuntimeException {
        TooManyMembers() {
            super(null, null, false, false);
        }
    }
}
