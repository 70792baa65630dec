package dev.waterline.streams;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.locks.LockSupport;

import dev.waterline.blobs.BlobProperties;
import dev.waterline.lifecycle.Loops;
import dev.waterline.lifecycle.Workers;
import org.springframework.context.SmartLifecycle;
import org.springframework.stereotype.Component;

/**
 * The idle reaper of streams (PROTOCOL.md §6): one loop of {@link Loops}, every
 * {@code idle-check-interval}, finds open streams with no append for {@code idle-timeout} (by the
 * database's clock) and queues an abort of each (reason {@code idle}) through the appender, which
 * checks again under the stream's lock, so that an append that came meanwhile wins and every
 * change of a stream still reaches its tails in commit order. Every node may run it: a second abort
 * of a stream finds it aborted and changes nothing. The same pass drops blob uploads begun longer
 * than {@code waterline.blobs.upload-timeout} ago and never finished (a client or node that went
 * away mid-upload); the removal of their parts is queued with them (V8).
 */
@Component
class IdleStreams implements SmartLifecycle {

    static final String LOOP = "stream_idle";
    private static final AppendRequest.Reply QUIET = new AppendRequest.Reply() {
        @Override
        public void done(StreamView stream) {
            // the abort is counted by the appender, and reaches the stream's subscribers as its state
        }

        @Override
        public void refused(Refusal why) {
            // a queue that is full or a database that is down: the next pass tries again
        }
    };

    private final StreamProperties properties;
    private final BlobProperties blobs;
    private final StreamRepository store;
    private final Streams streams;
    private final Loops loops;
    private volatile boolean running;
    private Thread thread;

    IdleStreams(StreamProperties properties, BlobProperties blobs, StreamRepository store, Streams streams, Loops loops) {
        this.properties = properties;
        this.blobs = blobs;
        this.store = store;
        this.streams = streams;
        this.loops = loops;
    }

    /** One pass: how many idle streams it asked to abort. */
    int pass() {
        List<String> idle = store.idle(properties.idleTimeout().toMillis(), 1000);
        idle.forEach(id -> streams.submit(AppendRequest.idleAbort(id, QUIET)));
        store.dropAbandonedUploads(blobs.uploadTimeout().toMillis(), 1000);
        return idle.size();
    }

    @Override
    public void start() {
        running = true;
        thread = loops.start(LOOP, "stream-idle", () -> running, () -> {
            LockSupport.parkNanos(properties.idleCheckInterval().toNanos());
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
