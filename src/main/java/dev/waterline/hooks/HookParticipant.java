package dev.waterline.hooks;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import dev.waterline.ingest.CommitParticipant;
import dev.waterline.presence.Location;
import dev.waterline.presence.Presence;
import dev.waterline.session.SessionRegistry;
import dev.waterline.sql.Statement;
import org.springframework.core.annotation.Order;
import org.springframework.stereotype.Component;

/**
 * Hooks' part of the group commit: one delivery per {@code message} hook of each new message's
 * chat, and for {@code offline} hooks one fan-out row per hook carrying the recipients with no
 * live session (expanded into one delivery each by {@link OfflineFanouts}, outside the commit),
 * inserted in the message's own transaction after its history row (H1: enqueued with the message,
 * never for a message that did not commit). What one message adds to a shared commit is bounded by
 * its chat's hooks ({@code max-hooks-per-chat}), never by hooks times members: the per-recipient
 * rows of ten offline hooks on a 500-member chat (5,010 a message) made a batch time out, and every
 * other send sharing that writer was refused. The hooks are found by the database, not a cache: the batch holds its chats' rows
 * locked, and creating or deleting a hook takes the chat row's lock too, so a hook sees exactly
 * the messages committed after its creation, on every node. The payload is built there too, from
 * the message's history row, written earlier in the same transaction.
 *
 * <p>A delivery of a hook whose breaker is not closed is born {@code held}: the claim never scans
 * it. After commit the workers whose slices got rows are woken.
 */
@Component
@Order(2)
class HookParticipant implements CommitParticipant {

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
                       'kind', m.kind, 'body', m.body, 'sentAt', ?::text, 'streamId', m.stream_id)::text,
                   CASE WHEN h.breaker = 'closed' THEN 'pending' ELSE 'held' END
            FROM h
            JOIN unnest(?::text[], ?::bigint[]) AS b(chat_id, seq) ON b.chat_id = h.chat_id
            CROSS JOIN LATERAL (
                SELECT mh.message_id, mh.correlation_id, mh.chat_id, mh.seq, mh.sender_id, mh.kind, mh.body, mh.stream_id
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

    static final Duration PRESENCE_WAIT = Duration.ofMillis(50);
    private static final Executor LOOKUPS = Executors.newVirtualThreadPerTaskExecutor();

    private final OfflineChats offlineChats;
    private final SessionRegistry sessions;
    private final Presence presence;
    private final HookWorkers workers;
    private final OfflineFanouts fanouts;
    private final HookMetrics metrics;

    HookParticipant(OfflineChats offlineChats, SessionRegistry sessions, Presence presence, HookWorkers workers,
                    OfflineFanouts fanouts, HookMetrics metrics) {
        this.offlineChats = offlineChats;
        this.sessions = sessions;
        this.presence = presence;
        this.workers = workers;
        this.fanouts = fanouts;
        this.metrics = metrics;
    }

    @Override
    public Contribution contribute(Batch batch) {
        int n = batch.messages().size();
        String[] chats = new String[n];
        long[] seqs = new long[n];
        Set<String> distinct = new HashSet<>();
        for (int i = 0; i < n; i++) {
            NewMessage m = batch.messages().get(i);
            chats[i] = m.chatId();
            seqs[i] = m.seq();
            distinct.add(m.chatId());
        }
        List<Long> ids = new ArrayList<>();
        int[] fanned = {0};
        List<Statement> statements = new ArrayList<>(2);
        statements.add(Statement.of(INSERT_MESSAGE_DELIVERIES, rs -> ids.add(rs.getLong(1)), distinct.toArray(String[]::new),
                batch.sentAt().toString(), chats, seqs));
        Statement offline = offline(batch, fanned);
        if (offline != null) {
            statements.add(offline);
        }
        return new Contribution() {
            @Override
            public List<Statement> statements() {
                return statements;
            }

            @Override
            public void committed(long committedAtMillis) {
                if (!ids.isEmpty()) {
                    metrics.enqueued(ids.size());
                    workers.wake(ids);
                }
                if (fanned[0] > 0) {
                    fanouts.wake();
                }
            }
        };
    }

    /** The offline fan-outs' statement, or null when no chat of the batch has an offline hook. */
    private Statement offline(Batch batch, int[] fanned) {
        if (offlineChats.isEmpty()) {
            return null;
        }
        List<NewMessage> concerned = new ArrayList<>();
        Set<String> notHere = new HashSet<>();
        for (NewMessage m : batch.messages()) {
            if (offlineChats.has(m.chatId())) {
                concerned.add(m);
                for (String r : m.recipients()) {
                    if (sessions.get(r) == null) {
                        notHere.add(r);
                    }
                }
            }
        }
        if (concerned.isEmpty()) {
            return null;
        }
        // live on another node counts as live; a lookup that fails counts everyone not here as
        // offline (a nudge too many is better than a lost one)
        Map<String, Location> elsewhere = notHere.isEmpty() || !presence.othersMayHold() ? Map.of() : lookup(notHere);
        List<String> chat = new ArrayList<>(), message = new ArrayList<>(), sender = new ArrayList<>(), user = new ArrayList<>();
        List<Long> seq = new ArrayList<>();
        for (NewMessage m : concerned) {
            for (String r : m.recipients()) {
                if (notHere.contains(r) && !elsewhere.containsKey(r)) {
                    chat.add(m.chatId());
                    message.add(m.messageId());
                    seq.add(m.seq());
                    sender.add(m.senderId());
                    user.add(r);
                }
            }
        }
        if (chat.isEmpty()) {
            return null;
        }
        return Statement.of(INSERT_OFFLINE_FANOUTS, rs -> fanned[0]++, chat.toArray(String[]::new), message.toArray(String[]::new),
                seq.stream().mapToLong(Long::longValue).toArray(), sender.toArray(String[]::new), user.toArray(String[]::new));
    }

    /**
     * Who of {@code users} is live on another node. This runs inside the group commit's
     * transaction (its chats locked), so it is bounded: past {@link #PRESENCE_WAIT} (Redis slow or
     * gone) or on a failure, nobody is, and those not here get their nudge.
     */
    private Map<String, Location> lookup(Collection<String> users) {
        try {
            return CompletableFuture.supplyAsync(() -> presence.elsewhere(users), LOOKUPS)
                    .get(PRESENCE_WAIT.toMillis(), TimeUnit.MILLISECONDS);
        }
        catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            metrics.presenceUnknown();
            return Map.of();
        }
        catch (ExecutionException | TimeoutException | RuntimeException e) {
            metrics.presenceUnknown();
            return Map.of();
        }
    }
}
