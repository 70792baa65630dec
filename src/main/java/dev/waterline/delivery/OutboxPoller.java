package dev.waterline.delivery;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.locks.LockSupport;

import dev.waterline.lifecycle.Loops;
import dev.waterline.lifecycle.Workers;
import dev.waterline.outbox.OutboxRow;
import dev.waterline.reaper.AttemptsReaper;
import dev.waterline.watermark.WatermarkIndex;
import org.springframework.context.SmartLifecycle;
import org.springframework.stereotype.Component;

/**
 * The authoritative delivery loop: whatever the fast path did not get acked is delivered here.
 *
 * <p>Loop (one virtual thread, plus the writers): while the outbound buffer is non-empty,
 * wait; otherwise claim up to {@code batch-size} due rows, oldest first from the reclaim floor,
 * with {@code FOR UPDATE SKIP LOCKED} and a lease (each claim counts an attempt). For each
 * recipient: not connected here → the rows are retired (the client recovers from history on
 * reconnect, and offline recipients hold nothing down); connected → per the watermark index, a
 * row owed to the connection (shed by the fast path, or owed after an index rebuild) is written
 * for the first time, a row pending (written, never acked) is written again, and any other row
 * is retired (acked, or from before this connection, whose client resynced history when it
 * connected). A pending row's re-sends are counted in {@code attempts}; one that has been re-sent
 * {@code max-delivery-attempts} times gets its recipient withdrawn instead of another re-send
 * (the attempts reaper, 4008). While the index is not trusted to be whole (after a Redis error or
 * loss, until the next rebuild) rows of connected recipients are left leased, not retired. If Redis
 * does not name the connection as its user's epoch, its rows are left alone and their lease brings
 * them back. Rows sent stay leased, so an unacked delivery comes back once per lease until acked or
 * withdrawn.
 *
 * <p>On error (database or Redis unreachable) the pass is abandoned, logged and counted
 * ({@link Loops}, {@code poller}) and retried after the loop's error pause; claimed rows come back
 * when their lease ends, so nothing is lost. Stops with the
 * context. The scan starts from the outbox's floor (below it every row is deleted) on every pass
 * rather than from a cursor, so a row committed late behind a higher id is never skipped.
 *
 * <p>One job per class, as a pass runs: {@link ClaimDue} claims, {@link Recipients} finds where
 * each recipient is and what the index says of its rows, {@link RowJudge} judges them (pure; the
 * attempts verdict is the attempts reaper's, {@link AttemptsReaper.Verdict}), {@link Dispatch}
 * carries the verdicts out and hands rows to other nodes, {@link PollerWriters} writes the frames.
 * This class is the loop.
 */
@Component
public class OutboxPoller implements SmartLifecycle {

    static final String LOOP = "poller";

    private final DeliveryProperties properties;
    private final ClaimDue claims;
    private final Recipients recipients;
    private final AttemptsReaper.Verdict attempts;
    private final Dispatch dispatch;
    private final PollerWriters writers;
    private final Loops loops;
    private final List<Thread> threads = new ArrayList<>();
    private volatile boolean running;

    OutboxPoller(DeliveryProperties properties, ClaimDue claims, Recipients recipients, AttemptsReaper attempts, Dispatch dispatch,
                 PollerWriters writers, Loops loops) {
        this.properties = properties;
        this.claims = claims;
        this.recipients = recipients;
        this.attempts = attempts.verdict();
        this.dispatch = dispatch;
        this.writers = writers;
        this.loops = loops;
    }

    /** One claim-and-dispatch pass. Returns the number of rows claimed, or -1 when its queue was still busy (no fetch). */
    int pollOnce() {
        if (!writers.idle()) {
            return -1;
        }
        ClaimDue.Claimed claimed = claims.claim(Math.min(properties.batchSize(), writers.room()));
        if (claimed.rows().isEmpty()) {
            return 0;
        }
        Map<String, List<OutboxRow>> byRecipient = RowJudge.byRecipient(claimed.rows());
        RowJudge.Located located = recipients.locate(byRecipient.keySet(), claimed.marker());
        Dispatch.Pass pass = dispatch.pass();
        for (var e : byRecipient.entrySet()) {
            String user = e.getKey();
            List<OutboxRow> rows = e.getValue();
            RowJudge.Place place = located.place(user, recipients.here(user));
            WatermarkIndex.Statuses status = recipients.status(user, place, claimed.marker(), rows);
            pass.apply(place, RowJudge.judge(place, rows, status, attempts));
        }
        pass.finish();
        return claimed.rows().size();
    }

    /** Rows another node's poller judged for a connection of this node (see {@link Dispatch#arrived}). */
    void arrived(List<OutboxRow> rows) {
        dispatch.arrived(rows);
    }

    /**
     * Polls back to back while there are due rows; after a poll that claimed nothing the pause
     * doubles, from the poll interval up to a quarter of the lease (at most 1 s), and drops back
     * once a poll finds work. A claim walks the outbox from the floor (every row not yet due is
     * read on the way), so an idle poller at the base interval cost the database most of a
     * full scan ten times a second; the back-off adds at most a quarter lease to a re-delivery
     * that has already waited a whole lease.
     */
    private final class Poll {
        private final long base = properties.pollInterval().toNanos();
        private final long cap = Math.max(base, Math.min(properties.lease().toNanos() / 4, Duration.ofSeconds(1).toNanos()));
        private long pause = base;

        void step() {
            int claimed;
            try {
                claimed = pollOnce();
            }
            catch (RuntimeException e) {
                // a pass that failed (database or Redis): its claimed rows come back with their lease
                pause = base;
                throw e;
            }
            if (claimed == 0) {
                LockSupport.parkNanos(pause);
                pause = Math.min(cap, pause * 2);
            }
            else {
                pause = base;
                if (claimed < 0) {
                    LockSupport.parkNanos(pause);
                }
            }
        }
    }

    @Override
    public void start() {
        running = true;
        Poll poll = new Poll();
        threads.add(loops.start(LOOP, "outbox-poller", () -> running, poll::step));
        threads.addAll(writers.start(() -> running));
    }

    @Override
    public void stop() {
        running = false;
        Workers.stop(threads, Duration.ofSeconds(2));
        threads.clear();
    }

    @Override
    public boolean isRunning() {
        return running;
    }

    @Override
    public int getPhase() {
        return Integer.MAX_VALUE - 200;
    }
}
