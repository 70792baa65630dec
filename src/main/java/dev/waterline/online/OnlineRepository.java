package dev.waterline.online;

import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Repository;

/** What presence reads and writes in PostgreSQL: memberships (read only) and the hidden setting. */
@Repository
class OnlineRepository {

    /** 1: text[] user ids. Served by chat_members_by_user (user_id, chat_id). */
    private static final String CHATS_OF = """
            SELECT user_id, chat_id FROM chat_members WHERE user_id = ANY (?::text[])
            """;

    /** 1: text[] user ids. */
    private static final String HIDDEN_AMONG = """
            SELECT user_id FROM user_settings WHERE user_id = ANY (?::text[]) AND presence_hidden
            """;

    /**
     * 1: one user, 2: the other. For each of the first's chats (chat_members_by_user), one probe of
     * the primary key (chat_id, user_id) for the second.
     */
    private static final String SHARE_A_CHAT = """
            SELECT EXISTS (
                SELECT 1 FROM chat_members a
                JOIN chat_members b ON b.chat_id = a.chat_id AND b.user_id = ?
                WHERE a.user_id = ?)
            """;

    /** 1: user id, 2: hidden. */
    private static final String SET_HIDDEN = """
            INSERT INTO user_settings (user_id, presence_hidden) VALUES (?, ?)
            ON CONFLICT (user_id) DO UPDATE SET presence_hidden = EXCLUDED.presence_hidden, updated_at = now()
            """;

    private final JdbcTemplate jdbc;

    OnlineRepository(JdbcTemplate jdbc) {
        this.jdbc = jdbc;
    }

    /** User → the chats they are in, for those of {@code users} in any. */
    Map<String, List<String>> chatsOf(Collection<String> users) {
        Map<String, List<String>> chats = new HashMap<>();
        jdbc.query(CHATS_OF, rs -> {
            chats.computeIfAbsent(rs.getString(1), k -> new java.util.ArrayList<>()).add(rs.getString(2));
        }, (Object) users.toArray(String[]::new));
        return chats;
    }

    /** Those of {@code users} who hide their presence. */
    Set<String> hiddenAmong(Collection<String> users) {
        Set<String> hidden = new HashSet<>();
        jdbc.query(HIDDEN_AMONG, rs -> {
            hidden.add(rs.getString(1));
        }, (Object) users.toArray(String[]::new));
        return hidden;
    }

    boolean hidden(String user) {
        return hiddenAmong(List.of(user)).contains(user);
    }

    boolean shareAChat(String one, String other) {
        return Boolean.TRUE.equals(jdbc.queryForObject(SHARE_A_CHAT, Boolean.class, other, one));
    }

    void setHidden(String user, boolean hidden) {
        jdbc.update(SET_HIDDEN, user, hidden);
    }
}
