package dev.waterline.reclaim;

import java.time.Duration;
import java.util.OptionalLong;
import java.util.concurrent.locks.LockSupport;

import dev.waterline.lifecycle.Loops;
import dev.waterline.lifecycle.Workers;
import dev.waterline.watermark.MarkerStore;
import org.springframework.context.SmartLifecycle;
import org.springframework.stereotype.Component;

/**
 * Outbox GC ("Tetris"): deletes the outbox prefix below the safe-delete line, and keeps this
 * node's part of the Redis index whole.
 *
 * <p>Loop (one virtual thread on every node, every {@code interval}): one {@link #pass()}: on the
 * node that holds the lease ({@link Leadership}: always, in the single-node mode) the leader's part,
 * then on every node its own part.
 *
 * <p><b>The leader's part.</b> PostgreSQL holds the marker token and the index's generation, and so
 * does Redis. If Redis holds others (it lost or rolled back data, or never had them), or a node
 * was declared dead (presence sweeps nodes whose heartbeats stopped: their connections are
 * withdrawn, never acked; what they committed but did not hand over is in the outbox), or a node
 * asked for it (it suspects it missed a write), the leader starts a new generation: PostgreSQL
 * first, then Redis, then it forgets pins of users on no live node. Every node then rebuilds its
 * part, and nothing is deleted until every live node trusts the index under the new generation.
 * Otherwise, if every live node trusts it, the leader reads the line (the lowest pin over every
 * connected client, or the outbox head when no one holds a pin: offline recipients hold nothing
 * down), moves the marker on with a compare-and-set (a Redis flushed or rolled back since the
 * first read fails it, and nothing is deleted), asks once more whether every node trusts the index
 * (a suspicion may have arisen while the pins were read), renews its word to the pollers that
 * every node does (the cluster: {@code wl:alltrusted}), and deletes, in bounded chunks and id
 * order, rows below the line that are older than the grace; then the age backstop deletes rows
 * past the outbox retention whatever the line. Every write to PostgreSQL is fenced by the lease's
 * epoch: a leader that lost its lease writes nothing.
 *
 * <p><b>Every node's part.</b> When this node does not trust its part under the current
 * generation: if it suspects it missed a write since it last asked, it asks the leader for a new
 * generation (what it missed may concern any node's clients) and waits for it; otherwise it
 * rebuilds its part from a full scan of the outbox ({@link #rebuild}) and trusts it.
 *
 * <p>One job per class: {@link Generations} watches the generations (and the trust of every
 * node), {@link OutboxGc} moves the marker and deletes, {@link IndexRebuild} keeps this node's
 * part whole; their decisions are pure functions ({@link Generations#whyNew},
 * {@link OutboxGc#line}, {@link OutboxGc#inChunks}, {@link IndexRebuild#next}). This class is the
 * loop and the order of a pass.
 *
 * <p>On any error (Redis or PostgreSQL) the pass stops where it is (logged and counted by
 * {@link Loops}, {@code reclaim}); nothing is deleted after an error, and a Redis error before the
 * deletes means nothing is deleted at all. Stops with the context (resigning the lease). Keeps I2:
 * a row goes only when no connected client anywhere has it pending or owed, so its recipient acked
 * it, was withdrawn, or was never connected to get it live (and recovers it from history). What
 * the marker cannot see is a Redis that loses writes made after the current token while keeping
 * it, within one interval; the grace bounds which rows that could touch.
 */
@Component
public class Reclaim implements SmartLifecycle {

    static final String LOOP = "reclaim";

    private final ReclaimProperties properties;
    private final Generations generations;
    private final OutboxGc gc;
    private final IndexRebuild index;
    private final Leadership leadership;
    private final Loops loops;
    private volatile boolean running;
    private Thread thread;

    Reclaim(ReclaimProperties properties, Generations generations, OutboxGc gc, IndexRebuild index, Leadership leadership, Loops loops) {
        this.properties = properties;
        this.generations = generations;
        this.gc = gc;
        this.index = index;
        this.leadership = leadership;
        this.loops = loops;
    }

    /** One pass: the leader's part where this node leads, then this node's own. Returns rows deleted. */
    public long pass() {
        // Redis first: a leader cut off from Redis must not keep its lease (renewed here every
        // pass) while it can do none of the leader's work; it lets the lease run out instead
        generations.held();
        long epoch = leadership.lead();
        long deleted = epoch >= 0 ? lead(epoch) : 0;
        index.keep();
        if (epoch < 0) {
            gc.refreshFloor();   // the leader deletes; claims here start past what it deleted
        }
        return deleted;
    }

    /** The leader's part of a pass (see the class note). */
    private long lead(long epoch) {
        MarkerStore.Marker m = generations.standing(epoch);
        if (m == null) {
            return 0;   // a new generation: every node rebuilds before anything is deleted
        }
        if (!generations.everyNodeTrusts(m.generation())) {
            generations.notAllTrusted();
            return 0;
        }
        OptionalLong line = gc.moveMarker(epoch, m);
        // asked once more: a suspicion may have arisen while the pins were read
        if (line.isEmpty() || !generations.everyNodeTrusts(m.generation())) {
            return 0;
        }
        generations.vouch(m.generation());
        return gc.delete(epoch, line.getAsLong());
    }

    /** Rebuilds this node's part of the index under {@code generation} (see {@link IndexRebuild#rebuild}). */
    void rebuild(long generation) {
        index.rebuild(generation);
    }

    /** One pass, then the interval. A pass that fails stops where it is (nothing more deleted) and is counted. */
    private void step() {
        try {
            pass();
        }
        finally {
            LockSupport.parkNanos(properties.interval().toNanos());
        }
    }

    @Override
    public void start() {
        running = true;
        if (properties.enabled()) {
            thread = loops.start(LOOP, "outbox-reclaim", () -> running, this::step);
        }
    }

    @Override
    public void stop() {
        running = false;
        Workers.stop(thread, Duration.ofSeconds(5));
        loops.pass(LOOP, leadership::resign);
    }

    @Override
    public boolean isRunning() {
        return running;
    }

    @Override
    public int getPhase() {
        return Integer.MAX_VALUE - 200;
    }
}
