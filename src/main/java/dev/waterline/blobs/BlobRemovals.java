package dev.waterline.blobs;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.locks.LockSupport;

import dev.waterline.lifecycle.Loops;
import dev.waterline.lifecycle.Workers;
import dev.waterline.metrics.WaterlineMetrics;
import io.micrometer.core.instrument.Counter;
import org.springframework.context.SmartLifecycle;
import org.springframework.stereotype.Component;

/**
 * Removes the contents of files whose owner row is gone. Every table that names a file in the
 * store queues the file's removal in {@code blob_removals} by a trigger, in the same transaction
 * that deletes the row (V8: {@code stream_blobs}, whether deleted by retention's cascade, by an
 * abandoned upload's sweep or by a refused upload), so no deletion can forget its file, and a
 * crash between the commit and the removal leaves the ledger row to be done after restart. The
 * ledger's statements are {@link BlobRemovalRepository}'s.
 *
 * <p>Loop: every {@code removal-interval} (or sooner when {@link #wake}d), read up to 100 ledger
 * rows, oldest first; for each, remove the content from the store, then delete the ledger row.
 * Every node may run it: a removal is idempotent, so two nodes doing the same one waste a
 * statement, nothing more. A removal that fails is counted and logged ({@code blob_removal}) and
 * its row stays for the next pass. Stops with the context; what is left waits in the ledger.
 * Invariant: a file's content outlives its owner row only until the next pass that succeeds.
 */
@Component
class BlobRemovals implements SmartLifecycle {

    static final String LOOP = "blob_removal";

    private final BlobStore store;
    private final BlobRemovalRepository ledger;
    private final BlobProperties properties;
    private final Loops loops;
    private final Counter removed;
    private volatile boolean running;
    private Thread thread;

    BlobRemovals(BlobStore store, BlobRemovalRepository ledger, BlobProperties properties, Loops loops, WaterlineMetrics metrics) {
        this.store = store;
        this.ledger = ledger;
        this.properties = properties;
        this.loops = loops;
        this.removed = metrics.counter("waterline.blob.removals", "file contents removed after their owner row was deleted");
        metrics.gauge("waterline.blob.removals.queued", "file contents the last removal pass found queued (at most 100)", this::queuedQuietly);
    }

    private volatile long queued;

    private long queuedQuietly() {
        return queued;
    }

    /** One pass: how many contents it removed. */
    int pass() {
        List<String> keys = ledger.queued(100);
        queued = keys.size();
        int done = 0;
        for (String key : keys) {
            store.delete(key);
            ledger.done(key);
            removed.increment();
            done++;
        }
        return done;
    }

    /** Queues the removal of {@code key}'s content. */
    void queue(String key) {
        ledger.queue(key);
    }

    /** Asks for a pass soon (an upload was refused and its parts are queued). */
    void wake() {
        Thread t = thread;
        if (t != null) {
            LockSupport.unpark(t);
        }
    }

    @Override
    public void start() {
        running = true;
        thread = loops.start(LOOP, "blob-removal", () -> running, () -> {
            LockSupport.parkNanos(properties.removalInterval().toNanos());
            if (running) {
                while (pass() == 100 && running) {
                    // a full pass: more may be queued
                }
            }
        });
    }

    @Override
    public void stop() {
        running = false;
        LockSupport.unpark(thread);
        Workers.stop(thread, Duration.ofSeconds(5));
    }

    @Override
    public boolean isRunning() {
        return running;
    }
}
