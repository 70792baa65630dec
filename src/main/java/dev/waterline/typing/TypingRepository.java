package dev.waterline.typing;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Repository;

/** The members of the chats a batch of typing frames names: one query per batch, no transaction. */
@Repository
class TypingRepository {

    /** 1: text[] chat ids. Served by chat_members' primary key (chat_id, user_id). */
    private static final String MEMBERS = """
            SELECT chat_id, user_id FROM chat_members WHERE chat_id = ANY (?::text[])
            """;

    private final JdbcTemplate jdbc;

    TypingRepository(JdbcTemplate jdbc) {
        this.jdbc = jdbc;
    }

    /** Chat id → its members, for the chats that exist among {@code chatIds}. */
    Map<String, List<String>> members(String[] chatIds) {
        Map<String, List<String>> members = new HashMap<>();
        jdbc.query(MEMBERS, rs -> {
            members.computeIfAbsent(rs.getString(1), k -> new ArrayList<>()).add(rs.getString(2));
        }, (Object) chatIds);
        return members;
    }
}
