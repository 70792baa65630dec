package dev.waterline.delivery;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import io.micrometer.core.instrument.Counter;

import dev.waterline.lifecycle.Loops;
import dev.waterline.lifecycle.Workers;
import dev.waterline.metrics.WaterlineMetrics;
import dev.waterline.outbox.OutboxRow;
import dev.waterline.session.ClientSession;
import dev.waterline.session.SessionRegistry;
import dev.waterline.watermark.WatermarkIndex;
import org.springframework.context.SmartLifecycle;
import org.springframework.stereotype.Component;

/**
 * Pushes freshly committed rows to connected recipients.
 *
 * <p>Loop: {@code concurrency} virtual threads each take a row, drain up to 63 more, group them
 * by recipient, record them as pending in the watermark index (one script call for the whole
 * batch) and write the frames. A row that does not fit the bounded queue is shed: recorded as owed and
 * left to the poller. The fast path takes no lease and writes nothing to PostgreSQL. On a Redis error the frames are still
 * written (live delivery goes on; the poller may deliver them again, which clients dedupe). Stops
 * with the context: workers finish their current batch and exit; what is queued is left to the
 * poller of the next run, since it is all in the outbox. Every failure is logged and counted by
 * {@link Loops} ({@code fast_path}).
 */
@Component
public class FastPath implements SmartLifecycle {

    private static final int DRAIN = 64;

    static final String LOOP = "fast_path";

    private final DeliveryProperties properties;
    private final Loops loops;
    private final SessionRegistry sessions;
    private final LiveIndex watermark;
    private final WaterlineMetrics metrics;
    private final BlockingQueue<OutboxRow> queue;
    private final Counter shed;
    private final List<Thread> workers = new ArrayList<>();
    private volatile boolean running;

    FastPath(DeliveryProperties properties, SessionRegistry sessions, LiveIndex watermark, WaterlineMetrics metrics,
             Loops loops) {
        this.loops = loops;
        this.properties = properties;
        this.sessions = sessions;
        this.watermark = watermark;
        this.metrics = metrics;
        this.queue = new ArrayBlockingQueue<>(properties.fastQueueSize());
        metrics.gauge("waterline.fast.queue.depth", "rows waiting for the fast path", queue::size);
        this.shed = metrics.counter("waterline.fast.shed", "rows the fast path left to the poller (full queue)");
    }

    /**
     * Offers committed rows. Rows of connected recipients that fit the queue are pushed by the
     * workers; the others (queue full, or the fast path off) are shed to the poller, but first
     * recorded as owed to their connection, so that they hold the line down and the poller
     * delivers them when they fall due. Rows of recipients not connected here are left alone: an
     * offline recipient holds nothing down and resyncs history when it connects.
     */
    public void offer(List<OutboxRow> rows) {
        Map<ClientSession, List<OutboxRow>> shedding = null;
        for (OutboxRow row : rows) {
            ClientSession to = sessions.get(row.recipientId());
            if (to == null || (properties.fastPath() && queue.offer(row))) {
                continue;
            }
            if (shedding == null) {
                shedding = new LinkedHashMap<>();
            }
            shedding.computeIfAbsent(to, k -> new ArrayList<>()).add(row);
        }
        if (shedding != null) {
            for (var e : shedding.entrySet()) {
                shed.increment(e.getValue().size());
                try {
                    watermark.shed(e.getKey(), ids(e.getValue()));
                }
                catch (RuntimeException redisDown) {
                    loops.failed(LOOP, redisDown);
                    watermark.suspect();
                }
            }
        }
    }

    private static long[] ids(List<OutboxRow> rows) {
        return rows.stream().mapToLong(OutboxRow::id).toArray();
    }

    /** One step of a worker: one batch taken and written. A failure leaves the batch to the poller. */
    private void workOne(List<OutboxRow> batch) throws InterruptedException {
        try {
            OutboxRow first = queue.poll(200, TimeUnit.MILLISECONDS);
            if (first == null) {
                return;
            }
            batch.add(first);
            queue.drainTo(batch, DRAIN - 1);
            deliver(batch);
        }
        finally {
            batch.clear();
        }
    }

    private void deliver(List<OutboxRow> batch) {
        Map<ClientSession, List<OutboxRow>> byRecipient = new LinkedHashMap<>();
        for (OutboxRow r : batch) {
            ClientSession to = sessions.get(r.recipientId());
            if (to != null) {
                byRecipient.computeIfAbsent(to, k -> new ArrayList<>()).add(r);
            }
        }
        if (byRecipient.isEmpty()) {
            return;
        }
        List<WatermarkIndex.Group> groups = new ArrayList<>(byRecipient.size());
        for (var e : byRecipient.entrySet()) {
            groups.add(new WatermarkIndex.Group(e.getKey(), ids(e.getValue())));
        }
        boolean[] recorded;
        try {
            recorded = watermark.deliver(groups);
        }
        catch (RuntimeException redisDown) {
            // written unrecorded (live delivery goes on); the index is distrusted until rebuilt
            loops.failed(LOOP, redisDown);
            watermark.suspect();
            recorded = null;
        }
        int i = 0;
        for (var e : byRecipient.entrySet()) {
            if (recorded != null && !recorded[i++]) {
                continue;
            }
            ClientSession to = e.getKey();
            int written = 0;
            for (OutboxRow row : e.getValue()) {
                if (to.send(FramesOut.message(row), () -> metrics.deliveryLatency(true, System.currentTimeMillis() - row.committedAtMillis()))) {
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
            List<OutboxRow> batch = new ArrayList<>(DRAIN);
            workers.add(loops.start(LOOP, "fast-path-" + i, () -> running, () -> workOne(batch)));
        }
    }

    @Override
    public void stop() {
        running = false;
        Workers.stop(workers, Duration.ofSeconds(2));
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
