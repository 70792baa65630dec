package dev.waterline.hooks;

import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Repository;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;
import tools.jackson.core.type.TypeReference;
import tools.jackson.databind.json.JsonMapper;

/**
 * The REST side of hooks: create, list, read with counts, delete, the dead letters and their
 * replay; and the chats with an {@code offline} hook ({@link OfflineChats}). Creating and deleting
 * a hook take its chat row's lock, which the group commit's lock on the chat excludes: a hook sees
 * exactly the messages committed after it was created, and no delivery is enqueued for a hook
 * whose deletion has committed. What a deleted hook leaves behind is deleted after, chunk by
 * chunk, outside the chat's lock ({@link DeliveryQueueRepository#purgeChunk}): until then no claim
 * returns it (the claim joins the hook).
 */
@Repository
class HookRepository {

    /**
     * 1: chat, 2: member. Locks the chat row if the caller is a member: against the group commit's
     * lock (so a hook's creation falls between two batches of the chat), and against another
     * creation (so two cannot both pass the count of hooks), but not against a key-share lock.
     */
    private static final String LOCK_CHAT_FOR_MEMBER = """
            SELECT 1 FROM chats c
            WHERE c.chat_id = ? AND EXISTS (SELECT 1 FROM chat_members m WHERE m.chat_id = c.chat_id AND m.user_id = ?)
            FOR NO KEY UPDATE OF c
            """;

    private static final String COUNT_HOOKS = """
            SELECT count(*) FROM hooks WHERE chat_id = ?
            """;

    /** 1: hook, 2: chat, 3: creator, 4: kind, 5: target json, 6: secret, 7: text[] events. */
    private static final String INSERT_HOOK = """
            INSERT INTO hooks (hook_id, chat_id, created_by, kind, target, secret, events)
            VALUES (?, ?, ?, ?, ?::jsonb, ?, ?::text[])
            RETURNING created_at
            """;

    private static final String COLUMNS = """
            h.hook_id, h.chat_id, h.created_by, h.kind, h.target::text, h.secret IS NOT NULL, h.events, h.created_at,
            h.breaker, h.failures
            """;

    /** 1: chat, 2: member. */
    private static final String LIST = "SELECT " + COLUMNS + """
            FROM hooks h
            WHERE h.chat_id = ? AND EXISTS (SELECT 1 FROM chat_members m WHERE m.chat_id = h.chat_id AND m.user_id = ?)
            ORDER BY h.created_at, h.hook_id
            """;

    /** 1: chat, 2: user. */
    private static final String IS_MEMBER = """
            SELECT EXISTS (SELECT 1 FROM chat_members WHERE chat_id = ? AND user_id = ?)
            """;

    /** 1: hook, 2: member. */
    private static final String ONE = "SELECT " + COLUMNS + """
            FROM hooks h
            WHERE h.hook_id = ? AND EXISTS (SELECT 1 FROM chat_members m WHERE m.chat_id = h.chat_id AND m.user_id = ?)
            """;

    /** 1: hook. Not done (pending, held, claimed) and dead, on the hook's index. */
    private static final String COUNTS = """
            SELECT count(*) FILTER (WHERE status <> 'dead'), count(*) FILTER (WHERE status = 'dead')
            FROM hook_deliveries WHERE hook_id = ?
            """;

    /** 1: hook. */
    private static final String LOCK_HOOK = """
            SELECT chat_id FROM hooks WHERE hook_id = ? FOR UPDATE
            """;

    /** 1: hook. */
    private static final String DELETE = """
            DELETE FROM hooks WHERE hook_id = ?
            """;

    /** 1: hook, 2: most. */
    private static final String DEAD = """
            SELECT id, message_id, event, user_id, attempts, last_error, dead_at
            FROM hook_deliveries WHERE hook_id = ? AND status = 'dead'
            ORDER BY id LIMIT ?
            """;

    /**
     * 1: hook, 2: all (bool), 3: bigint[] ids (when not all). Back to pending (held if the breaker
     * is not closed) with a fresh budget; a dead row whose key has a live copy stays dead (the
     * partial unique index would refuse it).
     */
    private static final String REPLAY = """
            UPDATE hook_deliveries d
            SET status = CASE WHEN h.breaker = 'closed' THEN 'pending' ELSE 'held' END,
                attempts = 0, due_at = now(), dead_at = NULL
            FROM hooks h
            WHERE d.hook_id = ? AND h.hook_id = d.hook_id AND d.status = 'dead' AND (? OR d.id = ANY (?::bigint[]))
              AND NOT EXISTS (SELECT 1 FROM hook_deliveries a WHERE a.idempotency_key = d.idempotency_key AND a.status <> 'dead')
            """;

    /** The chats that have a hook listening to {@code offline} events ({@link OfflineChats}). */
    private static final String CHATS_WITH_OFFLINE_HOOKS = """
            SELECT DISTINCT chat_id FROM hooks WHERE 'offline' = ANY (events)
            """;

    private static final JsonMapper JSON = JsonMapper.builder().build();
    private static final TypeReference<Map<String, String>> TARGET = new TypeReference<>() {
    };

    /** Who created a hook, and when (ISO-8601). */
    record Created(String by, String at) {
    }

    /** A hook as stored (no secret: only whether it has one), with its breaker as last read. */
    record Hook(String hookId, String chatId, Created created, String kind, Map<String, String> target, boolean hasSecret,
                List<String> events, Breaker.State state) {

        String createdBy() {
            return created.by();
        }

        String createdAt() {
            return created.at();
        }

        String breaker() {
            return state.breaker();
        }

        int failures() {
            return state.failures();
        }
    }

    record DeadLetter(long deliveryId, String messageId, String event, String userId, int attempts, String lastError, String deadAt) {
    }

    static final class NotFound extends RuntimeException {
        NotFound() {
            super(null, null, false, false);
        }
    }

    static final class TooMany extends RuntimeException {
        TooMany() {
            super(null, null, false, false);
        }
    }

    private final JdbcTemplate jdbc;
    private final TransactionTemplate tx;

    HookRepository(JdbcTemplate jdbc, PlatformTransactionManager transactions) {
        this.jdbc = jdbc;
        this.tx = new TransactionTemplate(transactions);
        this.tx.setTimeout(10);
    }

    private static Hook hook(ResultSet rs) throws SQLException {
        String[] events = (String[]) rs.getArray(7).getArray();
        return new Hook(rs.getString(1), rs.getString(2), new Created(rs.getString(3), rs.getTimestamp(8).toInstant().toString()),
                rs.getString(4), JSON.readValue(rs.getString(5), TARGET), rs.getBoolean(6), List.of(events),
                new Breaker.State(rs.getString(9), rs.getInt(10)));
    }

    Hook create(String hookId, String chatId, String caller, String kind, Map<String, String> target, String secret,
                List<String> events, int maxPerChat) {
        return tx.execute(s -> {
            if (jdbc.queryForList(LOCK_CHAT_FOR_MEMBER, Integer.class, chatId, caller).isEmpty()) {
                throw new NotFound();
            }
            Long n = jdbc.queryForObject(COUNT_HOOKS, Long.class, chatId);
            if (n != null && n >= maxPerChat) {
                throw new TooMany();
            }
            java.sql.Timestamp created = jdbc.queryForObject(INSERT_HOOK, java.sql.Timestamp.class, hookId, chatId, caller, kind,
                    JSON.writeValueAsString(target), secret, events.toArray(String[]::new));
            return new Hook(hookId, chatId, new Created(caller, created.toInstant().toString()), kind, new LinkedHashMap<>(target),
                    secret != null, List.copyOf(events), new Breaker.State(Breaker.CLOSED, 0));
        });
    }

    List<Hook> list(String chatId, String caller) {
        return jdbc.query(LIST, (rs, i) -> hook(rs), chatId, caller);
    }

    boolean isMember(String chatId, String caller) {
        return Boolean.TRUE.equals(jdbc.queryForObject(IS_MEMBER, Boolean.class, chatId, caller));
    }

    Optional<Hook> find(String hookId, String caller) {
        return jdbc.query(ONE, (rs, i) -> hook(rs), hookId, caller).stream().findFirst();
    }

    /** deliveries not done, dead letters. */
    long[] counts(String hookId) {
        return jdbc.queryForObject(COUNTS, (rs, i) -> new long[] {rs.getLong(1), rs.getLong(2)}, hookId);
    }

    /**
     * Deletes a hook of a chat the caller is a member of; false when there is none. The hook's row
     * is locked first and the chat's after: a group commit waiting for the chat (its writer, and
     * every chat on it) then never waits behind a recorder holding the hook's row.
     */
    boolean delete(String hookId, String caller) {
        return Boolean.TRUE.equals(tx.execute(s -> {
            jdbc.execute("SET LOCAL lock_timeout = '5s'");
            List<String> chat = jdbc.queryForList(LOCK_HOOK, String.class, hookId);
            if (chat.isEmpty() || jdbc.queryForList(LOCK_CHAT_FOR_MEMBER, Integer.class, chat.getFirst(), caller).isEmpty()) {
                return false;
            }
            return jdbc.update(DELETE, hookId) == 1;
        }));
    }

    List<DeadLetter> dead(String hookId, int limit) {
        return jdbc.query(DEAD, (rs, i) -> new DeadLetter(rs.getLong(1), rs.getString(2), rs.getString(3), rs.getString(4),
                rs.getInt(5), rs.getString(6), rs.getTimestamp(7) == null ? null : rs.getTimestamp(7).toInstant().toString()),
                hookId, limit);
    }

    List<String> chatsWithOfflineHooks() {
        return jdbc.queryForList(CHATS_WITH_OFFLINE_HOOKS, String.class);
    }

    int replay(String hookId, List<Long> ids) {
        long[] wanted = ids == null ? new long[0] : ids.stream().mapToLong(Long::longValue).toArray();
        return tx.execute(s -> jdbc.update(REPLAY, hookId, ids == null, wanted));
    }
}
