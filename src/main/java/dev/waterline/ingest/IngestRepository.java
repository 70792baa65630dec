package dev.waterline.ingest;

import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

import com.github.f4b6a3.ulid.UlidCreator;
import dev.waterline.commit.ChatMessage;
import dev.waterline.commit.EntryFields;
import dev.waterline.commit.Transaction;
import dev.waterline.sql.SqlTransaction;
import dev.waterline.sql.Statement;
import dev.waterline.sql.Statements;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Repository;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * The group-commit transaction. Everything one batch writes happens in one transaction, in
 * this order: look up already-used idempotency keys; lock the batch's chat rows in id order
 * (so concurrent batches never deadlock) and read their last seq; read their members; reserve
 * each chat's seq range and keep its chat-list counts ({@link ChatListCounts}); insert history;
 * move the senders' own read positions; claim the idempotency keys; then what each
 * {@link CommitParticipant} adds for the new messages (the delivery capability's one outbox row
 * per recipient). Nothing is visible until commit, and every seq of a chat commits in seq order
 * because the chat row stays locked until then (I1, I6, I7).
 *
 * <p>The statements go to PostgreSQL in two round trips (then the commit, a third): the three
 * reads as one multi-statement execution, the writes (ingest's and the participants') as
 * another ({@link Statements}: the driver sends them as separate statements, in order, and
 * waits once). Each round trip is
 * a wake-up of a database backend and of the writer, and on a machine whose cores are busy each
 * wake-up waits its turn: at moderate load the waits, not the statements, were the commit's time.
 */
@Repository
class IngestRepository {

    /**
     * 1: idempotency window in ms, 2: text[] senders, 3: text[] correlation ids (pairwise). One
     * primary-key probe per key, forced by the LATERAL ... LIMIT 1 (which the planner cannot turn
     * into a join): as a plain join, with the time range in its WHERE clause, the server's plans
     * read ~2000 index pages a batch (a whole-index merge or a range scan over the last day's
     * keys, 28-32 ms), most of the database's time under load. The window is checked on the row.
     */
    private static final String USED_KEYS = """
            SELECT k.sender_id, k.correlation_id, k.chat_id, k.seq, k.message_id, k.sent_at,
                   k.created_at > now() - (? * interval '1 millisecond') AS live,
                   e.kind, e.target_id, e.emoji, e.reaction_on
            FROM unnest(?::text[], ?::text[]) AS u(sender_id, correlation_id)
            CROSS JOIN LATERAL (
                SELECT * FROM send_idempotency i
                WHERE i.sender_id = u.sender_id AND i.correlation_id = u.correlation_id
                LIMIT 1) k
            LEFT JOIN LATERAL (
                SELECT h.kind, h.target_id, h.emoji, h.reaction_on FROM message_history h
                WHERE h.chat_id = k.chat_id AND h.seq = k.seq) e ON true
            """;

    /**
     * 1: text[] chat ids. Locks in a fixed order; tells which chats exist, their last seq and
     * their count of text and stream entries, which cannot move while the lock is held.
     */
    private static final String LOCK_CHATS = """
            SELECT chat_id, last_seq, countable FROM chats WHERE chat_id = ANY (?::text[]) ORDER BY chat_id FOR UPDATE
            """;

    /** 1: text[] chat ids. */
    private static final String MEMBERS = """
            SELECT chat_id, user_id FROM chat_members WHERE chat_id = ANY (?::text[])
            """;

    /** USED_KEYS, LOCK_CHATS and MEMBERS in one round trip, in that order. */
    private static final String READS = USED_KEYS.strip() + ";\n" + LOCK_CHATS.strip() + ";\n" + MEMBERS.strip();

    /**
     * 1..4: pairwise arrays of chat id, entries, text and stream entries among them, the seq of the
     * last of those (null when none). Reserves each chat's seqs and keeps its chat-list counts
     * (V14: countable, last_message_seq) in the same row update. Returns each chat's new last seq.
     */
    private static final String RESERVE_SEQS = """
            UPDATE chats c SET last_seq = c.last_seq + v.n, countable = c.countable + v.counted,
                               last_message_seq = COALESCE(v.last_message_seq, c.last_message_seq)
            FROM unnest(?::text[], ?::bigint[], ?::bigint[], ?::bigint[]) AS v(chat_id, n, counted, last_message_seq)
            WHERE c.chat_id = v.chat_id
            RETURNING c.chat_id, c.last_seq
            """;

    /**
     * 1: sent_at for the batch, 2..10: pairwise arrays of chat id, seq, message id, sender,
     * correlation id, body, kind, stream id (null but for a stream's opening message), and the
     * chat's count of text and stream entries up to the row (V14).
     */
    private static final String INSERT_HISTORY = """
            INSERT INTO message_history (chat_id, seq, message_id, sender_id, correlation_id, body, sent_at, kind, stream_id, countable)
            SELECT chat_id, seq, message_id, sender_id, correlation_id, body, ?, kind, stream_id, countable
            FROM unnest(?::text[], ?::bigint[], ?::text[], ?::text[], ?::text[], ?::text[], ?::text[], ?::text[], ?::bigint[])
                 AS h(chat_id, seq, message_id, sender_id, correlation_id, body, kind, stream_id, countable)
            """;

    /**
     * Sending is reading (PROTOCOL.md §10): a member's text or stream entry moves their
     * {@code own_seq} (V14) to its seq in its own commit, and a chat list counts as unread only what
     * lies past the later of that and their read receipt, so that a member's own entries are never
     * unread and the count never has to tell them apart. The rows belong to chats this transaction
     * has locked, and every other writer of a membership row locks its chat first: no new lock
     * order. 1..3: pairwise arrays of chat id, sender, seq (one per pair: its last such entry).
     */
    private static final String OWN_ENTRIES = """
            UPDATE chat_members m SET own_seq = v.seq
            FROM unnest(?::text[], ?::text[], ?::bigint[]) AS v(chat_id, user_id, seq)
            WHERE m.chat_id = v.chat_id AND m.user_id = v.user_id AND m.own_seq < v.seq
            """;

    /**
     * Claims each key, or takes over one older than the window, in key order so that two batches
     * never wait on each other crosswise. A key another transaction holds within the window
     * returns no row, and the batch is retried. 1: sent_at, 2..6: pairwise
     * arrays of sender, correlation id, chat id, seq, message id, 7: window in ms.
     */
    private static final String CLAIM_KEYS = """
            INSERT INTO send_idempotency (sender_id, correlation_id, chat_id, seq, message_id, sent_at)
            SELECT sender_id, correlation_id, chat_id, seq, message_id, ?
            FROM unnest(?::text[], ?::text[], ?::text[], ?::bigint[], ?::text[])
                 AS k(sender_id, correlation_id, chat_id, seq, message_id)
            ORDER BY sender_id, correlation_id
            ON CONFLICT (sender_id, correlation_id) DO UPDATE
              SET chat_id = EXCLUDED.chat_id, seq = EXCLUDED.seq, message_id = EXCLUDED.message_id,
                  sent_at = EXCLUDED.sent_at, created_at = EXCLUDED.created_at
              WHERE send_idempotency.created_at <= now() - (? * interval '1 millisecond')
            RETURNING 1
            """;

    /** 1: cut-off, 2: chunk. */
    private static final String PURGE_KEYS = """
            DELETE FROM send_idempotency
            WHERE ctid = ANY (ARRAY(SELECT ctid FROM send_idempotency WHERE created_at < ? LIMIT ?))
            """;

    /** What became of one send key. */
    sealed interface Outcome {
    }

    /**
     * Accepted: a new entry, or ({@code replay}) one made before (the same key, or the first delete
     * of a message deleted twice), or ({@code unchanged}) none, the request changing nothing (then
     * the ids are the target's).
     */
    record Accepted(String messageId, String chatId, long seq, String sentAt, boolean replay, boolean unchanged)
            implements Outcome {
    }

    /** Refused by the rules of the entries (PROTOCOL.md §9): {@code forbidden}, {@code invalid}, {@code not_found}. */
    record Rejected(String code, String message) implements Outcome {
    }

    record NotFound() implements Outcome {
    }

    /** What became of every key, and what each participant added to the transaction (to hand on after commit). */
    record Result(Map<SendRequest.Key, Outcome> outcomes, List<CommitParticipant.Contribution> contributions,
                  long committedAtMillis) {
    }

    /**
     * What the database answered contradicts what the batch's own locks guarantee (I7): no one
     * send's doing and no outage, so the batch is answered {@code unavailable} (its clients retry)
     * and the breach is logged as an error.
     */
    static final class InvariantBroken extends RuntimeException {
        InvariantBroken(String message) {
            super(message);
        }
    }

    /** A concurrent batch claimed one of this batch's keys first: roll back and try again. */
    static final class KeyTaken extends RuntimeException {
        KeyTaken() {
            super("an idempotency key was claimed by a concurrent batch", null, false, false);
        }
    }

    private final JdbcTemplate jdbc;
    private final TransactionTemplate tx;
    private final List<CommitParticipant> participants;
    private final EntryRepository entryStore;
    private final int maxReactions;
    private final int maxDistinct;

    IngestRepository(JdbcTemplate jdbc, PlatformTransactionManager transactions, InboundProperties properties,
                     List<CommitParticipant> participants, EntryRepository entryStore, MessageProperties messages) {
        this.jdbc = jdbc;
        this.entryStore = entryStore;
        this.maxReactions = messages.maxReactionsPerUser();
        this.maxDistinct = messages.maxDistinctReactions();
        this.participants = List.copyOf(participants);
        this.tx = new TransactionTemplate(transactions);
        // each statement gets what is left of it as its timeout (Spring applies it through the
        // JdbcTemplate), so a batch never waits on a stuck database for longer
        this.tx.setTimeout((int) Math.max(1, properties.commitTimeout().toSeconds()));
    }

    /** Persists one batch of sends with distinct keys. */
    Result commit(List<SendRequest> sends, Instant now, Duration window) {
        Result result = tx.execute(status -> commitInTransaction(sends, now, window));
        // the moment delivery latency is measured from: the commit has returned
        return new Result(result.outcomes(), result.contributions(), System.currentTimeMillis());
    }

    private Result commitInTransaction(List<SendRequest> sends, Instant now, Duration window) {
        Map<SendRequest.Key, Outcome> outcomes = new HashMap<>();
        Timestamp sentAt = Timestamp.from(now);
        String sentAtText = now.toString();

        String[] senders = sends.stream().map(SendRequest::senderId).toArray(String[]::new);
        String[] correlations = sends.stream().map(SendRequest::correlationId).toArray(String[]::new);
        // The chats of every send are locked, replays' included (the lookup that finds replays
        // is in the same round trip): a replay's chat is usually a fresh send's too, and a batch
        // of replays alone, rare, waits for its chats' locks like any other batch.
        String[] chatIds = sends.stream().map(SendRequest::chatId).distinct().sorted().toArray(String[]::new);
        Map<String, Long> lastSeq = new HashMap<>();
        Map<String, Long> countable = new HashMap<>();
        Map<String, TreeSet<String>> members = new HashMap<>();
        Map<SendRequest.Key, SendRequest> byKey = new HashMap<>();
        sends.forEach(s -> byKey.put(s.key(), s));
        Statements.run(jdbc, READS, List.of(
                rs -> {
                    if (rs.getBoolean(7)) {
                        SendRequest.Key key = new SendRequest.Key(rs.getString(1), rs.getString(2));
                        Object on = rs.getObject(11);
                        outcomes.put(key, sameRequest(byKey.get(key), rs.getString(8), rs.getString(9), rs.getString(10), (Boolean) on)
                                ? new Accepted(rs.getString(5), rs.getString(3), rs.getLong(4), rs.getTimestamp(6).toInstant().toString(),
                                        true, false)
                                : new Rejected("invalid", "this correlationId was used by another request (a different kind,"
                                        + " message or reaction); use a new one"));
                    }
                },
                rs -> {
                    lastSeq.put(rs.getString(1), rs.getLong(2));
                    countable.put(rs.getString(1), rs.getLong(3));
                },
                rs -> members.computeIfAbsent(rs.getString(1), k -> new TreeSet<>()).add(rs.getString(2))),
                window.toMillis(), senders, correlations, chatIds, chatIds);

        List<SendRequest> valid = new ArrayList<>(sends.size());
        boolean namesOthers = false;
        for (SendRequest s : sends) {
            if (outcomes.containsKey(s.key())) {
                continue;
            }
            TreeSet<String> m = members.get(s.chatId());
            if (!lastSeq.containsKey(s.chatId()) || m == null || !m.contains(s.senderId())) {
                outcomes.put(s.key(), new NotFound());
            }
            else {
                valid.add(s);
                namesOthers |= Entries.concerns(s);
            }
        }
        // Entries that name others (edits, deletes, reactions, replies, attachments) are decided
        // on what the database holds of what they name: one more round trip, only for a batch
        // that has one, under the chat locks already held.
        Entries entries = namesOthers
                ? new Entries(entryStore.read(valid.stream().filter(Entries::concerns).toList()), maxReactions, maxDistinct)
                : null;

        Map<String, Long> nextSeq = new HashMap<>();
        Map<String, Long> perChat = new LinkedHashMap<>();
        List<SendRequest> made = new ArrayList<>(valid.size());
        List<String> madeIds = new ArrayList<>(valid.size());
        List<String> madeFields = new ArrayList<>(valid.size());
        for (SendRequest s : valid) {
            String fields = SendRequest.STREAM.equals(s.kind()) ? EntryFields.stream(s.streamId()) : null;
            if (entries != null && Entries.concerns(s)) {
                Entries.Decision d = entries.decide(s);
                switch (d) {
                    case Entries.Refuse r -> {
                        outcomes.put(s.key(), new Rejected(r.code(), r.message()));
                        continue;
                    }
                    case Entries.Unchanged u -> {
                        outcomes.put(s.key(), new Accepted(u.target().messageId(), s.chatId(), u.target().seq(),
                                u.target().sentAt(), true, true));
                        continue;
                    }
                    case Entries.AlreadyDeleted a -> {
                        outcomes.put(s.key(), new Accepted(a.deletion().messageId(), a.chatId(), a.deletion().seq(),
                                a.deletion().sentAt(), true, false));
                        continue;
                    }
                    case Entries.Make mk -> fields = mk.fields();
                }
            }
            long seq = nextSeq.computeIfAbsent(s.chatId(), c -> lastSeq.get(c) + 1);
            nextSeq.put(s.chatId(), seq + 1);
            perChat.merge(s.chatId(), 1L, Long::sum);
            String messageId = UlidCreator.getMonotonicUlid().toString();
            if (entries != null && Entries.concerns(s)) {
                entries.made(s, seq, messageId, sentAtText);
            }
            made.add(s);
            madeIds.add(messageId);
            madeFields.add(fields);
            outcomes.put(s.key(), new Accepted(messageId, s.chatId(), seq, sentAtText, false, false));
        }
        if (made.isEmpty()) {
            return new Result(outcomes, List.of(), 0);
        }
        Set<String> erased = entries == null ? Set.of() : entries.erased();

        int n = made.size();
        String[] hChat = new String[n], hMsg = new String[n], hSender = new String[n], hCorr = new String[n], hBody = new String[n],
                hKind = new String[n], hStream = new String[n];
        long[] hSeq = new long[n];
        long[] hCountable = new long[n];
        ChatListCounts counts = new ChatListCounts(countable);
        List<CommitParticipant.NewMessage> created = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            SendRequest s = made.get(i);
            Accepted a = (Accepted) outcomes.get(s.key());
            hCountable[i] = counts.add(s.chatId(), s.senderId(), a.seq(), s.kind());
            String messageId = madeIds.get(i);
            hChat[i] = s.chatId();
            hSeq[i] = a.seq();
            hMsg[i] = messageId;
            hSender[i] = s.senderId();
            hCorr[i] = s.correlationId();
            hBody[i] = s.body();
            hKind[i] = s.kind();
            hStream[i] = s.streamId();
            List<String> recipients = new ArrayList<>(members.get(s.chatId()).size());
            for (String member : members.get(s.chatId())) {
                if (!member.equals(s.senderId())) {
                    recipients.add(member);
                }
            }
            ChatMessage message = new ChatMessage(s.chatId(), a.seq(), messageId, s.senderId(), s.correlationId(), s.body(),
                    s.kind(), madeFields.get(i));
            // an edit of this batch whose message a later delete of it erased: its text goes now
            created.add(new CommitParticipant.NewMessage(erased.contains(messageId) ? message.erased() : message, recipients,
                    s.streamId()));
        }

        int[] claimed = new int[1];
        List<Statement> writes = new ArrayList<>();
        String[] reserved = perChat.keySet().toArray(String[]::new);
        writes.add(Statement.of(RESERVE_SEQS, rs -> {
            String chat = rs.getString(1);
            if (rs.getLong(2) != lastSeq.get(chat) + perChat.get(chat)) {
                throw new InvariantBroken("seq of chat " + chat + " moved under its lock");
            }
        }, reserved, perChat.values().stream().mapToLong(Long::longValue).toArray(), counts.countedIn(reserved),
                counts.lastMessageSeqs(reserved)));
        if (entries == null) {
            writes.add(Statement.of(INSERT_HISTORY, null, sentAt, hChat, hSeq, hMsg, hSender, hCorr, hBody, hKind, hStream,
                    hCountable));
        }
        else {
            String[] replyTo = new String[n], target = new String[n], emoji = new String[n];
            Boolean[] on = new Boolean[n];
            for (int i = 0; i < n; i++) {
                SendRequest.Refs r = made.get(i).refs();
                replyTo[i] = r.replyTo();
                target[i] = r.targetId();
                emoji[i] = r.emoji();
                on[i] = SendRequest.REACTION.equals(made.get(i).kind()) ? r.on() : null;
            }
            writes.add(Statement.of(EntryRepository.INSERT_ENTRIES, null, sentAt, hChat, hSeq, hMsg, hSender, hCorr, hBody, hKind,
                    hStream, replyTo, target, emoji, on, hCountable));
            writes.addAll(EntryRepository.writes(entries, sentAt));
        }
        ChatListCounts.OwnEntries own = counts.ownEntries();
        if (own.chatIds().length > 0) {
            writes.add(Statement.of(OWN_ENTRIES, null, own.chatIds(), own.userIds(), own.seqs()));
        }
        writes.add(Statement.of(CLAIM_KEYS, rs -> claimed[0]++, sentAt, hSender, hCorr, hChat, hSeq, hMsg, window.toMillis()));
        // after the history rows (I1), in the same round trip
        CommitParticipant.Batch batch = new CommitParticipant.Batch(List.copyOf(created), now, List.copyOf(erased));
        List<CommitParticipant.Contribution> contributions = new ArrayList<>(participants.size());
        Transaction tx = transaction(writes::add);
        for (CommitParticipant p : participants) {
            CommitParticipant.Contribution c = p.contribute(batch);
            if (c != null) {
                contributions.add(c);
                c.join(tx);
            }
        }
        Statements.run(jdbc, writes);
        if (claimed[0] != n) {
            throw new KeyTaken();
        }
        return new Result(outcomes, contributions, 0);
    }

    /**
     * Whether a retry {@code s} asks for what the entry its key made was ({@code kind}, its target,
     * emoji and {@code on}; all null when retention took the entry): an edit, delete or reaction
     * answers the first only when it is the same change, so that a key reused for another change
     * is refused, not answered as if it had been made. A send is answered as it always was.
     */
    private static boolean sameRequest(SendRequest s, String kind, String targetId, String emoji, Boolean on) {
        if (s == null || kind == null) {
            return true;
        }
        boolean entry = Entries.concernsKind(s.kind()) || Entries.concernsKind(kind);
        if (!entry) {
            return true;
        }
        SendRequest.Refs r = s.refs();
        return kind.equals(s.kind()) && java.util.Objects.equals(targetId, r.targetId())
                && java.util.Objects.equals(emoji, r.emoji())
                && (!SendRequest.REACTION.equals(kind) || java.util.Objects.equals(on, r.on()));
    }

    /** This attempt's transaction as the participants join it: statements they add run after ingest's writes. */
    private static Transaction transaction(SqlTransaction writes) {
        return new Transaction() {
            @Override
            public <T> T unwrap(Class<T> kind) {
                if (kind != SqlTransaction.class) {
                    throw new IllegalArgumentException("the group commit is a PostgreSQL transaction, not a " + kind.getName());
                }
                return kind.cast(writes);
            }
        };
    }

    int purgeKeysOlderThan(Instant cutoff, int chunk) {
        return jdbc.update(PURGE_KEYS, Timestamp.from(cutoff), chunk);
    }
}
