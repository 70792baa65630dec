package dev.waterline.streams;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;

import dev.waterline.lifecycle.Batches;
import dev.waterline.lifecycle.Isolation;
import dev.waterline.lifecycle.Loops;
import dev.waterline.lifecycle.ShardedQueues;
import dev.waterline.lifecycle.Workers;
import dev.waterline.metrics.WaterlineMetrics;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.context.SmartLifecycle;
import org.springframework.stereotype.Component;

/**
 * Every change of a stream (appends, completions, aborts), group-committed like sends.
 *
 * <p>Shape: {@code writers} loops of {@link Loops}, each draining its own shard of the bounded
 * queue ({@link ShardedQueues}, sharded by stream so that a stream's requests commit in arrival
 * order). A step gathers a batch ({@link Batches}) and {@link AppendCommits} commits it in one transaction
 * ({@link AppendRepository}: lock the batch's stream rows in id order, read their {@code last_seq} and
 * state, decide every request in arrival order ({@link AppendDecider}), insert the chunks, raise
 * each row's {@code last_seq}); only after the commit does it answer each request and hand the
 * committed chunks over to this node's tails ({@link Tails}) in memory and to the other nodes'
 * ({@link StreamSignals}).
 *
 * <p>Invariants: S1, the seed's pessimistic reservation: no other transaction can append to a
 * locked stream, so its chunks commit in seq order and a reader never sees seq n + 1 before n. A
 * request is stored whole or not at all (S2): it is refused before anything of it is written. A
 * retry of chunks already stored with the same content is acknowledged and writes nothing (S3).
 *
 * <p>Errors: a database that cannot be reached answers the batch {@code unavailable}; a failure of
 * one request's data is split down to it ({@link Isolation}) and that request alone is answered
 * {@code invalid} (counted as poisoned); a chunk whose time has no partition yet (the maintenance
 * loop is behind) answers the batch {@code unavailable} and wakes the maintenance. A failure after
 * the commit (an answer, the hand-over to the tails or the other nodes) is logged and counted by
 * {@link Loops#failed} and never undoes the commit: the tails' poll finds what they were not handed.
 *
 * <p>Stop ({@link #stop}): new requests are refused {@code unavailable}; the writers commit what is
 * queued within the commit timeout; what is left then is answered {@code unavailable}. A restart
 * waits for the last run's writers first, so two batches of one stream never commit out of order.
 */
@Component
class Appender implements SmartLifecycle {

    private static final Log log = LogFactory.getLog(Appender.class);
    static final String LOOP = "stream_append";

    private final StreamProperties properties;
    private final AppendCommits commits;
    private final Loops loops;
    private final ShardedQueues<AppendRequest> queues;
    private final List<Thread> writers = new ArrayList<>();
    private List<Thread> previous = List.of();
    private volatile boolean running;

    Appender(StreamProperties properties, AppendCommits commits, Loops loops, WaterlineMetrics waterline) {
        this.properties = properties;
        this.commits = commits;
        this.loops = loops;
        this.queues = new ShardedQueues<>(properties.writers(), properties.queueSize());
        waterline.gauge("waterline.stream.append.queue.depth", "stream appends and completions waiting to be committed",
                queues::size);
        waterline.poisoned(LOOP);
    }

    /**
     * Queues a request; false when its queue is full (answer {@code overloaded}) or the service is
     * stopping (answer {@code unavailable}). A stream always goes to the same writer.
     */
    boolean offer(AppendRequest request) {
        return queues.offer(request.streamId(), request, () -> running);
    }

    boolean isAccepting() {
        return running;
    }

    private void writeOne(BlockingQueue<AppendRequest> queue, List<AppendRequest> batch) throws InterruptedException {
        try {
            if (Batches.gather(queue, batch, properties.batchSize(), properties.linger().toNanos(), 100)) {
                commits.persist(batch);
            }
        }
        finally {
            batch.clear();
        }
    }

    /** A stream's committed change, for its tails: its new chunks in seq order, and its state after the batch. */
    record Change(String streamId, String createdAt, List<Chunk> chunks, String state, long lastSeq, long committedAtMillis) {

        Change committedAt(long millis) {
            List<Chunk> stamped = new ArrayList<>(chunks.size());
            for (Chunk c : chunks) {
                stamped.add(new Chunk(c.getSeq(), c.getData(), c.getBlobId(), c.getSize(), c.getContentType(), c.getAt(), millis));
            }
            return new Change(streamId, createdAt, stamped, state, lastSeq, millis);
        }
    }

    @Override
    public void start() {
        Workers.joinUntil(previous, System.nanoTime() + properties.commitTimeout().plusSeconds(1).toNanos());
        running = true;
        for (int i = 0; i < queues.shards(); i++) {
            BlockingQueue<AppendRequest> queue = queues.shard(i);
            List<AppendRequest> batch = new ArrayList<>(properties.batchSize());
            writers.add(loops.start(LOOP, "stream-append-" + i, () -> running || !queue.isEmpty(), () -> writeOne(queue, batch)));
        }
    }

    /**
     * Shutdown, like ingest's: new requests are refused {@code unavailable}; the writers commit what
     * is queued within the commit timeout; what is left then is answered {@code unavailable}.
     */
    @Override
    public void stop() {
        running = false;
        Workers.joinUntil(writers, System.nanoTime() + properties.commitTimeout().toNanos());
        List<AppendRequest> left = queues.drain();
        if (!left.isEmpty()) {
            log.warn(left.size() + " queued stream requests not committed at shutdown: answered unavailable");
            commits.refuseAll(left, Refusal.unavailable("the server is shutting down; nothing stored, retry"));
        }
        Workers.joinUntil(writers, System.nanoTime() + properties.commitTimeout().plusSeconds(1).toNanos());
        previous = List.copyOf(writers);
        writers.clear();
    }

    @Override
    public boolean isRunning() {
        return running;
    }

    /** Stops with ingest, before the gateway closes the sockets that wait for the answers. */
    @Override
    public int getPhase() {
        return Integer.MAX_VALUE - 1;
    }
}
