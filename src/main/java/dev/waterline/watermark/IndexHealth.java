package dev.waterline.watermark;

import org.springframework.stereotype.Component;

/**
 * Whether this node may trust its part of the Redis index to be whole right now, and under which
 * generation of the index. It is not trusted from start until this node has rebuilt its part
 * (its own connections, from the outbox) under the current generation, and again from any moment
 * something suggests it may have missed a write (a Redis error in the live path, a connection
 * whose epoch Redis had lost, a delivery it could not hand to another node) until a rebuild that
 * no such suspicion interrupted.
 *
 * <p>A suspicion also wants a new generation: what this node failed to record may concern users
 * connected anywhere (a delivery it could not hand over is for another node's client), so every
 * node must rebuild, not only this one. The reclaim loop asks the leader for one
 * ({@link #newGenerationWanted}, {@link #asked}) and this node rebuilds once it has come. While any
 * node is not trusted, nothing is deleted and no poller retires a row of a connected recipient.
 */
@Component
public class IndexHealth {

    private long suspicions;
    private long trustedGeneration = -1;
    /** {@link #suspicions} when a new generation was last asked for. */
    private long asked;

    /** Something may have gone unrecorded: rebuild (under a new generation) before trusting the index again. */
    public synchronized void suspect() {
        suspicions++;
        trustedGeneration = -1;
    }

    /** The generation this node's part of the index is trusted under, or -1 while it is not trusted. */
    public synchronized long trustedGeneration() {
        return trustedGeneration;
    }

    /** How many suspicions arose so far: a rebuild started after reading this trusts only if none arose meanwhile. */
    public synchronized long suspicions() {
        return suspicions;
    }

    /**
     * Whether a suspicion arose since a new generation was last asked for. A fresh node (never
     * suspicious) wants none: it only rebuilds its part under the current one.
     */
    public synchronized boolean newGenerationWanted() {
        return suspicions > asked;
    }

    /** A new generation was asked for, for every suspicion up to {@code seen} ({@link #suspicions} read before asking). */
    public synchronized void asked(long seen) {
        asked = Math.max(asked, seen);
    }

    /** Trusts the index under {@code generation}, unless a suspicion arose since {@code seen}. */
    public synchronized boolean trust(long generation, long seen) {
        if (suspicions != seen) {
            return false;
        }
        trustedGeneration = generation;
        return true;
    }
}
