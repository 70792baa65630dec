package dev.waterline.delivery;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

import dev.waterline.outbox.OutboxRow;
import dev.waterline.presence.Location;
import dev.waterline.reaper.AttemptsReaper;
import dev.waterline.session.ClientSession;
import dev.waterline.watermark.WatermarkIndex;

/**
 * The poller's judgment of the rows it claimed, as pure functions: given a recipient's rows, where
 * the recipient is and what the watermark index says of each row, the {@link Verdict}. Reads
 * nothing and writes nothing; {@link OutboxPoller} gathers the state and {@link Dispatch} carries
 * the verdicts out.
 */
final class RowJudge {

    private RowJudge() {
    }

    /** Where a recipient of claimed rows is, as far as this pass can tell. */
    sealed interface Place {

        /** Connected to this node. */
        record Here(ClientSession session) implements Place {
        }

        /** Connected to another node (Redis's word, read with the checks of a row's status). */
        record Elsewhere(Location location) implements Place {
        }

        /** Connected to no node: Redis's word, and the index is known to be whole. */
        record Nowhere() implements Place {
        }

        /** Not connected here, and the index is not known to be whole: nothing can be said. */
        record Unknown() implements Place {
        }
    }

    /** What becomes of one recipient's claimed rows. */
    sealed interface Verdict {

        /** Judge none of them this pass: their lease brings them back. */
        record Leave() implements Verdict {
        }

        /** Retire them all: the recipient is connected nowhere, and recovers from history on reconnect. */
        record RetireAll(long[] ids) implements Verdict {
        }

        /**
         * Redis names another connection of the user, or none: the rows come back with their lease,
         * by then judged for the connection it names (one here that was superseded is closed now).
         */
        record NotTheEpoch() implements Verdict {
        }

        /** The attempts reaper withdraws the recipient; {@code retire} are rows done with all the same. */
        record Withdraw(long[] retire) implements Verdict {
        }

        /**
         * Retire {@code retire} (acked, or from before this connection), write {@code again} once more
         * (pending: written, never acked) and write {@code owed} for the first time.
         */
        record Send(long[] retire, List<OutboxRow> again, List<OutboxRow> owed) implements Verdict {
        }
    }

    /**
     * Where the recipients not connected here are, from Redis's answer: {@code located} maps a user
     * to {@code {node, session}}, or is null when the index is not known to be whole. A user Redis
     * places on this node ({@code self}) has no connection here: a ghost, to be forgotten (and then
     * connected nowhere).
     */
    record Located(Map<String, Location> elsewhere, Set<String> ghosts, boolean whole) {

        static Located of(Optional<Map<String, Location>> whole, String self) {
            if (whole.isEmpty()) {
                return new Located(Map.of(), Set.of(), false);
            }
            Map<String, Location> located = whole.get();
            Map<String, Location> elsewhere = new LinkedHashMap<>();
            Set<String> ghosts = new LinkedHashSet<>();
            located.forEach((user, where) -> {
                if (where.node().equals(self)) {
                    ghosts.add(user);
                }
                else {
                    elsewhere.put(user, where);
                }
            });
            return new Located(elsewhere, ghosts, true);
        }

        /** The place of {@code user}, whose connection here (read now) is {@code here}, or null. */
        Place place(String user, ClientSession here) {
            if (here != null) {
                return new Place.Here(here);
            }
            Location there = elsewhere.get(user);
            if (there != null) {
                return new Place.Elsewhere(there);
            }
            return whole ? new Place.Nowhere() : new Place.Unknown();
        }
    }

    /** Claimed rows by recipient, each recipient's in claim order (oldest first). */
    static Map<String, List<OutboxRow>> byRecipient(List<OutboxRow> rows) {
        Map<String, List<OutboxRow>> byRecipient = new LinkedHashMap<>();
        for (OutboxRow r : rows) {
            byRecipient.computeIfAbsent(r.recipientId(), k -> new ArrayList<>()).add(r);
        }
        return byRecipient;
    }

    /**
     * The verdict on one recipient's rows. {@code status} is the index's word on each row, in the
     * rows' order ({@link WatermarkIndex.RowStatus#OWED}, {@link WatermarkIndex.RowStatus#PENDING},
     * {@link WatermarkIndex.RowStatus#NEITHER}: done with), or that Redis does not name this
     * connection as its user's epoch, or that the index is not known to be whole; it is read only
     * for a recipient connected somewhere.
     */
    static Verdict judge(Place place, List<OutboxRow> rows, WatermarkIndex.Statuses status, AttemptsReaper.Verdict attempts) {
        if (place instanceof Place.Unknown) {
            return new Verdict.Leave();
        }
        if (place instanceof Place.Nowhere) {
            return new Verdict.RetireAll(ids(rows));
        }
        List<WatermarkIndex.RowStatus> each;
        switch (status) {
            case WatermarkIndex.Statuses.Unknown u -> {
                return new Verdict.Leave();
            }
            case WatermarkIndex.Statuses.NotTheEpoch n -> {
                return new Verdict.NotTheEpoch();
            }
            case WatermarkIndex.Statuses.Known k -> each = k.each();
        }
        List<OutboxRow> owed = new ArrayList<>();
        List<OutboxRow> again = new ArrayList<>();
        List<OutboxRow> retire = new ArrayList<>();
        for (int i = 0; i < rows.size(); i++) {
            OutboxRow row = rows.get(i);
            switch (each.get(i)) {
                case OWED -> owed.add(row);
                case PENDING -> again.add(row);
                case NEITHER -> retire.add(row);
            }
        }
        if (attempts.withdraws(again.stream().mapToInt(OutboxRow::attempts))) {
            return new Verdict.Withdraw(ids(retire));
        }
        return new Verdict.Send(ids(retire), again, owed);
    }

    static long[] ids(List<OutboxRow> rows) {
        return rows.stream().mapToLong(OutboxRow::id).toArray();
    }
}
