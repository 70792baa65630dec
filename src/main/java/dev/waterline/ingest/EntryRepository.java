package dev.waterline.ingest;

import java.sql.Timestamp;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import dev.waterline.sql.Statement;
import dev.waterline.sql.Statements;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Repository;

/**
 * The statements of the entries that name other entries (PROTOCOL.md §9; {@link Entries} decides
 * them): what a batch reads of the messages and files its entries name, in one round trip, and
 * what it writes for them, in the group commit's writes (after the history rows). Every statement
 * is keyed by chat first.
 */
@Repository
class EntryRepository {

    /**
     * 1: text[] message ids (targets and replies). The named messages, with the delete that erased
     * each (if one did: deleted_seq; the delete's own row, for its id and time, unless retention
     * took it first). By the unique message id; the caller checks the chat.
     */
    private static final String TARGETS = """
            SELECT h.message_id, h.chat_id, h.seq, h.kind, h.sender_id, h.sent_at, h.deleted_seq, d.message_id, d.sent_at
            FROM message_history h
            LEFT JOIN message_history d ON d.chat_id = h.chat_id AND d.seq = h.deleted_seq
            WHERE h.message_id = ANY (?::text[])
            """;

    /** 1, 2: pairwise text[] target ids and users. Each pair's reactions now. */
    private static final String REACTIONS = """
            SELECT u.target_id, u.user_id, r.emoji
            FROM unnest(?::text[], ?::text[]) AS u(target_id, user_id)
            JOIN message_history h ON h.message_id = u.target_id
            JOIN message_reactions r ON r.chat_id = h.chat_id AND r.target_seq = h.seq AND r.user_id = u.user_id
            """;

    /** 1: text[] target ids of reactions. The distinct emoji on each (at most max-distinct-reactions a message). */
    private static final String EMOJI = """
            SELECT DISTINCT u.target_id, r.emoji
            FROM unnest(?::text[]) AS u(target_id)
            JOIN message_history h ON h.message_id = u.target_id
            JOIN message_reactions r ON r.chat_id = h.chat_id AND r.target_seq = h.seq
            """;

    /**
     * 1: text[] attachment ids, 2: text[] the batch's chats, 3: text[] its senders. The named files
     * of the batch's chats and senders (no other can be sent by it), locked (in id order) so that
     * the orphan sweep cannot delete one this batch is about to send; a file of another chat is not
     * locked, so a batch never waits on a row of a chat it does not hold.
     */
    private static final String ATTACHMENTS = """
            SELECT attachment_id, chat_id, uploader_id, state = 'stored' AND message_seq IS NULL, content_type, size, name, sha256
            FROM attachments
            WHERE attachment_id = ANY (?::text[]) AND chat_id = ANY (?::text[]) AND uploader_id = ANY (?::text[])
            ORDER BY attachment_id FOR UPDATE
            """;

    /** 1: text[] target ids of deletes. The edits of each (their text goes with it). */
    private static final String EDITS = """
            SELECT e.target_id, e.message_id
            FROM message_history t
            JOIN message_history e ON e.chat_id = t.chat_id AND e.target_id = t.message_id AND e.kind = 'edit'
            WHERE t.message_id = ANY (?::text[])
            """;

    private static final String READS = TARGETS.strip() + ";\n" + REACTIONS.strip() + ";\n" + EMOJI.strip() + ";\n"
            + ATTACHMENTS.strip() + ";\n" + EDITS.strip();

    /**
     * History rows with every entry's fields. 1: sent_at, 2..14: pairwise arrays of chat id, seq,
     * message id, sender, correlation id, body, kind, stream id, reply to, target id, emoji, on, and
     * the chat's count of text and stream entries up to the row (V14).
     */
    static final String INSERT_ENTRIES = """
            INSERT INTO message_history (chat_id, seq, message_id, sender_id, correlation_id, body, sent_at, kind, stream_id,
                                         reply_to, target_id, emoji, reaction_on, countable)
            SELECT chat_id, seq, message_id, sender_id, correlation_id, body, ?, kind, stream_id, reply_to, target_id, emoji,
                   reaction_on, countable
            FROM unnest(?::text[], ?::bigint[], ?::text[], ?::text[], ?::text[], ?::text[], ?::text[], ?::text[], ?::text[],
                        ?::text[], ?::text[], ?::boolean[], ?::bigint[])
                 AS h(chat_id, seq, message_id, sender_id, correlation_id, body, kind, stream_id, reply_to, target_id, emoji,
                      reaction_on, countable)
            """;

    /** 1: edited_at, 2..4: pairwise chat ids, seqs, bodies. The current text of each edited message. */
    private static final String EDIT_TARGETS = """
            UPDATE message_history h SET body = v.body, edited_at = ?
            FROM unnest(?::text[], ?::bigint[], ?::text[]) AS v(chat_id, seq, body)
            WHERE h.chat_id = v.chat_id AND h.seq = v.seq
            """;

    /** 1..4: pairwise chat ids, target seqs, users, emoji; 5: entry seqs. */
    private static final String REACTIONS_ON = """
            INSERT INTO message_reactions (chat_id, target_seq, user_id, emoji, entry_seq)
            SELECT * FROM unnest(?::text[], ?::bigint[], ?::text[], ?::text[], ?::bigint[])
            ON CONFLICT (chat_id, target_seq, user_id, emoji) DO UPDATE SET entry_seq = EXCLUDED.entry_seq
            """;

    /** 1..4: pairwise chat ids, target seqs, users, emoji. */
    private static final String REACTIONS_OFF = """
            DELETE FROM message_reactions r
            USING unnest(?::text[], ?::bigint[], ?::text[], ?::text[]) AS v(chat_id, target_seq, user_id, emoji)
            WHERE r.chat_id = v.chat_id AND r.target_seq = v.target_seq AND r.user_id = v.user_id AND r.emoji = v.emoji
            """;

    /** 1..3: pairwise attachment ids, seqs, positions. The files now belong to their message. */
    private static final String LINK_ATTACHMENTS = """
            UPDATE attachments a SET message_seq = v.seq, position = v.position
            FROM unnest(?::text[], ?::bigint[], ?::int[]) AS v(attachment_id, seq, position)
            WHERE a.attachment_id = v.attachment_id
            """;

    /*
     * A delete erases (M1). The target keeps only that it was there (its row, with deleted_seq);
     * the text of its edits, its reactions and its files go (the files' triggers erase their parts
     * and queue their removal from the store, V13). The copies in the outbox and hook deliveries are
     * erased by those participants (CommitParticipant.Batch.erased).
     */

    /** 1..3: pairwise chat ids, target seqs, delete seqs. */
    private static final String ERASE_TARGETS = """
            UPDATE message_history h SET body = '', reply_to = NULL, edited_at = NULL, deleted_seq = v.deleted_seq
            FROM unnest(?::text[], ?::bigint[], ?::bigint[]) AS v(chat_id, seq, deleted_seq)
            WHERE h.chat_id = v.chat_id AND h.seq = v.seq
            """;

    /** 1, 2: pairwise chat ids, target ids (the partial index message_history_targets). */
    private static final String ERASE_EDITS = """
            UPDATE message_history e SET body = ''
            FROM unnest(?::text[], ?::text[]) AS v(chat_id, target_id)
            WHERE e.chat_id = v.chat_id AND e.target_id = v.target_id AND e.kind = 'edit' AND e.body <> ''
            """;

    /** 1, 2: pairwise chat ids, target seqs. */
    private static final String ERASE_REACTIONS = """
            DELETE FROM message_reactions r USING unnest(?::text[], ?::bigint[]) AS v(chat_id, seq)
            WHERE r.chat_id = v.chat_id AND r.target_seq = v.seq
            """;

    /** 1, 2: pairwise chat ids, target seqs. */
    private static final String ERASE_ATTACHMENTS = """
            DELETE FROM attachments a USING unnest(?::text[], ?::bigint[]) AS v(chat_id, seq)
            WHERE a.chat_id = v.chat_id AND a.message_seq = v.seq
            """;

    private final JdbcTemplate jdbc;

    EntryRepository(JdbcTemplate jdbc) {
        this.jdbc = jdbc;
    }

    /** What the database holds about what {@code requests} name, in one round trip. */
    Entries.Known read(List<SendRequest> requests) {
        Set<String> ids = new LinkedHashSet<>();
        List<String> pairTargets = new ArrayList<>();
        List<String> pairUsers = new ArrayList<>();
        Set<String> files = new LinkedHashSet<>();
        Set<String> deletes = new LinkedHashSet<>();
        Set<String> reacted = new LinkedHashSet<>();
        Set<String> chats = new LinkedHashSet<>();
        Set<String> senders = new LinkedHashSet<>();
        for (SendRequest s : requests) {
            chats.add(s.chatId());
            senders.add(s.senderId());
            SendRequest.Refs r = s.refs();
            if (r.targetId() != null) {
                ids.add(r.targetId());
                if (SendRequest.REACTION.equals(s.kind())) {
                    pairTargets.add(r.targetId());
                    pairUsers.add(s.senderId());
                    reacted.add(r.targetId());
                }
                if (SendRequest.DELETE.equals(s.kind())) {
                    deletes.add(r.targetId());
                }
            }
            if (r.replyTo() != null) {
                ids.add(r.replyTo());
            }
            files.addAll(r.attachments());
        }
        Map<String, Entries.Target> targets = new HashMap<>();
        Map<String, Set<String>> reactions = new HashMap<>();
        Map<String, Set<String>> emoji = new HashMap<>();
        Map<String, Entries.Attachment> attachments = new HashMap<>();
        Map<String, List<String>> edits = new HashMap<>();
        Statements.run(jdbc, READS, List.of(
                rs -> {
                    long deletedSeq = rs.getLong(7);
                    boolean deleted = !rs.wasNull();
                    String sentAt = rs.getTimestamp(6).toInstant().toString();
                    // deleted is the target's own mark; the delete's row names the answer (the target's, if it is gone)
                    String deleteId = rs.getString(8);
                    java.sql.Timestamp deleteAt = rs.getTimestamp(9);
                    targets.put(rs.getString(1), new Entries.Target(rs.getString(1), rs.getString(2), rs.getLong(3),
                            rs.getString(4), rs.getString(5), sentAt, !deleted ? null : new Entries.Deletion(
                                    deleteId == null ? rs.getString(1) : deleteId, deletedSeq,
                                    deleteAt == null ? sentAt : deleteAt.toInstant().toString())));
                },
                rs -> reactions.computeIfAbsent(Entries.pair(rs.getString(1), rs.getString(2)), k -> new LinkedHashSet<>())
                        .add(rs.getString(3)),
                rs -> emoji.computeIfAbsent(rs.getString(1), k -> new LinkedHashSet<>()).add(rs.getString(2)),
                rs -> attachments.put(rs.getString(1), new Entries.Attachment(rs.getString(1), rs.getString(2), rs.getString(3),
                        rs.getBoolean(4), rs.getString(5), rs.getLong(6), rs.getString(7), rs.getString(8))),
                rs -> edits.computeIfAbsent(rs.getString(1), k -> new ArrayList<>()).add(rs.getString(2))),
                ids.toArray(String[]::new), pairTargets.toArray(String[]::new), pairUsers.toArray(String[]::new),
                reacted.toArray(String[]::new), files.toArray(String[]::new), chats.toArray(String[]::new),
                senders.toArray(String[]::new), deletes.toArray(String[]::new));
        return new Entries.Known(targets, reactions, emoji, attachments, edits);
    }

    /** The writes {@code entries} decided, to run after the history rows, in order. */
    static List<Statement> writes(Entries entries, Timestamp sentAt) {
        List<Statement> out = new ArrayList<>();
        if (!entries.links().isEmpty()) {
            List<Entries.Link> l = entries.links();
            out.add(Statement.of(LINK_ATTACHMENTS, null, l.stream().map(Entries.Link::attachmentId).toArray(String[]::new),
                    l.stream().mapToLong(Entries.Link::seq).toArray(),
                    l.stream().mapToInt(Entries.Link::position).toArray()));
        }
        List<String[]> edits = entries.edits();
        if (!edits.isEmpty()) {
            out.add(Statement.of(EDIT_TARGETS, null, sentAt, edits.stream().map(e -> e[0]).toArray(String[]::new),
                    edits.stream().mapToLong(e -> Long.parseLong(e[1])).toArray(), edits.stream().map(e -> e[2]).toArray(String[]::new)));
        }
        List<Entries.Reaction> on = entries.reactionsOn();
        if (!on.isEmpty()) {
            out.add(Statement.of(REACTIONS_ON, null, on.stream().map(Entries.Reaction::chatId).toArray(String[]::new),
                    on.stream().mapToLong(Entries.Reaction::targetSeq).toArray(),
                    on.stream().map(Entries.Reaction::userId).toArray(String[]::new),
                    on.stream().map(Entries.Reaction::emoji).toArray(String[]::new),
                    on.stream().mapToLong(Entries.Reaction::entrySeq).toArray()));
        }
        List<Entries.Reaction> off = entries.reactionsOff();
        if (!off.isEmpty()) {
            out.add(Statement.of(REACTIONS_OFF, null, off.stream().map(Entries.Reaction::chatId).toArray(String[]::new),
                    off.stream().mapToLong(Entries.Reaction::targetSeq).toArray(),
                    off.stream().map(Entries.Reaction::userId).toArray(String[]::new),
                    off.stream().map(Entries.Reaction::emoji).toArray(String[]::new)));
        }
        List<Entries.Erasure> erasures = entries.erasures();
        if (!erasures.isEmpty()) {
            String[] chats = erasures.stream().map(Entries.Erasure::chatId).toArray(String[]::new);
            long[] seqs = erasures.stream().mapToLong(Entries.Erasure::targetSeq).toArray();
            out.add(Statement.of(ERASE_TARGETS, null, chats, seqs, erasures.stream().mapToLong(Entries.Erasure::deleteSeq).toArray()));
            out.add(Statement.of(ERASE_EDITS, null, chats, erasures.stream().map(Entries.Erasure::targetId).toArray(String[]::new)));
            out.add(Statement.of(ERASE_REACTIONS, null, chats, seqs));
            out.add(Statement.of(ERASE_ATTACHMENTS, null, chats, seqs));
        }
        return out;
    }

}
