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

import dev.waterline.lifecycle.Batches;
import dev.waterline.lifecycle.Failures;
import dev.waterline.lifecycle.Isolation;
import dev.waterline.lifecycle.Loops;
import dev.waterline.lifecycle.Workers;
import dev.waterline.metrics.WaterlineMetrics;
import dev.waterline.presence.NodeBus;
import dev.waterline.presence.Presence;
import dev.waterline.session.ClientSession;
import dev.waterline.session.Frames;
import dev.waterline.session.SessionRegistry;
import org.springframework.context.SmartLifecycle;
import org.springframework.stereotype.Component;

/**
 * Group-commits read receipts and pushes them to the other members.
 *
 * <p>Loop (one loop of {@link Loops}): gather up to {@code batch-size} receipts within
 * {@code linger} ({@link Batches}), keep the highest seq per (chat, user), upsert them in one
 * transaction, then push a {@code read} frame to every other connected member of each chat whose
 * receipt moved (on another node, through presence). A receipt that does not raise the reader's {@code readSeq} is neither stored nor
 * pushed (a client repeating one receipt must not make every member's socket busy). A receipt for
 * a chat the sender is not a member of is answered {@code not_found}. On a database error the
 * batch's senders get {@code unavailable}; receipts are cumulative, so the next one repairs it.
 * Any other failure is isolated to the receipt that causes it ({@link Isolation}: answered
 * {@code invalid}, counted in {@code waterline_batch_poisoned_total{writer="receipts"}}), so one
 * client's receipt never fails another's. Stops with the context after draining the queue.
 */
@Component
public class Receipts implements SmartLifecycle {

    static final String LOOP = "receipts";

    private final ReceiptProperties properties;
    private final ReceiptRepository repository;
    private final SessionRegistry sessions;
    private final Presence presence;
    private final NodeBus bus;
    private final WaterlineMetrics metrics;
    private final Loops loops;
    private final BlockingQueue<ReadRequest> queue;
    private final List<ReadRequest> batch = new ArrayList<>();
    private volatile boolean running;
    private Thread thread;

    Receipts(ReceiptProperties properties, ReceiptRepository repository, SessionRegistry sessions, Presence presence,
             NodeBus bus, WaterlineMetrics metrics, Loops loops) {
        this.presence = presence;
        this.bus = bus;
        this.properties = properties;
        this.repository = repository;
        this.sessions = sessions;
        this.metrics = metrics;
        this.loops = loops;
        this.queue = new ArrayBlockingQueue<>(properties.queueSize());
        metrics.poisoned(LOOP);
    }

    /** Queues a receipt; false when the queue is full or the service is stopping (the caller answers). */
    public boolean offer(ReadRequest read) {
        if (!running || !queue.offer(read)) {
            return false;
        }
        // stop() may have taken the queue's rest between the check and the offer (see Ingest.offer)
        return running || !queue.remove(read);
    }

    private void step() throws InterruptedException {
        try {
            if (Batches.gather(queue, batch, properties.batchSize(), properties.linger().toNanos(), 100)) {
                commit(batch);
            }
        }
        finally {
            batch.clear();
        }
    }

    void commit(List<ReadRequest> batch) {
        Map<String, ReadRequest> highest = new LinkedHashMap<>();
        for (ReadRequest r : batch) {
            highest.merge(r.chatId() + '\u0000' + r.from().userId(), r, (a, b) -> a.seq() >= b.seq() ? a : b);
        }
        int poisoned = Isolation.commit(List.copyOf(highest.values()), this::store, (r, e) -> {
            loops.failed(LOOP, "a read receipt of " + r.from().userId() + " for chat " + r.chatId()
                    + " failed its batch alone and is refused as invalid", e);
            r.from().send(Frames.error("invalid", "the read receipt could not be stored", null));
        });
        if (poisoned > 0) {
            metrics.poisoned(LOOP).increment(poisoned);
        }
    }

    /** Stores and pushes these receipts; throws only for a failure one of them may cause. */
    private void store(List<ReadRequest> reads) {
        ReceiptRepository.Result result;
        try {
            result = repository.store(reads);
        }
        catch (RuntimeException e) {
            if (Failures.causedByItem(e)) {
                throw e;
            }
            loops.failed(LOOP, reads.size() + " read receipts not stored (unavailable)", e);
            for (ReadRequest r : reads) {
                r.from().send(Frames.error("unavailable", "the database could not be reached; read receipt not stored", null));
            }
            return;
        }
        try {
            Set<String> members = new HashSet<>();
            Map<String, List<String>> elsewhere = new LinkedHashMap<>();   // member on another node → frames
            boolean othersMayHold = presence.othersMayHold();
            for (ReceiptRepository.Stored s : result.stored()) {
                members.add(s.chatId() + '\u0000' + s.userId());
                if (!s.raised()) {
                    continue;
                }
                String frame = Frames.read(s.chatId(), s.userId(), s.seq());
                for (String member : result.members().getOrDefault(s.chatId(), List.of())) {
                    if (member.equals(s.userId())) {
                        continue;
                    }
                    ClientSession to = sessions.get(member);
                    if (to != null) {
                        to.send(frame);
                    }
                    else if (othersMayHold) {
                        elsewhere.computeIfAbsent(member, k -> new ArrayList<>()).add(frame);
                    }
                }
            }
            for (ReadRequest r : reads) {
                if (!members.contains(r.chatId() + '\u0000' + r.from().userId())) {
                    r.from().send(Frames.error("not_found", "no such chat", null));
                }
            }
            if (!elsewhere.isEmpty()) {
                presence.elsewhere(elsewhere.keySet()).forEach((member, where) -> elsewhere.get(member)
                        .forEach(frame -> bus.send(where, frame)));
            }
        }
        catch (RuntimeException e) {
            // stored already: a retry would store nothing new, so the failure is only counted
            loops.failed(LOOP, e);
        }
    }

    @Override
    public void start() {
        running = true;
        thread = loops.start(LOOP, "read-receipts", () -> running || !queue.isEmpty(), this::step);
    }

    /**
     * Stops taking receipts (a new one is answered {@code unavailable}), lets the loop store what
     * is queued for up to 5 s, and answers what is still queued then {@code unavailable}.
     */
    @Override
    public void stop() {
        running = false;
        Workers.stop(thread, Duration.ofSeconds(5));
        List<ReadRequest> left = new ArrayList<>();
        queue.drainTo(left);
        for (ReadRequest r : left) {
            r.from().send(Frames.error("unavailable", "the server is shutting down; read receipt not stored", null));
        }
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
