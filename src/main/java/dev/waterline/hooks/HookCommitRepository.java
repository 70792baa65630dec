package dev.waterline.hooks;

import java.util.List;
import java.util.function.LongConsumer;

import dev.waterline.sql.Statement;
import org.springframework.stereotype.Repository;

/**
 * Hooks' statements in the group commit ({@link HookParticipant}): the deliveries to {@code message}
 * hooks and the fan-out rows of {@code offline} hooks. It runs none of them: it builds each with
 * the handler of the rows it returns, and the participant hands them to the group commit, which
 * runs them in the message's own transaction, after its history rows (H1).
 */
@Repository
class HookCommitRepository {

    /**
     * 1: text[] the batch's distinct chat ids, 2: sent_at text of the batch, 3..4: pairwise arrays
     * of the batch's new messages (chat id, seq). Driven by the chats' hooks: the hooks of the
     * batch's chats are read first, materialized (hooks_by_chat), and only a message of a chat that
     * has one is looked up in message_history, by its key, written earlier in this transaction; the
     * payload is built from that row. A batch whose chats have no hook (nearly every batch) costs
     * one index probe per chat and sends two small arrays, not its bodies a second time. The
     * lookup is a LATERAL ... LIMIT 1, which the planner cannot turn into a join: an earlier form
     * joined message_history, and a prepared plan cached while history was nearly empty (a fresh
     * database before autovacuum's first analyze) scanned the whole table in every group commit
     * (28 scans a second of a 60,000-row table at 2,000 msg/s; docs/lab/2026-12-02-peers.md, "A
     * whole-history scan in every group commit").
     */
    private static final String INSERT_MESSAGE_DELIVERIES = """
            WITH h AS MATERIALIZED (
                SELECT hook_id, chat_id, breaker FROM hooks
                WHERE chat_id = ANY (?::text[]) AND 'message' = ANY (events))
            INSERT INTO hook_deliveries (hook_id, event, message_id, idempotency_key, payload, status)
            SELECT h.hook_id, 'message', m.message_id, h.hook_id || ':' || m.message_id,
                   json_build_object('hookId', h.hook_id, 'event', 'message', 'messageId', m.message_id,
                       'correlationId', m.correlation_id, 'chatId', m.chat_id, 'seq', m.seq, 'senderId', m.sender_id,
                       'kind', m.kind, 'body', m.body, 'sentAt', ?::text, 'streamId', m.stream_id,
                       'replyTo', m.reply_to, 'targetId', m.target_id, 'emoji', m.emoji, 'on', m.reaction_on,
                       'attachments', m.attachments)::text,
                   CASE WHEN h.breaker = 'closed' THEN 'pending' ELSE 'held' END
            FROM h
            JOIN unnest(?::text[], ?::bigint[]) AS b(chat_id, seq) ON b.chat_id = h.chat_id
            CROSS JOIN LATERAL (
                SELECT mh.message_id, mh.correlation_id, mh.chat_id, mh.seq, mh.sender_id, mh.kind, mh.body, mh.stream_id,
                       mh.reply_to, mh.target_id, mh.emoji, mh.reaction_on,
                       (SELECT json_agg(a.attachment_id ORDER BY a.position) FROM attachments a
                        WHERE a.chat_id = mh.chat_id AND a.message_seq = mh.seq) AS attachments
                FROM message_history mh
                WHERE mh.chat_id = b.chat_id AND mh.seq = b.seq
                LIMIT 1) m
            ON CONFLICT (idempotency_key) WHERE status <> 'dead' DO NOTHING
            RETURNING id
            """;

    /**
     * 1..5: pairwise text[] chat ids, text[] message ids, bigint[] seqs, text[] senders, text[]
     * offline recipients (one element per message and recipient). One fan-out row per offline hook
     * of the chat and message, with its recipients gathered into an array.
     */
    private static final String INSERT_OFFLINE_FANOUTS = """
            WITH o AS (
                SELECT chat_id, message_id, seq, sender_id, array_agg(user_id ORDER BY user_id) AS user_ids
                FROM unnest(?::text[], ?::text[], ?::bigint[], ?::text[], ?::text[]) AS r(chat_id, message_id, seq, sender_id, user_id)
                GROUP BY chat_id, message_id, seq, sender_id)
            INSERT INTO hook_offline_fanouts (hook_id, chat_id, message_id, seq, sender_id, user_ids)
            SELECT h.hook_id, o.chat_id, o.message_id, o.seq, o.sender_id, o.user_ids
            FROM o JOIN hooks h ON h.chat_id = o.chat_id AND 'offline' = ANY (h.events)
            RETURNING id
            """;

    /**
     * The deliveries of the batch's messages ({@code chats} and {@code seqs}, pairwise) to the
     * {@code message} hooks of {@code distinctChats}; {@code inserted} is told each new delivery's id.
     */
    /**
     * 1: text[] message ids. A delete erased these entries' text (PROTOCOL.md §9, M1): their
     * deliveries' payloads, pending or dead, lose it too (the body, and a text entry's reply and
     * files); by hook_deliveries_by_message. An offline event's payload carries no text.
     */
    private static final String ERASE_PAYLOADS = """
            UPDATE hook_deliveries
            SET payload = (CASE WHEN payload::jsonb ->> 'kind' = 'text'
                                THEN payload::jsonb || '{"replyTo": null, "attachments": null}'::jsonb
                                ELSE payload::jsonb END || '{"body": ""}'::jsonb)::text
            WHERE message_id = ANY (?::text[]) AND event = 'message'
            """;

    /** Erases the text of {@code messageIds} from their deliveries' payloads. */
    Statement erasePayloads(List<String> messageIds) {
        return Statement.of(ERASE_PAYLOADS, null, (Object) messageIds.toArray(String[]::new));
    }

    Statement messageDeliveries(String[] distinctChats, String sentAt, String[] chats, long[] seqs, LongConsumer inserted) {
        return Statement.of(INSERT_MESSAGE_DELIVERIES, rs -> inserted.accept(rs.getLong(1)), distinctChats, sentAt, chats, seqs);
    }

    /**
     * The fan-out rows of the {@code offline} hooks of the messages' chats, one array element per
     * message and offline recipient (all pairwise); {@code inserted} is told of each row.
     */
    Statement offlineFanouts(String[] chats, String[] messages, long[] seqs, String[] senders, String[] users, Runnable inserted) {
        return Statement.of(INSERT_OFFLINE_FANOUTS, rs -> inserted.run(), chats, messages, seqs, senders, users);
    }
}
