package dev.waterline.ingest;

import java.time.Duration;
import java.time.Clock;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
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
 * The inbound queue and its group-commit writers.
 *
 * <p>Loop ({@code writers} loops of {@link Loops}, each draining its own share of the bounded
 * queue ({@link ShardedQueues}), sharded by chat so that a chat's sends commit in arrival order): gather a batch
 * ({@link Batches}: up to {@code batch-size}, or {@code linger} after its first send); collapse
 * sends that share a (sender, correlationId); commit the batch in one transaction; only then
 * answer every send and let each {@link CommitParticipant} hand on what it added (the outbox rows
 * go to the fast path). A batch that lost an
 * idempotency race to a concurrent batch is retried whole (the retry finds the key and answers
 * with the original). When the database cannot be reached, every send of the batch is answered
 * {@code unavailable} and nothing of it is written (the transaction rolls back). Any other
 * failure of a commit is taken to be one send's data (a byte PostgreSQL refuses, a value past a
 * limit): the batch is split and committed again in halves ({@link Isolation}), so that only the
 * send that fails alone is answered {@code invalid} (counted in
 * {@code waterline_batch_poisoned_total{writer="ingest"}}) and every other is committed, in its
 * original order. Stops first of all at shutdown ({@link #stop}): new sends are answered
 * {@code unavailable}, writers drain and answer what is queued, and only then does the gateway
 * close the sockets.
 */
@Component
public class Ingest implements SmartLifecycle {

    private static final Log log = LogFactory.getLog(Ingest.class);
    static final String LOOP = "ingest";

    private final InboundProperties properties;
    private final IngestRepository repository;
    private final WaterlineMetrics metrics;
    private final Loops loops;
    private final Clock clock;
    private final ShardedQueues<SendRequest> queues;
    private final List<Thread> writers = new ArrayList<>();
    private List<Thread> previous = List.of();
    private volatile boolean running;

    Ingest(InboundProperties properties, IngestRepository repository, WaterlineMetrics metrics, Loops loops, Clock clock) {
        this.properties = properties;
        this.repository = repository;
        this.metrics = metrics;
        this.loops = loops;
        this.clock = clock;
        this.queues = new ShardedQueues<>(properties.writers(), properties.queueSize());
        metrics.gauge("waterline.inbound.queue.depth", "sends waiting to be persisted", queues::size);
        metrics.gauge("waterline.inbound.queue.capacity", "sends the inbound queue can hold (for the depth's share)",
                queues::capacity);
        // Each writer has its share of the queue, and a chat always goes to the same one: one hot
        // chat can fill its writer's share (its sends get overloaded) while the whole queue looks
        // half empty. This is what to alert on.
        metrics.gauge("waterline.inbound.queue.fullest.ratio", "the fullest writer's share of the inbound queue, 0 to 1",
                this::pressure);
        metrics.poisoned(LOOP);
    }

    /**
     * How full the fullest writer's share of the inbound queue is, 0 to 1: how far the group commit
     * is behind. Work that may wait (hook deliveries) yields to sends while it is high.
     */
    public double pressure() {
        return queues.fullest();
    }

    /**
     * Enqueues a send; false when its queue is full (the caller answers {@code overloaded}) or
     * the service is stopping (the caller answers {@code unavailable}). Each chat always goes to
     * the same writer, so one client's sends to a chat are committed (and numbered) in the order
     * it sent them.
     */
    public boolean offer(SendRequest send) {
        // stop() may have taken what was queued for the last time between the check and the offer:
        // then the send is taken back and answered by the caller (ShardedQueues.offer).
        return queues.offer(send.chatId(), send, () -> running);
    }

    /** One step of a writer: one batch gathered, committed and answered. */
    private void writeOne(BlockingQueue<SendRequest> queue, List<SendRequest> batch) throws InterruptedException {
        try {
            if (Batches.gather(queue, batch, properties.batchSize(), properties.linger().toNanos(), 100)) {
                persist(batch);
            }
        }
        finally {
            batch.clear();
        }
    }

    /** Commits one batch and answers every send in it, isolating any send that cannot be stored. */
    void persist(List<SendRequest> batch) {
        Map<SendRequest.Key, List<SendRequest>> byKey = new LinkedHashMap<>();
        for (SendRequest s : batch) {
            byKey.computeIfAbsent(s.key(), k -> new ArrayList<>()).add(s);
        }
        int poisoned = Isolation.commit(new ArrayList<>(byKey.values()), this::commit, (sends, e) -> {
            SendRequest s = sends.getFirst();
            loops.failed(LOOP, "a send from " + s.senderId() + " to chat " + s.chatId()
                    + " failed its group commit alone and is refused as invalid; the rest of its batch was committed", e);
            sends.forEach(x -> answer(x, r -> r.rejected("invalid", "the message could not be stored; not accepted")));
        });
        if (poisoned > 0) {
            metrics.poisoned(LOOP).increment(poisoned);
        }
    }

    /**
     * Commits the sends of these keys (each key's first send is the one written; the others of a
     * key are answered alike) and answers them. Throws only for a failure one of them may have
     * caused ({@link Failures#causedByItem}); any other failure answers them all
     * {@code unavailable} here.
     */
    private void commit(List<List<SendRequest>> keys) {
        List<SendRequest> primaries = keys.stream().map(List::getFirst).toList();
        IngestRepository.Result result = null;
        for (int attempt = 1; result == null; attempt++) {
            try {
                Instant now = clock.instant().truncatedTo(ChronoUnit.MICROS);
                long t0 = System.nanoTime();
                result = repository.commit(primaries, now, properties.idempotencyWindow());
                metrics.batchCommitted(primaries.size(), System.nanoTime() - t0);
            }
            catch (IngestRepository.KeyTaken e) {
                if (attempt >= properties.retries()) {
                    rejectAll(keys, "unavailable", "the message was not accepted, retry it");
                    return;
                }
            }
            catch (RuntimeException e) {
                if (Failures.causedByItem(e)) {
                    throw e;
                }
                // an outage, an invariant broken (InvariantBroken) or a bug: no send is blamed
                loops.failed(LOOP, primaries.size() + " sends not accepted (unavailable)", e);
                rejectAll(keys, "unavailable", Failures.infrastructure(e)
                        ? "the database could not be reached; the message was not accepted"
                        : "the server could not store the message; not accepted, retry it");
                return;
            }
        }
        // Committed: from here on nothing may throw back into the isolation (it would commit again).
        int created = 0;
        for (List<SendRequest> sends : keys) {
            IngestRepository.Outcome outcome = result.outcomes().get(sends.getFirst().key());
            for (SendRequest s : sends) {
                switch (outcome) {
                    case IngestRepository.Accepted a when a.unchanged() ->
                            answer(s, r -> r.unchanged(a.messageId(), a.chatId(), a.seq(), a.sentAt()));
                    case IngestRepository.Accepted a -> answer(s, r -> r.accepted(a.messageId(), a.chatId(), a.seq(), a.sentAt()));
                    case IngestRepository.Rejected x -> answer(s, r -> r.rejected(x.code(), x.message()));
                    case IngestRepository.NotFound x -> answer(s, r -> r.rejected("not_found", "no such chat"));
                }
            }
            if (outcome instanceof IngestRepository.Accepted a && !a.replay()) {
                created++;
            }
        }
        metrics.accepted(created);
        for (CommitParticipant.Contribution c : result.contributions()) {
            try {
                c.committed(result.committedAtMillis());
            }
            catch (RuntimeException e) {
                // committed: whatever the participant hands on from here has a way back (the
                // outbox rows: the poller delivers what the fast path did not get)
                loops.failed(LOOP, "a commit participant's hand-off after commit", e);
            }
        }
    }

    /** Answers one send; a reply that fails is counted and logged, and the others are still answered. */
    private void answer(SendRequest s, java.util.function.Consumer<SendReply> how) {
        try {
            how.accept(s.reply());
        }
        catch (RuntimeException e) {
            loops.failed(LOOP, "answering a send of " + s.senderId(), e);
        }
    }

    private void rejectAll(List<List<SendRequest>> keys, String code, String message) {
        keys.forEach(sends -> sends.forEach(s -> answer(s, r -> r.rejected(code, message))));
    }

    @Override
    public void start() {
        // A context stopped and started again (the test framework pauses idle contexts): a writer
        // of the last run still in a transaction must end before new writers share its queue, or
        // two batches of one chat could commit out of order.
        Workers.joinUntil(previous, System.nanoTime() + properties.commitTimeout().plusSeconds(1).toNanos());
        running = true;
        for (int i = 0; i < queues.shards(); i++) {
            BlockingQueue<SendRequest> queue = queues.shard(i);
            List<SendRequest> batch = new ArrayList<>(properties.batchSize());
            writers.add(loops.start(LOOP, "group-commit-" + i, () -> running || !queue.isEmpty(),
                    () -> writeOne(queue, batch)));
        }
    }

    /**
     * Shutdown: new sends are refused ({@code unavailable}: {@link #isRunning} is false); the
     * writers commit what is queued, all within {@code drain-timeout}; whatever is still queued
     * after that (a database too slow to take it) is taken from the queues and answered
     * {@code unavailable}. A writer still inside a transaction then is waited for, up to
     * {@code commit-timeout} (the transaction's own timeout, so it ends by then), and answers its
     * batch itself: {@code accepted} if it committed, {@code unavailable} if it rolled back. So every
     * send is answered, none is half-written (a batch is one transaction), and the gateway closes
     * the sockets only after. A database that stops answering in the middle of a commit leaves
     * that commit's outcome unknown: its sends are answered {@code unavailable}, and a retry with
     * the same correlationId finds the message if the commit did land (I6).
     */
    @Override
    public void stop() {
        running = false;
        Workers.joinUntil(writers, System.nanoTime() + properties.drainTimeout().toNanos());
        List<SendRequest> left = queues.drain();
        if (!left.isEmpty()) {
            log.warn(left.size() + " queued sends not committed within the drain timeout at shutdown: answered unavailable");
            left.forEach(s -> answer(s, r -> r.rejected("unavailable", "the server is shutting down; not accepted, retry")));
        }
        Workers.joinUntil(writers, System.nanoTime() + properties.commitTimeout().plusSeconds(1).toNanos());
        long inFlight = writers.stream().filter(Thread::isAlive).count();
        if (inFlight > 0) {
            log.warn(inFlight + " group-commit writers still in a transaction past the commit timeout at shutdown;"
                    + " their sends are answered when it ends, if the socket is still open");
        }
        previous = List.copyOf(writers);
        writers.clear();
    }

    @Override
    public boolean isRunning() {
        return running;
    }

    /** Stops first: drains and answers what is queued while sockets are still open. */
    @Override
    public int getPhase() {
        return Integer.MAX_VALUE;
    }
}
