package dev.waterline.delivery;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import io.micrometer.core.instrument.Counter;

import dev.waterline.metrics.WaterlineMetrics;
import dev.waterline.outbox.OutboxRow;
import dev.waterline.session.ClientSession;
import dev.waterline.session.SessionRegistry;
import dev.waterline.watermark.WatermarkIndex;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.context.SmartLifecycle;
import org.springframework.stereotype.Component;

/**
 * Pushes freshly committed rows to connected recipients.
 *
 * <p>Loop: {@code concurrency} virtual threads each take a row, drain up to 63 more, group them
 * by recipient, record them in the watermark index (one script call per recipient) and write
 * the frames. A row whose recipient is not connected, or that does not fit the bounded queue,
 * is simply not pushed here: it stays due in the outbox and the poller delivers it. The fast
 * path takes no lease and writes nothing to PostgreSQL. On a Redis error the frames are still
 * written (live delivery goes on; the poller may deliver them again, which clients dedupe). Stops
 * with the context: workers finish their current batch and exit; what is queued is left to the
 * poller of the next run, since it is all in the outbox.
 */
@Component
public class FastPath implements SmartLifecycle {

    private static final Log log = LogFactory.getLog(FastPath.class);
    private static final int DRAIN = 64;

    private final DeliveryProperties properties;
    private final SessionRegistry sessions;
    private final LiveIndex watermark;
    private final WaterlineMetrics metrics;
    private final BlockingQueue<OutboxRow> queue;
    private final Counter shed;
    private final List<Thread> workers = new ArrayList<>();
    private volatile boolean running;

    FastPath(DeliveryProperties properties, SessionRegistry sessions, LiveIndex watermark, WaterlineMetrics metrics) {
        this.properties = properties;
        this.sessions = sessions;
        this.watermark = watermark;
        this.metrics = metrics;
        this.queue = new ArrayBlockingQueue<>(properties.fastQueueSize());
        metrics.gauge("waterline.fast.queue.depth", "rows waiting for the fast path", queue::size);
        this.shed = metrics.counter("waterline.fast.shed", "rows the fast path left to the poller (full queue)");
    }

    /** Offers committed rows; those of connected recipients that fit are pushed, the rest wait for the poller. */
    public void offer(List<OutboxRow> rows) {
        if (!properties.fastPath()) {
            return;
        }
        for (OutboxRow row : rows) {
            if (sessions.get(row.recipientId()) != null && !queue.offer(row)) {
                shed.increment();
            }
        }
    }

    private void work() {
        List<OutboxRow> batch = new ArrayList<>(DRAIN);
        while (running) {
            try {
                OutboxRow first = queue.poll(200, TimeUnit.MILLISECONDS);
                if (first == null) {
                    continue;
                }
                batch.add(first);
                queue.drainTo(batch, DRAIN - 1);
                deliver(batch);
            }
            catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
            catch (RuntimeException e) {
                log.warn("fast path batch failed; the poller will deliver it: " + e);
            }
            finally {
                batch.clear();
            }
        }
    }

    private void deliver(List<OutboxRow> batch) {
        Map<String, List<OutboxRow>> byRecipient = new LinkedHashMap<>();
        for (OutboxRow r : batch) {
            byRecipient.computeIfAbsent(r.recipientId(), k -> new ArrayList<>()).add(r);
        }
        for (var e : byRecipient.entrySet()) {
            ClientSession to = sessions.get(e.getKey());
            if (to == null) {
                continue;
            }
            List<OutboxRow> rows = e.getValue();
            long[] ids = rows.stream().mapToLong(OutboxRow::id).toArray();
            WatermarkIndex.Verdicts verdicts;
            try {
                verdicts = watermark.deliver(to, ids);
            }
            catch (RuntimeException redisDown) {
                log.debug("watermark unavailable, delivering unrecorded: " + redisDown);
                verdicts = null;
            }
            if (verdicts != null && !verdicts.current()) {
                continue;
            }
            int written = 0;
            for (int i = 0; i < rows.size(); i++) {
                if (verdicts != null && verdicts.perId()[i] == WatermarkIndex.Verdicts.ACKED) {
                    continue;
                }
                if (to.send(FramesOut.message(rows.get(i)))) {
                    written++;
                }
            }
            metrics.delivered(true, written);
        }
    }

    @Override
    public void start() {
        running = true;
        for (int i = 0; i < properties.concurrency(); i++) {
            workers.add(Thread.ofVirtual().name("fast-path-" + i).start(this::work));
        }
    }

    @Override
    public void stop() {
        running = false;
        for (Thread t : workers) {
            try {
                t.join(2000);
            }
            catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        workers.clear();
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
