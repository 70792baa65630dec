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
     * Upserts receipts of members only, clamped to the chat's last seq and never moving back.
     * 1..3: pairwise arrays of chat id, user id, seq. Returns the stored receipts.
     */
    private static final String UPSERT_RECEIPTS = """
            INSERT INTO read_receipts (chat_id, user_id, seq)
            SELECT r.chat_id, r.user_id, LEAST(r.seq, c.last_seq)
            FROM unnest(?::text[], ?::text[], ?::bigint[]) AS r(chat_id, user_id, seq)
            JOIN chats c ON c.chat_id = r.chat_id
            JOIN chat_members m ON m.chat_id = r.chat_id AND m.user_id = r.user_id
            ON CONFLICT (chat_id, user_id) DO UPDATE
              SET seq = GREATEST(read_receipts.seq, EXCLUDED.seq), updated_at = now()
            RETURNING chat_id, user_id, seq
            """;

    /** 1: text[] chat ids. */
    private static final String MEMBERS = """
            SELECT chat_id, user_id FROM chat_members WHERE chat_id = ANY (?::text[])
            """;

    record Stored(String chatId, String userId, long seq) {
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
                stored.add(new Stored(rs.getString(1), rs.getString(2), rs.getLong(3)));
            }, reads.stream().map(ReadRequest::chatId).toArray(String[]::new),
                    reads.stream().map(r -> r.from().userId()).toArray(String[]::new),
                    reads.stream().mapToLong(ReadRequest::seq).toArray());
            Map<String, List<String>> members = new HashMap<>();
            if (!stored.isEmpty()) {
                jdbc.query(MEMBERS, rs -> {
                    members.computeIfAbsent(rs.getString(1), k -> new ArrayList<>()).add(rs.getString(2));
                }, (Object) stored.stream().map(Stored::chatId).distinct().toArray(String[]::new));
            }
            return new Result(stored, members);
        });
    }
}
