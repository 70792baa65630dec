package dev.waterline.ingest;

import java.time.Duration;
import java.time.Clock;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;

import dev.waterline.lifecycle.Workers;
import dev.waterline.delivery.DeliveryProperties;
import dev.waterline.delivery.FastPath;
import dev.waterline.metrics.WaterlineMetrics;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.context.SmartLifecycle;
import org.springframework.dao.DataAccessException;
import org.springframework.transaction.TransactionException;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.stereotype.Component;

/**
 * The inbound queue and its group-commit writers.
 *
 * <p>Loop ({@code writers} virtual threads, each draining its own share of the bounded queue,
 * sharded by chat so that a chat's sends commit in arrival order): take one send, then gather more until the batch
 * holds {@code batch-size} or {@code linger} has passed since the first (under load the queue
 * already holds a full batch, so batches grow with load without waiting); collapse sends that
 * share a (sender, correlationId); commit the batch in one transaction; only then answer every
 * send and hand the outbox rows to the fast path. A batch that lost an idempotency race to a
 * concurrent batch is retried whole (the retry finds the key and answers with the original).
 * When the database cannot be reached, every send of the batch is answered {@code unavailable}
 * and nothing of it is written (the transaction rolls back). Stops first of all at shutdown:
 * new sends are answered {@code overloaded}, writers drain and answer what is queued, and only
 * then does the gateway close the sockets.
 */
@Component
public class Ingest implements SmartLifecycle {

    private static final Log log = LogFactory.getLog(Ingest.class);

    private final InboundProperties properties;
    private final DeliveryProperties delivery;
    private final IngestRepository repository;
    private final FastPath fastPath;
    private final WaterlineMetrics metrics;
    private final Clock clock;
    private final List<BlockingQueue<SendRequest>> queues = new ArrayList<>();
    private final List<Thread> writers = new ArrayList<>();
    private volatile boolean running;

    Ingest(InboundProperties properties, DeliveryProperties delivery, IngestRepository repository, FastPath fastPath,
           WaterlineMetrics metrics, Clock clock) {
        this.properties = properties;
        this.delivery = delivery;
        this.repository = repository;
        this.fastPath = fastPath;
        this.metrics = metrics;
        this.clock = clock;
        int perWriter = Math.max(1, properties.queueSize() / properties.writers());
        for (int i = 0; i < properties.writers(); i++) {
            queues.add(new ArrayBlockingQueue<>(perWriter));
        }
        metrics.gauge("waterline.inbound.queue.depth", "sends waiting to be persisted",
                () -> queues.stream().mapToInt(BlockingQueue::size).sum());
    }

    /**
     * Enqueues a send; false when its queue is full (the caller answers {@code overloaded}) or
     * the service is stopping. Each chat always goes to the same writer, so one client's sends to
     * a chat are committed (and numbered) in the order it sent them.
     */
    public boolean offer(SendRequest send) {
        return running && queues.get(Math.floorMod(send.chatId().hashCode(), queues.size())).offer(send);
    }

    private void write(BlockingQueue<SendRequest> queue) {
        List<SendRequest> batch = new ArrayList<>(properties.batchSize());
        long linger = properties.linger().toNanos();
        while (running || !queue.isEmpty()) {
            try {
                SendRequest first = queue.poll(100, TimeUnit.MILLISECONDS);
                if (first == null) {
                    continue;
                }
                batch.add(first);
                long deadline = System.nanoTime() + linger;
                while (batch.size() < properties.batchSize()) {
                    queue.drainTo(batch, properties.batchSize() - batch.size());
                    long left = deadline - System.nanoTime();
                    if (batch.size() >= properties.batchSize() || left <= 0) {
                        break;
                    }
                    SendRequest next = queue.poll(left, TimeUnit.NANOSECONDS);
                    if (next == null) {
                        break;
                    }
                    batch.add(next);
                }
                persist(batch);
            }
            catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
            catch (RuntimeException e) {
                log.error("group commit failed unexpectedly", e);
                batch.forEach(s -> s.reply().rejected("unavailable", "the message was not accepted"));
            }
            finally {
                batch.clear();
            }
        }
    }

    /** Commits one batch and answers every send in it. */
    void persist(List<SendRequest> batch) {
        Map<SendRequest.Key, List<SendRequest>> byKey = new LinkedHashMap<>();
        for (SendRequest s : batch) {
            byKey.computeIfAbsent(s.key(), k -> new ArrayList<>()).add(s);
        }
        List<SendRequest> primaries = byKey.values().stream().map(l -> l.getFirst()).toList();
        IngestRepository.Result result = null;
        for (int attempt = 1; result == null; attempt++) {
            try {
                Instant now = clock.instant().truncatedTo(ChronoUnit.MICROS);
                long t0 = System.nanoTime();
                result = repository.commit(primaries, now, properties.idempotencyWindow(), delivery.lease());
                metrics.batchCommitted(primaries.size(), System.nanoTime() - t0);
            }
            catch (IngestRepository.KeyTaken e) {
                if (attempt >= properties.retries()) {
                    rejectAll(batch, "unavailable", "the message was not accepted, retry it");
                    return;
                }
            }
            catch (DataAccessException | TransactionException e) {
                log.warn("database unavailable, " + batch.size() + " sends not accepted: " + e.getMessage());
                rejectAll(batch, "unavailable", "the database could not be reached; the message was not accepted");
                return;
            }
        }
        int created = 0;
        for (var e : byKey.entrySet()) {
            IngestRepository.Outcome outcome = result.outcomes().get(e.getKey());
            for (SendRequest s : e.getValue()) {
                if (outcome instanceof IngestRepository.Accepted a) {
                    s.reply().accepted(a.messageId(), a.chatId(), a.seq(), a.sentAt());
                }
                else {
                    s.reply().rejected("not_found", "no such chat");
                }
            }
            if (outcome instanceof IngestRepository.Accepted a && !a.replay()) {
                created++;
            }
        }
        metrics.accepted(created);
        fastPath.offer(result.rows());
    }

    private static void rejectAll(List<SendRequest> batch, String code, String message) {
        batch.forEach(s -> s.reply().rejected(code, message));
    }

    /** Drops idempotency keys past the window, so a reused correlationId then makes a new message. */
    @Scheduled(fixedDelayString = "${waterline.retention.purge-interval:1m}", initialDelayString = "${waterline.retention.purge-interval:1m}")
    void purgeExpiredKeys() {
        try {
            Instant cutoff = clock.instant().minus(properties.idempotencyWindow());
            while (repository.purgeKeysOlderThan(cutoff, 10_000) == 10_000) {
                // next chunk
            }
        }
        catch (RuntimeException e) {
            log.warn("idempotency key purge failed, retrying next run: " + e.getMessage());
        }
    }

    @Override
    public void start() {
        running = true;
        for (int i = 0; i < properties.writers(); i++) {
            BlockingQueue<SendRequest> queue = queues.get(i);
            writers.add(Thread.ofVirtual().name("group-commit-" + i).start(() -> write(queue)));
        }
    }

    @Override
    public void stop() {
        running = false;
        Workers.stop(writers, Duration.ofSeconds(10));
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
