package dev.waterline.typing;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;

import dev.waterline.ingest.Ingest;
import dev.waterline.lifecycle.Batches;
import dev.waterline.lifecycle.Loops;
import dev.waterline.lifecycle.Workers;
import dev.waterline.metrics.WaterlineMetrics;
import dev.waterline.presence.NodeBus;
import dev.waterline.presence.Presence;
import dev.waterline.session.ClientSession;
import dev.waterline.session.Frames;
import dev.waterline.session.SessionRegistry;
import io.micrometer.core.instrument.Counter;
import org.springframework.context.SmartLifecycle;
import org.springframework.stereotype.Component;

/**
 * Pushes typing indicators to the other members of a chat (PROTOCOL.md §10).
 *
 * <p>Admission ({@link #admit}, on the connection's reading thread): {@link TypingGate} coalesces a
 * burst, sheds while the group commit is behind ({@link Ingest#pressure}) and charges the
 * connection's rate; then the frame takes a place in a bounded queue (full: shed).
 *
 * <p>Loop (one loop of {@link Loops}): gather up to {@code batch-size} frames within
 * {@code linger}, read the members of their chats in one query, answer {@code not_found} to a
 * sender who is not a member, and push {@code {"type":"typing","chatId","userId"}} to every other
 * member: on this node directly, unless its connection already holds {@code shed-at-backlog-chars}
 * unwritten (shed for that recipient; a recipient on another node is written there without this
 * check), elsewhere through the node bus to the node presence names. Nothing is stored. A database
 * or Redis error drops what it touches (counted as {@code unavailable} and in the loop's errors): a typing indicator is worth nothing a second later, so it is never retried.
 * Every drop is counted in {@code waterline_typing_dropped_total{reason}}.
 */
@Component
public class Typing implements SmartLifecycle {

    static final String LOOP = "typing";

    /** Why a typing frame or push was dropped: the tag values of {@code waterline_typing_dropped_total}. */
    enum Dropped {
        COALESCED, PRESSURE, RATE, QUEUE, BACKLOG, UNAVAILABLE;

        String tag() {
            return name().toLowerCase(java.util.Locale.ROOT);
        }
    }

    /** What {@link #admit} decided. */
    enum Admitted { QUEUED, DROPPED, STOPPING }

    private final TypingProperties properties;
    private final TypingRepository repository;
    private final SessionRegistry sessions;
    private final Presence presence;
    private final NodeBus bus;
    private final Loops loops;
    private final TypingGate gate;
    private final BlockingQueue<TypingRequest> queue;
    private final List<TypingRequest> batch = new ArrayList<>();
    private final Map<Dropped, Counter> dropped = new LinkedHashMap<>();
    private final Counter pushed;
    private volatile boolean running;
    private long prunedAt = System.nanoTime();
    private Thread thread;

    Typing(TypingProperties properties, TypingRepository repository, SessionRegistry sessions, Presence presence,
           NodeBus bus, Ingest ingest, WaterlineMetrics metrics, Loops loops) {
        this.properties = properties;
        this.repository = repository;
        this.sessions = sessions;
        this.presence = presence;
        this.bus = bus;
        this.loops = loops;
        this.gate = new TypingGate(properties.interval(), properties.shedAtPressure(), ingest::pressure, System::nanoTime);
        this.queue = new ArrayBlockingQueue<>(properties.queueSize());
        for (Dropped d : Dropped.values()) {
            dropped.put(d, metrics.counter("waterline.typing.dropped",
                    "typing frames or pushes dropped: coalesced into an earlier one, or shed (pressure, rate, queue, backlog, unavailable)",
                    "reason", d.tag()));
        }
        this.pushed = metrics.counter("waterline.typing.pushed", "typing frames pushed to a member (on this node or handed to another)");
        metrics.gauge("waterline.typing.queue.depth", "typing frames waiting for their chat's members", queue::size);
        loops.declare(LOOP);
    }

    /** Admits one {@code typing} frame of {@code from} for {@code chatId} ({@link TypingGate}), then queues it. */
    Admitted admit(ClientSession from, String chatId) {
        if (!running) {
            return Admitted.STOPPING;
        }
        Dropped why = switch (gate.admit(from, chatId)) {
            case ADMITTED -> offer(new TypingRequest(from, chatId)) ? null : Dropped.QUEUE;
            case COALESCED -> Dropped.COALESCED;
            case PRESSURE -> Dropped.PRESSURE;
            case RATE -> Dropped.RATE;
        };
        if (why == null) {
            return Admitted.QUEUED;
        }
        if (why == Dropped.QUEUE && !running) {
            return Admitted.STOPPING;
        }
        dropped.get(why).increment();
        return Admitted.DROPPED;
    }

    /** Queues a frame; false when the queue is full or {@link #stop} took the queue meanwhile (see Receipts.offer). */
    private boolean offer(TypingRequest r) {
        if (!queue.offer(r)) {
            return false;
        }
        return running || !queue.remove(r);
    }

    private void step() throws InterruptedException {
        try {
            if (Batches.gather(queue, batch, properties.batchSize(), properties.linger().toNanos(), 100)) {
                push(batch);
            }
            prune();
        }
        finally {
            batch.clear();
        }
    }

    /** The gate forgets old typists at most once per interval. */
    private void prune() {
        long now = System.nanoTime();
        if (now - prunedAt >= properties.interval().toNanos()) {
            prunedAt = now;
            gate.prune();
        }
    }

    void push(List<TypingRequest> batch) {
        Set<String> chats = new LinkedHashSet<>();
        batch.forEach(r -> chats.add(r.chatId()));
        Map<String, List<String>> members;
        try {
            members = repository.members(chats.toArray(String[]::new));
        }
        catch (RuntimeException e) {
            loops.failed(LOOP, batch.size() + " typing frames dropped: their chats' members could not be read", e);
            dropped.get(Dropped.UNAVAILABLE).increment(batch.size());
            return;
        }
        boolean othersMayHold = presence.othersMayHold();
        Map<String, List<String>> elsewhere = new LinkedHashMap<>();   // member on another node → frames
        for (TypingRequest r : batch) {
            List<String> of = members.getOrDefault(r.chatId(), List.of());
            String typist = r.from().userId();
            if (!of.contains(typist)) {
                gate.forget(r.from(), r.chatId());
                r.from().send(Frames.error("not_found", "no such chat", null));
                continue;
            }
            String frame = Frames.typing(r.chatId(), typist);
            for (String member : of) {
                if (member.equals(typist)) {
                    continue;
                }
                ClientSession to = sessions.get(member);
                if (to != null) {
                    if (to.queuedChars() >= properties.shedAtBacklogChars()) {
                        dropped.get(Dropped.BACKLOG).increment();
                    }
                    else if (to.send(frame)) {
                        pushed.increment();
                    }
                    else {
                        dropped.get(Dropped.UNAVAILABLE).increment();   // the connection is closing
                    }
                }
                else if (othersMayHold) {
                    elsewhere.computeIfAbsent(member, k -> new ArrayList<>()).add(frame);
                }
            }
        }
        if (!elsewhere.isEmpty()) {
            try {
                presence.elsewhere(elsewhere.keySet()).forEach((member, where) -> elsewhere.get(member).forEach(frame -> {
                    bus.send(where, frame);
                    pushed.increment();
                }));
            }
            catch (RuntimeException e) {
                loops.failed(LOOP, "typing frames for members on other nodes dropped: they could not be located or handed over", e);
                dropped.get(Dropped.UNAVAILABLE).increment(elsewhere.values().stream().mapToInt(List::size).sum());
            }
        }
    }

    @Override
    public void start() {
        running = true;
        thread = loops.start(LOOP, "typing", () -> running, this::step);
    }

    /** Stops taking typing frames and drops what is queued: nobody waits for an answer to one. */
    @Override
    public void stop() {
        running = false;
        Workers.stop(thread, Duration.ofSeconds(2));
        List<TypingRequest> left = new ArrayList<>();
        queue.drainTo(left);
        dropped.get(Dropped.UNAVAILABLE).increment(left.size());
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
