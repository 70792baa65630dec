package dev.waterline.receipts;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Repository;
import org.springframework.transaction.support.TransactionTemplate;

@Repository
class ReceiptRepository {

    /**
     * Stores the receipts of members only, clamped to the chat's last seq, and only where they
     * raise the member's receipt: a new row needs a seq above 0 (no row reads as 0), an existing
     * one is updated only when the new seq is higher, so an unchanged or older receipt writes
     * nothing (not even {@code updated_at}). Returns one row per receipt of a member: its chat,
     * user, the receipt's seq after this statement, and whether this statement raised it. Rows
     * go in chat id order: a new row's foreign key takes a share lock on its chat's row, and the
     * group commit locks chat rows in chat id order, so the two never wait on each other crosswise.
     * 1..3: pairwise arrays of chat id, user id, seq.
     */
    private static final String UPSERT_RECEIPTS = """
            WITH valid AS (
                SELECT r.chat_id, r.user_id, LEAST(r.seq, c.last_seq) AS seq
                FROM unnest(?::text[], ?::text[], ?::bigint[]) AS r(chat_id, user_id, seq)
                JOIN chats c ON c.chat_id = r.chat_id
                JOIN chat_members m ON m.chat_id = r.chat_id AND m.user_id = r.user_id),
            raised AS (
                INSERT INTO read_receipts (chat_id, user_id, seq)
                SELECT chat_id, user_id, seq FROM valid WHERE seq > 0
                ORDER BY chat_id, user_id
                ON CONFLICT (chat_id, user_id) DO UPDATE
                  SET seq = EXCLUDED.seq, updated_at = now()
                  WHERE read_receipts.seq < EXCLUDED.seq
                RETURNING chat_id, user_id, seq)
            SELECT v.chat_id, v.user_id, COALESCE(r.seq, v.seq), r.chat_id IS NOT NULL
            FROM valid v LEFT JOIN raised r ON r.chat_id = v.chat_id AND r.user_id = v.user_id
            """;

    /** 1: text[] chat ids. */
    private static final String MEMBERS = """
            SELECT chat_id, user_id FROM chat_members WHERE chat_id = ANY (?::text[])
            """;

    /** One member's receipt after the upsert; {@code raised} when this upsert moved it. */
    record Stored(String chatId, String userId, long seq, boolean raised) {
    }

    record Result(List<Stored> stored, Map<String, List<String>> members) {
    }

    private final JdbcTemplate jdbc;
    private final TransactionTemplate tx;

    ReceiptRepository(JdbcTemplate jdbc, TransactionTemplate tx) {
        this.jdbc = jdbc;
        this.tx = tx;
    }

    /** Receipts must be for distinct (chat, user) pairs. */
    Result store(List<ReadRequest> reads) {
        return tx.execute(status -> {
            List<Stored> stored = new ArrayList<>();
            jdbc.query(UPSERT_RECEIPTS, rs -> {
                stored.add(new Stored(rs.getString(1), rs.getString(2), rs.getLong(3), rs.getBoolean(4)));
            }, reads.stream().map(ReadRequest::chatId).toArray(String[]::new),
                    reads.stream().map(r -> r.from().userId()).toArray(String[]::new),
                    reads.stream().mapToLong(ReadRequest::seq).toArray());
            Map<String, List<String>> members = new HashMap<>();
            String[] raisedChats = stored.stream().filter(Stored::raised).map(Stored::chatId).distinct().toArray(String[]::new);
            if (raisedChats.length > 0) {
                jdbc.query(MEMBERS, rs -> {
                    members.computeIfAbsent(rs.getString(1), k -> new ArrayList<>()).add(rs.getString(2));
                }, (Object) raisedChats);
            }
            return new Result(stored, members);
        });
    }
}
