package dev.waterline.outbox;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;

import dev.waterline.commit.ChatMessage;
import dev.waterline.commit.Transaction;

/**
 * The delivery buffer: one row per recipient of each accepted message, from the message's own
 * transaction until the recipient acked it or left live delivery and reclaim removed it. Each
 * row's id is its {@code deliveryId}, a position in the buffer. A port: PostgreSQL's
 * {@code outbox} table is the adapter today ({@code outbox.postgres}); a Kafka topic keyed by
 * recipient is the one the design names next.
 *
 * <p>Every read is in id order from the floor (no row lies below it), as a log would serve it.
 */
public interface OutboxStore {

    /**
     * One delivery owed: a message for one of its recipients, as the group commit writes it (the
     * deliveries of one message share its {@link ChatMessage}).
     */
    record Delivery(String recipientId, ChatMessage message) {
    }

    /** The rows of one group commit: their write in its transaction, and what it made. */
    interface Append {

        /**
         * Writes the rows in the group commit's transaction {@code tx}, after the history rows
         * (I1): they commit, or roll back, with the messages. The adapter unwraps {@code tx} to
         * the kind of transaction its store takes part in.
         */
        void joinCommit(Transaction tx);

        /** After commit: the rows {@link #joinCommit} wrote, with the commit's time. */
        List<OutboxRow> rows(long committedAtMillis);
    }

    /**
     * The append of {@code deliveries}, all of one batch sent at {@code sentAt}; each row first due
     * for the poller {@code firstDue} after it is written (the fast path's window).
     */
    Append append(List<Delivery> deliveries, Instant sentAt, Duration firstDue);

    /**
     * Erases, in the group commit's transaction {@code tx}, the text its rows hold of the entries
     * {@code messageIds} (a delete erased them, PROTOCOL.md §9): the body, and a text entry's fields
     * (reply, files). The rows stay, so their recipients still get (and ack) the entries.
     */
    void erase(List<String> messageIds, Transaction tx);

    /**
     * Claims up to {@code max} due rows, oldest first from the floor, skipping rows another claimer
     * holds; each claimed row is due again one {@code lease} later.
     */
    List<OutboxRow> claimDue(int max, Duration lease);

    /** Counts one more re-send of each row (the attempts reaper reads the count). */
    void countResends(long[] ids);

    /** Marks rows whose delivery work is over (acked, or their recipient left): never claimed again. */
    void retire(long[] ids);

    /** One past the newest row: the safe-delete line when no connected client holds a pin. */
    long head();

    /**
     * Reclaim: deletes up to {@code chunk} of the oldest rows below {@code line} (exclusive) that
     * are older than {@code grace}. Returns how many went.
     */
    long deleteBelow(long line, Duration grace, int chunk);

    /** The age backstop: deletes up to {@code chunk} of the oldest rows written before {@code cutoff}. */
    long deleteOlderThan(Instant cutoff, int chunk);

    /**
     * Reads the lowest id still present again, as the floor claims start from. Reclaim calls it
     * after its deletes, and on a node that does not reclaim every pass, so that claims there skip
     * what another node deleted.
     */
    void refreshFloor();

    /** Rows still in delivery, by recipient, for the users {@code wanted} accepts, and the highest id the scan saw. */
    record InDelivery(Map<String, List<Long>> byRecipient, long highestId) {
    }

    /** A full scan of the rows still in delivery (for rebuilding the index). */
    InDelivery inDelivery(Predicate<String> wanted);

    /**
     * Depth and age of the oldest row, read cheaply (no scan): {@code depth} is the span of ids
     * from the oldest row to the newest, exact while the ids between are all present.
     */
    record Stats(long depth, long oldestAgeSeconds) {
    }

    Stats stats();
}
