package dev.waterline.delivery;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.LongStream;

import dev.waterline.outbox.OutboxRow;
import dev.waterline.outbox.OutboxStore;
import dev.waterline.presence.NodeBus;
import dev.waterline.reaper.AttemptsReaper;
import dev.waterline.session.ClientSession;
import dev.waterline.session.SessionRegistry;
import org.springframework.stereotype.Component;

/**
 * Carries out the poller's verdicts ({@link RowJudge.Verdict}): counts re-sends, records rows owed
 * to a connection here as pending before they are queued for its writers ({@link PollerWriters}),
 * has the attempts reaper withdraw, collects the rows to retire and the rows for other nodes, and
 * at the end of a pass retires the first (one statement) and hands the second to their nodes
 * (one message a node). Rows handed over arrive at the other node's {@link #arrived}.
 */
@Component
class Dispatch {

    private final LiveIndex watermark;
    private final OutboxStore outbox;
    private final AttemptsReaper attempts;
    private final NodeBus bus;
    private final SessionRegistry sessions;
    private final PollerWriters writers;

    Dispatch(LiveIndex watermark, OutboxStore outbox, AttemptsReaper attempts, NodeBus bus, SessionRegistry sessions,
             PollerWriters writers) {
        this.watermark = watermark;
        this.outbox = outbox;
        this.attempts = attempts;
        this.bus = bus;
        this.sessions = sessions;
        this.writers = writers;
    }

    Pass pass() {
        return new Pass();
    }

    /** The verdicts of one poll, carried out recipient by recipient, then {@link #finish}ed. */
    final class Pass {

        private final List<long[]> retired = new ArrayList<>();
        private final Map<String, List<OutboxRow>> forward = new LinkedHashMap<>();

        void apply(RowJudge.Place place, RowJudge.Verdict verdict) {
            switch (verdict) {
                case RowJudge.Verdict.Leave l -> {
                }
                case RowJudge.Verdict.RetireAll r -> retired.add(r.ids());
                case RowJudge.Verdict.NotTheEpoch n -> {
                    if (place instanceof RowJudge.Place.Here here) {
                        watermark.notTheEpoch(here.session());
                    }
                }
                case RowJudge.Verdict.Withdraw w -> {
                    retired.add(w.retire());
                    switch (place) {
                        case RowJudge.Place.Here here -> attempts.withdraw(here.session());
                        case RowJudge.Place.Elsewhere there -> attempts.withdraw(there.location());
                        default -> throw new IllegalStateException("a withdrawal of a recipient connected nowhere");
                    }
                }
                case RowJudge.Verdict.Send s -> send(place, s);
            }
        }

        private void send(RowJudge.Place place, RowJudge.Verdict.Send s) {
            retired.add(s.retire());
            outbox.countResends(RowJudge.ids(s.again()));
            switch (place) {
                case RowJudge.Place.Here here -> {
                    ClientSession to = here.session();
                    List<OutboxRow> writes = new ArrayList<>(s.again());
                    if (!s.owed().isEmpty() && watermark.deliver(to, RowJudge.ids(s.owed()))) {
                        writes.addAll(s.owed());
                    }
                    writers.write(to, writes);
                }
                case RowJudge.Place.Elsewhere there -> {
                    // the node that holds the connection records and writes them (its poller's writers)
                    List<OutboxRow> rows = forward.computeIfAbsent(there.location().node(), k -> new ArrayList<>());
                    rows.addAll(s.again());
                    rows.addAll(s.owed());
                }
                default -> throw new IllegalStateException("a send to a recipient connected nowhere");
            }
        }

        /** Retires the rows done with, and hands the others' rows to their nodes. */
        void finish() {
            outbox.retire(retired.stream().flatMapToLong(LongStream::of).toArray());
            forward.forEach((node, rows) -> {
                if (!rows.isEmpty()) {
                    bus.deliver(node, rows, true);
                }
            });
        }
    }

    /**
     * Rows another node's poller judged owed to, or pending for, a connection of this node: recorded
     * as pending for it and written by this node's poller writers (counted as poller deliveries). A
     * recipient no longer connected here, or a connection no longer its user's epoch, gets nothing:
     * whoever holds the user now resynced at connect.
     */
    void arrived(List<OutboxRow> rows) {
        Map<ClientSession, List<OutboxRow>> byRecipient = new LinkedHashMap<>();
        Set<String> ghosts = new HashSet<>();
        for (OutboxRow r : rows) {
            ClientSession to = sessions.get(r.recipientId());
            if (to != null) {
                byRecipient.computeIfAbsent(to, k -> new ArrayList<>()).add(r);
            }
            else {
                ghosts.add(r.recipientId());
            }
        }
        ghosts.forEach(watermark::forgetGhost);
        for (var e : byRecipient.entrySet()) {
            if (watermark.deliver(e.getKey(), RowJudge.ids(e.getValue()))) {
                writers.write(e.getKey(), e.getValue());
            }
        }
    }
}
