package dev.waterline.attachments;

import java.time.Duration;
import java.util.concurrent.locks.LockSupport;

import dev.waterline.blobs.BlobProperties;
import dev.waterline.lifecycle.Loops;
import dev.waterline.lifecycle.Workers;
import org.springframework.context.SmartLifecycle;
import org.springframework.stereotype.Component;

/**
 * Deletes the attachments that will never be read: those no {@code send} named within
 * {@code waterline.attachments.orphan-ttl} of their upload, and uploads never finished within
 * {@code waterline.blobs.upload-timeout} (the client or its node went away mid-body). Deleting the
 * row erases the content (V13's triggers: the parts in PostgreSQL at once, the removal from any
 * store queued for {@code blobs}' removal loop).
 *
 * <p>Loop: one loop of {@link Loops}, every {@code sweep-interval}: delete up to 1,000 of each kind,
 * oldest first, again while a statement found 1,000, and count them
 * ({@code waterline_attachments_swept_total{outcome}}). A failure is logged and counted by
 * {@link Loops} ({@code attachment_sweep}) and the next pass tries again. Every node may run it: a
 * row another node is deleting is skipped. Stops with the context. Invariant: an attachment a send
 * named is never deleted by the sweep (its statement skips rows a commit holds and checks
 * {@code message_seq} again on the locked row).
 */
@Component
class OrphanSweep implements SmartLifecycle {

    static final String LOOP = "attachment_sweep";
    static final int MOST = 1000;

    private final AttachmentProperties properties;
    private final BlobProperties blobs;
    private final AttachmentRepository store;
    private final AttachmentMetrics metrics;
    private final Loops loops;
    private volatile boolean running;
    private Thread thread;

    OrphanSweep(AttachmentProperties properties, BlobProperties blobs, AttachmentRepository store, AttachmentMetrics metrics, Loops loops) {
        this.properties = properties;
        this.blobs = blobs;
        this.store = store;
        this.metrics = metrics;
        this.loops = loops;
    }

    /** One pass: how many attachments it deleted. */
    int pass() {
        int total = 0;
        int n;
        do {
            n = store.deleteOrphans(properties.orphanTtl().toMillis(), MOST);
            metrics.swept(AttachmentMetrics.Swept.ORPHAN, n);
            total += n;
        } while (n == MOST && running);
        do {
            n = store.deleteAbandoned(blobs.uploadTimeout().toMillis(), MOST);
            metrics.swept(AttachmentMetrics.Swept.ABANDONED, n);
            total += n;
        } while (n == MOST && running);
        return total;
    }

    @Override
    public void start() {
        running = true;
        thread = loops.start(LOOP, "attachment-sweep", () -> running, () -> {
            LockSupport.parkNanos(properties.sweepInterval().toNanos());
            if (running) {
                pass();
            }
        });
    }

    @Override
    public void stop() {
        running = false;
        Workers.stop(thread, Duration.ofSeconds(2));
    }

    @Override
    public boolean isRunning() {
        return running;
    }
}
