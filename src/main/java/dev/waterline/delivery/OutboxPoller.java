package dev.waterline.delivery;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.LongSupplier;

import dev.waterline.metrics.WaterlineMetrics;
import dev.waterline.outbox.OutboxRepository;
import dev.waterline.outbox.OutboxRow;
import dev.waterline.session.ClientSession;
import dev.waterline.session.SessionRegistry;
import dev.waterline.watermark.WatermarkIndex;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.context.SmartLifecycle;
import org.springframework.stereotype.Component;

/**
 * The authoritative delivery loop: whatever the fast path did not get acked is delivered here.
 *
 * <p>Loop (one virtual thread, plus the writers): while the outbound buffer is non-empty,
 * wait; otherwise claim up to {@code batch-size} due rows, oldest first, with
 * {@code FOR UPDATE SKIP LOCKED} and a lease (each claim counts an attempt). For each recipient:
 * not connected here → the row is retired (its delivery work is over: the client recovers from
 * history on reconnect, and offline recipients hold nothing down); connected → the watermark
 * index says per row whether it was acked (retire it), or is a first or repeated delivery (queue
 * the frame for the {@code concurrency} writers). A row given to a connection that is no longer
 * current is left alone; its lease brings it back. Rows that are written stay leased, so an
 * unacked delivery comes back once per lease until acked, the client leaves, or a reaper
 * withdraws it.
 *
 * <p>On error (database or Redis unreachable) the pass is abandoned and retried after the poll
 * interval; claimed rows come back when their lease ends, so nothing is lost. Stops with the
 * context. The scan starts from the reclaim line on every pass rather than from a cursor, so a
 * row committed late behind a higher id is never skipped.
 */
@Component
public class OutboxPoller implements SmartLifecycle {

    private static final Log log = LogFactory.getLog(OutboxPoller.class);

    record Outbound(ClientSession to, OutboxRow row) {
    }

    private final DeliveryProperties properties;
    private final OutboxRepository outbox;
    private final SessionRegistry sessions;
    private final LiveIndex watermark;
    private final WaterlineMetrics metrics;
    private final BlockingQueue<Outbound> queue;
    private final List<Thread> threads = new ArrayList<>();
    private volatile LongSupplier floor = () -> 0L;
    private volatile boolean running;

    OutboxPoller(DeliveryProperties properties, OutboxRepository outbox, SessionRegistry sessions,
                 LiveIndex watermark, WaterlineMetrics metrics) {
        this.properties = properties;
        this.outbox = outbox;
        this.sessions = sessions;
        this.watermark = watermark;
        this.metrics = metrics;
        this.queue = new ArrayBlockingQueue<>(properties.queueSize());
        metrics.gauge("waterline.poller.queue.depth", "frames the poller has queued for writing", queue::size);
    }

    /** Where the scan starts: the reclaim line once GC keeps one. */
    public void floor(LongSupplier floor) {
        this.floor = floor;
    }

    /** One claim-and-dispatch pass. Returns the number of rows claimed. */
    int pollOnce() {
        if (!queue.isEmpty()) {
            return 0;
        }
        int room = Math.min(properties.batchSize(), queue.remainingCapacity());
        List<OutboxRow> rows = outbox.claimDue(floor.getAsLong(), room, properties.lease());
        if (rows.isEmpty()) {
            return 0;
        }
        Map<String, List<OutboxRow>> byRecipient = new LinkedHashMap<>();
        for (OutboxRow r : rows) {
            byRecipient.computeIfAbsent(r.recipientId(), k -> new ArrayList<>()).add(r);
        }
        List<Long> retired = new ArrayList<>();
        for (var e : byRecipient.entrySet()) {
            List<OutboxRow> mine = e.getValue();
            long[] ids = mine.stream().mapToLong(OutboxRow::id).toArray();
            ClientSession to = sessions.get(e.getKey());
            if (to == null) {
                for (long id : ids) {
                    retired.add(id);
                }
                forgetQuietly(e.getKey(), ids);
                continue;
            }
            WatermarkIndex.Verdicts verdicts = watermark.deliver(to, ids);
            if (!verdicts.current()) {
                continue;
            }
            for (int i = 0; i < mine.size(); i++) {
                if (verdicts.perId()[i] == WatermarkIndex.Verdicts.ACKED) {
                    retired.add(mine.get(i).id());
                }
                else {
                    queue.offer(new Outbound(to, mine.get(i)));
                }
            }
        }
        outbox.retire(retired.stream().mapToLong(Long::longValue).toArray());
        return rows.size();
    }

    private void forgetQuietly(String user, long[] ids) {
        try {
            watermark.forgetAcked(user, ids);
        }
        catch (RuntimeException e) {
            log.debug("could not drop acked marks (they expire on their own): " + e);
        }
    }

    private void poll() {
        long pause = properties.pollInterval().toNanos();
        while (running) {
            int claimed = 0;
            try {
                claimed = pollOnce();
            }
            catch (RuntimeException e) {
                log.warn("outbox poll failed, retrying: " + e.getMessage());
            }
            if (claimed == 0) {
                LockSupport.parkNanos(pause);
            }
        }
    }

    private void write() {
        while (running) {
            try {
                Outbound o = queue.poll(200, TimeUnit.MILLISECONDS);
                if (o != null && o.to().isOpen() && o.to().send(FramesOut.message(o.row()))) {
                    metrics.delivered(false, 1);
                }
            }
            catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
            catch (RuntimeException e) {
                log.debug("poller write failed: " + e);
            }
        }
    }

    @Override
    public void start() {
        running = true;
        threads.add(Thread.ofVirtual().name("outbox-poller").start(this::poll));
        for (int i = 0; i < properties.concurrency(); i++) {
            threads.add(Thread.ofVirtual().name("poller-writer-" + i).start(this::write));
        }
    }

    @Override
    public void stop() {
        running = false;
        for (Thread t : threads) {
            try {
                t.join(2000);
            }
            catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
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
