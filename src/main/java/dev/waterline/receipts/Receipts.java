package dev.waterline.receipts;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;

import dev.waterline.lifecycle.Workers;
import dev.waterline.session.ClientSession;
import dev.waterline.session.Frames;
import dev.waterline.session.SessionRegistry;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.context.SmartLifecycle;
import org.springframework.dao.DataAccessException;
import org.springframework.transaction.TransactionException;
import org.springframework.stereotype.Component;

/**
 * Group-commits read receipts and pushes them to the other members.
 *
 * <p>Loop (one virtual thread): take a receipt, gather up to {@code batch-size} within
 * {@code linger}, keep the highest seq per (chat, user), upsert them in one transaction, then
 * push a {@code read} frame to every other connected member of each chat. A receipt for a chat
 * the sender is not a member of is answered {@code not_found}. On a database error the batch's
 * senders get {@code unavailable}; receipts are cumulative, so the next one repairs it. Stops with
 * the context after draining the queue.
 */
@Component
public class Receipts implements SmartLifecycle {

    private static final Log log = LogFactory.getLog(Receipts.class);

    private final ReceiptProperties properties;
    private final ReceiptRepository repository;
    private final SessionRegistry sessions;
    private final BlockingQueue<ReadRequest> queue;
    private volatile boolean running;
    private Thread thread;

    Receipts(ReceiptProperties properties, ReceiptRepository repository, SessionRegistry sessions) {
        this.properties = properties;
        this.repository = repository;
        this.sessions = sessions;
        this.queue = new ArrayBlockingQueue<>(properties.queueSize());
    }

    public boolean offer(ReadRequest read) {
        return running && queue.offer(read);
    }

    private void loop() {
        List<ReadRequest> batch = new ArrayList<>();
        while (running || !queue.isEmpty()) {
            try {
                ReadRequest first = queue.poll(100, TimeUnit.MILLISECONDS);
                if (first == null) {
                    continue;
                }
                batch.add(first);
                long deadline = System.nanoTime() + properties.linger().toNanos();
                while (batch.size() < properties.batchSize()) {
                    queue.drainTo(batch, properties.batchSize() - batch.size());
                    long left = deadline - System.nanoTime();
                    if (batch.size() >= properties.batchSize() || left <= 0) {
                        break;
                    }
                    ReadRequest next = queue.poll(left, TimeUnit.NANOSECONDS);
                    if (next == null) {
                        break;
                    }
                    batch.add(next);
                }
                commit(batch);
            }
            catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
            catch (RuntimeException e) {
                log.warn("read receipt batch failed: " + e);
            }
            finally {
                batch.clear();
            }
        }
    }

    void commit(List<ReadRequest> batch) {
        Map<String, ReadRequest> highest = new LinkedHashMap<>();
        for (ReadRequest r : batch) {
            highest.merge(r.chatId() + '\u0000' + r.from().userId(), r, (a, b) -> a.seq() >= b.seq() ? a : b);
        }
        List<ReadRequest> reads = List.copyOf(highest.values());
        ReceiptRepository.Result result;
        try {
            result = repository.store(reads);
        }
        catch (DataAccessException | TransactionException e) {
            for (ReadRequest r : batch) {
                r.from().send(Frames.error("unavailable", "the database could not be reached; read receipt not stored", null));
            }
            return;
        }
        Set<String> stored = new HashSet<>();
        for (ReceiptRepository.Stored s : result.stored()) {
            stored.add(s.chatId() + '\u0000' + s.userId());
            String frame = Frames.read(s.chatId(), s.userId(), s.seq());
            for (String member : result.members().getOrDefault(s.chatId(), List.of())) {
                ClientSession to = member.equals(s.userId()) ? null : sessions.get(member);
                if (to != null) {
                    to.send(frame);
                }
            }
        }
        for (ReadRequest r : reads) {
            if (!stored.contains(r.chatId() + '\u0000' + r.from().userId())) {
                r.from().send(Frames.error("not_found", "no such chat", null));
            }
        }
    }

    @Override
    public void start() {
        running = true;
        thread = Thread.ofVirtual().name("read-receipts").start(this::loop);
    }

    @Override
    public void stop() {
        running = false;
        Workers.stop(thread, Duration.ofSeconds(5));
    }

    @Override
    public boolean isRunning() {
        return running;
    }

    @Override
    public int getPhase() {
        return Integer.MAX_VALUE;
    }
}
