package dev.waterline.streams;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;

import dev.waterline.lifecycle.Batches;
import dev.waterline.lifecycle.Failures;
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
 * order). A step gathers a batch ({@link Batches}) and commits it in one transaction
 * ({@link AppendStore}: lock the batch's stream rows in id order, read their {@code last_seq} and
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
    private final AppendStore store;
    private final Loops loops;
    private final Tails tails;
    private final StreamSignals signals;
    private final ChunkPartitions partitions;
    private final StreamMetrics metrics;
    private final ShardedQueues<AppendRequest> queues;
    private final List<Thread> writers = new ArrayList<>();
    private List<Thread> previous = List.of();
    private volatile boolean running;

    Appender(StreamProperties properties, AppendStore store, Loops loops, Tails tails, StreamSignals signals,
             ChunkPartitions partitions, StreamMetrics metrics, WaterlineMetrics waterline) {
        this.properties = properties;
        this.store = store;
        this.loops = loops;
        this.tails = tails;
        this.signals = signals;
        this.partitions = partitions;
        this.metrics = metrics;
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
                persist(batch);
            }
        }
        finally {
            batch.clear();
        }
    }

    void persist(List<AppendRequest> batch) {
        int poisoned = Isolation.commit(new ArrayList<>(batch), this::commit, (r, e) -> {
            loops.failed(LOOP, "a request to stream " + r.streamId() + " failed its group commit alone and is refused as invalid", e);
            answer(r, Refusal.invalid("the request could not be stored; nothing of it was"));
        });
        if (poisoned > 0) {
            metrics.poisoned(poisoned);
        }
    }

    /** Commits the requests and answers them; throws only for a failure one of them may have caused. */
    private void commit(List<AppendRequest> requests) {
        AppendStore.Outcome outcome;
        try {
            outcome = store.commit(requests);
        }
        catch (RuntimeException e) {
            if (ChunkPartitions.missingPartition(e)) {
                partitions.wake();
                loops.failed(LOOP, "no partition of stream_chunks for now: " + requests.size() + " requests refused (unavailable)", e);
                refuseAll(requests, Refusal.unavailable("the server is not ready to store chunks; nothing stored, retry"));
                return;
            }
            if (Failures.causedByItem(e)) {
                throw e;
            }
            loops.failed(LOOP, requests.size() + " stream requests refused (unavailable)", e);
            refuseAll(requests, Refusal.unavailable(Failures.infrastructure(e)
                    ? "the database could not be reached; nothing stored" : "the server could not store this; nothing stored, retry"));
            return;
        }
        long committedAt = System.currentTimeMillis();
        // Committed: nothing from here on may throw back into the isolation (it would commit again).
        for (int i = 0; i < requests.size(); i++) {
            AppendRequest r = requests.get(i);
            switch (outcome.answers().get(i)) {
                case AppendDecider.Refused(Refusal why) -> answer(r, why);
                case AppendDecider.Done(StreamView view) -> {
                    try {
                        r.reply().done(view);
                    }
                    catch (RuntimeException e) {
                        loops.failed(LOOP, "answering a stream request", e);
                    }
                    metrics.answered(r, System.nanoTime() - r.receivedNanos());
                }
            }
        }
        metrics.stored(outcome.stored(), outcome.closed());
        if (!outcome.changes().isEmpty()) {
            List<Change> changes = new ArrayList<>(outcome.changes().size());
            for (Change c : outcome.changes()) {
                changes.add(c.committedAt(committedAt));
            }
            try {
                tails.committed(changes);
            }
            catch (RuntimeException e) {
                // committed: the tails' poll finds what they were not handed
                loops.failed(LOOP, "handing committed chunks to this node's tails", e);
            }
            try {
                signals.changed(changes.stream().map(c -> new StreamSignals.Signal(c.streamId(), c.lastSeq(), c.state())).toList());
            }
            catch (RuntimeException e) {
                loops.failed(LOOP, "signalling committed chunks to the other nodes", e);
            }
        }
    }

    private void answer(AppendRequest r, Refusal why) {
        metrics.refused(why.code());
        try {
            r.reply().refused(why);
        }
        catch (RuntimeException e) {
            loops.failed(LOOP, "answering a stream request", e);
        }
    }

    private void refuseAll(List<AppendRequest> requests, Refusal why) {
        requests.forEach(r -> answer(r, why));
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
            refuseAll(left, Refusal.unavailable("the server is shutting down; nothing stored, retry"));
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
