package dev.waterline.watermark;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

import dev.waterline.lifecycle.Failures;
import dev.waterline.lifecycle.Isolation;
import dev.waterline.lifecycle.Loops;
import dev.waterline.lifecycle.Workers;
import dev.waterline.metrics.WaterlineMetrics;
import dev.waterline.session.ClientSession;
import org.springframework.context.SmartLifecycle;
import org.springframework.stereotype.Component;

/**
 * Records clients' acks in the watermark index, many connections per script call.
 *
 * <p>Loop: the gateway queues each {@code ack} frame's ids and goes on reading; one worker takes
 * whatever has queued (up to {@value #MAX_IDS_PER_CALL} ids), merges the ids of each connection
 * and runs {@code ack.lua} once for all of them. Under load one call carries the acks of
 * hundreds of frames; idle, an ack is recorded as soon as the worker wakes. Recording an ack a
 * moment late only keeps the line where it was a moment longer: the poller re-sends a row only
 * after its lease, and GC deletes only below the line. When the queue has no room for a frame's
 * ids (or the frame alone fills a call) the gateway's thread records it itself: no ack is dropped
 * for want of room, and a client streaming huge ack frames is slowed by its own socket. A Redis
 * error drops the call's acks, as a failed single call did: their rows stay pending and are
 * re-delivered, never acked by the server; any other failure of a call is isolated to the
 * connection whose ids cause it ({@link Isolation}). On stop the worker exits and what is still
 * queued is recorded once; an ack queued after that pass is taken back and recorded by its caller.
 */
@Component
public class AckRecorder implements SmartLifecycle {

    static final int MAX_IDS_PER_CALL = 4096;
    /**
     * Ids queued at most, over all connections. Bounded by ids, not frames: an ack frame may carry
     * thousands, and a client streaming such frames must be slowed by its own socket (its frame is
     * recorded on its own reading thread) rather than grow the heap or delay everyone's acks.
     */
    private static final int QUEUED_IDS = 65_536;

    private record Ack(ClientSession session, long[] ids) {
    }

    static final String LOOP = "acks";

    private final WatermarkIndex index;
    private final WaterlineMetrics metrics;
    private final Loops loops;
    private final BlockingQueue<Ack> queue = new LinkedBlockingQueue<>();
    private final Semaphore room = new Semaphore(QUEUED_IDS);
    private volatile boolean running;
    private Thread worker;

    AckRecorder(WatermarkIndex index, WaterlineMetrics metrics, Loops loops) {
        this.loops = loops;
        this.index = index;
        this.metrics = metrics;
    }

    /**
     * Queues the acks of one frame from {@code from}; records them on the caller's thread when the
     * frame alone fills a call, when the queue has no room for its ids, or when stopped.
     */
    public void ack(ClientSession from, long[] ids) {
        if (ids.length == 0) {
            return;
        }
        Ack a = new Ack(from, ids);
        if (!running || ids.length > MAX_IDS_PER_CALL || !room.tryAcquire(ids.length)) {
            record(List.of(a));
            return;
        }
        queue.add(a);
        // Stopped meanwhile: the worker may have made its last pass already.
        if (!running && queue.remove(a)) {
            room.release(ids.length);
            record(List.of(a));
        }
    }

    /** One step: what has queued, recorded in one call. */
    private void workOne(List<Ack> taken) throws InterruptedException {
        try {
            Ack first = queue.poll(200, TimeUnit.MILLISECONDS);
            if (first == null) {
                return;
            }
            taken.add(first);
            drainUpTo(taken);
            recordTaken(taken);
        }
        finally {
            taken.clear();
        }
    }

    /** After the loop ends: what is still queued, recorded once. */
    private void recordRest() {
        List<Ack> rest = new ArrayList<>();
        queue.drainTo(rest);
        for (int from = 0; from < rest.size(); from += 256) {
            recordTaken(rest.subList(from, Math.min(rest.size(), from + 256)));
        }
    }

    /** Adds queued acks to {@code taken} while the call stays under its id budget. */
    private void drainUpTo(List<Ack> taken) {
        int ids = taken.get(0).ids().length;
        Ack next;
        while (ids < MAX_IDS_PER_CALL && (next = queue.poll()) != null) {
            taken.add(next);
            ids += next.ids().length;
        }
    }

    /** Records acks taken from the queue and gives their room back. */
    private void recordTaken(List<Ack> acks) {
        try {
            record(acks);
        }
        finally {
            int ids = 0;
            for (Ack a : acks) {
                ids += a.ids().length;
            }
            room.release(ids);
        }
    }

    private void record(List<Ack> acks) {
        Map<ClientSession, List<long[]>> bySession = new LinkedHashMap<>();
        for (Ack a : acks) {
            bySession.computeIfAbsent(a.session(), k -> new ArrayList<>(1)).add(a.ids());
        }
        List<WatermarkIndex.Group> groups = new ArrayList<>(bySession.size());
        bySession.forEach((session, parts) -> groups.add(WatermarkIndex.Group.of(session, concat(parts))));
        int poisoned = Isolation.commit(groups, this::recordGroups, (g, e) -> loops.failed(LOOP, "the acks of "
                + g.session().userId() + " failed their call alone and were dropped; their rows will be re-delivered", e));
        if (poisoned > 0) {
            metrics.poisoned(LOOP).increment(poisoned);
        }
    }

    /**
     * One {@code ack.lua} call for these groups. Redis unreachable: the acks are dropped (counted
     * and logged), as a failed single call did: their rows stay pending and are re-delivered,
     * never acked by the server. Any other failure is thrown, to be isolated to its group.
     */
    private void recordGroups(List<WatermarkIndex.Group> groups) {
        try {
            long acked = 0;
            for (long n : index.ack(groups)) {
                acked += n;
            }
            metrics.acked((int) acked);
        }
        catch (RuntimeException e) {
            if (Failures.causedByItem(e)) {
                throw e;
            }
            loops.failed(LOOP, e);
        }
    }

    private static long[] concat(List<long[]> parts) {
        if (parts.size() == 1) {
            return parts.get(0);
        }
        int n = 0;
        for (long[] p : parts) {
            n += p.length;
        }
        long[] all = new long[n];
        int at = 0;
        for (long[] p : parts) {
            System.arraycopy(p, 0, all, at, p.length);
            at += p.length;
        }
        return all;
    }

    @Override
    public void start() {
        running = true;
        List<Ack> taken = new ArrayList<>();
        worker = loops.startPlatform(LOOP, "ack-recorder", () -> running, () -> workOne(taken));
    }

    @Override
    public void stop() {
        running = false;
        Workers.stop(worker, Duration.ofSeconds(2));
        worker = null;
        loops.pass(LOOP, this::recordRest);
    }

    @Override
    public boolean isRunning() {
        return running;
    }

    /** Stops after the gateway (which stops at {@code MAX_VALUE - 100}) has closed every connection. */
    @Override
    public int getPhase() {
        return Integer.MAX_VALUE - 300;
    }
}
