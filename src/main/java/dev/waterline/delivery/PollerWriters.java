package dev.waterline.delivery;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

import dev.waterline.lifecycle.Loops;
import dev.waterline.lifecycle.ThrottledLog;
import dev.waterline.metrics.WaterlineMetrics;
import dev.waterline.outbox.OutboxRow;
import dev.waterline.session.ClientSession;
import io.micrometer.core.instrument.Counter;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.stereotype.Component;

/**
 * The poller's writers: a bounded outbound buffer of frames, drained by {@code concurrency}
 * writer loops ({@code poller_writer}) that write each to its connection, if still open.
 *
 * <p>The poller claims no more rows than the buffer has room for, but rows arriving from other
 * nodes ({@link Dispatch#arrived}) share it, so a frame can find it full. A refused frame is counted
 * ({@code waterline.poller.queue.refused}) and logged (at most once a second); nothing is lost:
 * its row was recorded as pending and stays in the outbox under its lease, so it falls due again
 * when the lease ends and is written then. Stops with the poller: a frame still buffered is
 * written again the same way.
 */
@Component
class PollerWriters {

    private static final Log log = LogFactory.getLog(PollerWriters.class);

    static final String LOOP = "poller_writer";

    record Outbound(ClientSession to, OutboxRow row) {
    }

    private final int concurrency;
    private final BlockingQueue<Outbound> queue;
    private final WaterlineMetrics metrics;
    private final Loops loops;
    private final Counter refused;
    private final ThrottledLog refusals = new ThrottledLog();

    PollerWriters(DeliveryProperties properties, WaterlineMetrics metrics, Loops loops) {
        this.concurrency = properties.concurrency();
        this.queue = new ArrayBlockingQueue<>(properties.queueSize());
        this.metrics = metrics;
        this.loops = loops;
        metrics.gauge("waterline.poller.queue.depth", "frames the poller has queued for writing", queue::size);
        this.refused = metrics.counter("waterline.poller.queue.refused",
                "frames the poller's full buffer refused (their rows stay leased, and are written again when the lease ends)");
    }

    /** Nothing is waiting to be written. */
    boolean idle() {
        return queue.isEmpty();
    }

    /** How many more frames the buffer takes now. */
    int room() {
        return queue.remainingCapacity();
    }

    /** Queues a frame per row for {@code to}; returns how many the full buffer refused (counted and logged). */
    int write(ClientSession to, List<OutboxRow> rows) {
        int refusedNow = 0;
        for (OutboxRow row : rows) {
            if (!queue.offer(new Outbound(to, row))) {
                refusedNow++;
            }
        }
        if (refusedNow > 0) {
            refused.increment(refusedNow);
            long unlogged = refusals.admit();
            if (unlogged >= 0) {
                log.warn("the poller's outbound buffer is full: " + refusedNow + " frame(s) for " + to.userId()
                        + " refused; their rows stay leased and are written again when the lease ends" + ThrottledLog.more(unlogged));
            }
        }
        return refusedNow;
    }

    /** Starts the writer loops, each running while {@code running} holds. */
    List<Thread> start(BooleanSupplier running) {
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < concurrency; i++) {
            threads.add(loops.start(LOOP, "poller-writer-" + i, running, this::writeOne));
        }
        return threads;
    }

    private void writeOne() throws InterruptedException {
        Outbound o = queue.poll(200, TimeUnit.MILLISECONDS);
        if (o != null && o.to().isOpen()) {
            OutboxRow row = o.row();
            if (o.to().send(FramesOut.message(row), () -> metrics.deliveryLatency(false, System.currentTimeMillis() - row.committedAtMillis()))) {
                metrics.delivered(false, 1);
            }
        }
    }
}
