package dev.waterline.ingest;

import java.time.Instant;
import java.util.List;

import dev.waterline.commit.ChatMessage;
import dev.waterline.commit.Transaction;
import dev.waterline.sql.SqlTransaction;
import dev.waterline.sql.Statement;

/**
 * A capability that adds rows to the group commit's transaction for the messages it creates,
 * without ingest knowing its tables: the outbox rows (delivery), later a stream's opening or one
 * hook delivery per message. Its statements run in the same transaction as the history rows,
 * after them, in the same round trip as ingest's own writes; so they commit, or roll back, with
 * the messages (I1), and nothing the participant does is visible before {@code accepted} is owed.
 *
 * <p>Participants are asked once per transaction attempt: a batch that rolls back (and is tried
 * again, or split) asks again, and a contribution of an attempt that rolled back is dropped.
 */
public interface CommitParticipant {

    /** What this participant adds for {@code batch}; {@code null} when it adds nothing. */
    Contribution contribute(Batch batch);

    /**
     * The new entries of one group commit (replays of an earlier send are not among them), and the
     * ids of the entries whose text a delete of this commit erased ({@code erased}: the deleted
     * messages and their edits, PROTOCOL.md §9): a participant that keeps a copy of an entry's text
     * erases its copies of these in the same transaction (M1).
     */
    record Batch(List<NewMessage> messages, Instant sentAt, List<String> erased) {

        public Batch(List<NewMessage> messages, Instant sentAt) {
            this(messages, sentAt, List.of());
        }
    }

    /**
     * One message about to be committed, with the members it goes to (the chat's members but its
     * sender), and the stream it opens (a {@code stream} entry's; null otherwise). The accessors of the message's fields ({@link #chatId()}, {@link #seq()}, ...) read
     * through {@code message}.
     */
    record NewMessage(ChatMessage message, List<String> recipients, String streamId) {

        /** An entry that opens no stream. */
        public NewMessage(ChatMessage message, List<String> recipients) {
            this(message, recipients, null);
        }

        public String chatId() {
            return message.chatId();
        }

        public long seq() {
            return message.seq();
        }

        public String messageId() {
            return message.messageId();
        }

        public String senderId() {
            return message.senderId();
        }

        public String correlationId() {
            return message.correlationId();
        }

        public String body() {
            return message.body();
        }

        public String kind() {
            return message.kind();
        }

        public String fields() {
            return message.fields();
        }
    }


    /** A participant's part of one transaction. */
    interface Contribution {

        /**
         * Statements for the batch's transaction; each with a row handler if it returns rows. For
         * a participant whose rows are PostgreSQL statements of its own; one that writes through a
         * port joins with {@link #join} instead and returns none.
         */
        default List<Statement> statements() {
            return List.of();
        }

        /**
         * Adds this participant's part to the group commit's transaction {@code tx} (ingest opens
         * and owns it), after the history rows. The default adds {@link #statements()} to it as a
         * PostgreSQL transaction; a participant that writes through a port hands {@code tx} to the
         * port, whose adapter unwraps it to its own kind (the outbox's append).
         */
        default void join(Transaction tx) {
            SqlTransaction sql = tx.unwrap(SqlTransaction.class);
            statements().forEach(sql::add);
        }

        /**
         * The transaction committed, {@code committedAtMillis} (epoch ms) as its commit returned:
         * hand on what the statements made. Runs on the group-commit writer after the senders were
         * answered; it must not wait for long, and what it throws is logged and counted, not retried
         * (the rows are committed).
         */
        void committed(long committedAtMillis);
    }
}
